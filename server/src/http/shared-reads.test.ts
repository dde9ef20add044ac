/**
 * Identical concurrent reads share one answer, and a shared answer is never one that was computed before
 * the request arrived (http/shared-reads.ts). Driven over a bare Fastify app whose handler counts its runs
 * and can be held open, so that which request computed which answer is known exactly.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Principal } from './principal.js';
import { registerSharedReads, sharedSlots } from './shared-reads.js';

let app: FastifyInstance;
let runs = 0;
/** While set, a handler run waits for it before answering. */
let gate: Promise<void> | null = null;
let open: () => void = () => undefined;

function hold(): void {
  gate = new Promise((resolve) => (open = resolve));
}

const principal = (keyId: string): Principal => ({ kind: 'api_key', keyId, signInId: null, connectionId: null, orgId: 'org', projectId: 'p', scopes: new Set() }) as unknown as Principal;

beforeAll(async () => {
  app = Fastify();
  app.decorateRequest('principal', null as unknown as Principal);
  app.addHook('onRequest', async (req) => {
    req.principal = principal(String(req.headers['x-key'] ?? 'k1'));
  });
  registerSharedReads(app);
  const answer = async (fail: boolean) => {
    const n = ++runs;
    if (gate) await gate;
    if (fail) throw Object.assign(new Error(`failed ${n}`), { statusCode: 409 });
    return { run: n };
  };
  app.get('/shared', { config: { sharedRead: true } }, async (req) => answer((req.query as { fail?: string }).fail === '1'));
  app.post('/shared', { config: { sharedRead: true } }, async () => answer(false));
  app.get('/own', async () => answer(false));
  await app.ready();
});

afterAll(() => app.close());

beforeEach(() => {
  runs = 0;
  gate = null;
});

const get = (url: string, key = 'k1') => app.inject({ method: 'GET', url, headers: { 'x-key': key } });
const body = (r: { body: string }) => JSON.parse(r.body) as { run: number };
/** Lets the requests sent so far reach their handler (or their wait). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('identical concurrent reads share one answer', () => {
  it('a request alone computes its own answer', async () => {
    const r = await get('/shared?a=1');
    expect(r.statusCode).toBe(200);
    expect(body(r)).toEqual({ run: 1 });
    expect(runs).toBe(1);
    expect(sharedSlots.size).toBe(0);
  });

  it('requests arriving while one runs wait for the next run, never take the running one: two runs answer five requests', async () => {
    hold();
    const first = get('/shared?a=2');
    await settle();
    const later = [get('/shared?a=2'), get('/shared?a=2'), get('/shared?a=2'), get('/shared?a=2')];
    await settle();
    expect(runs).toBe(1); // the later ones wait: none takes the answer being computed
    gate = null;
    open();
    const [a, ...rest] = await Promise.all([first, ...later]);
    expect(body(a)).toEqual({ run: 1 });
    for (const r of rest) {
      expect(r.statusCode).toBe(200);
      expect(body(r)).toEqual({ run: 2 }); // computed after each of them arrived
      expect(r.headers['content-type']).toMatch(/^application\/json/);
    }
    expect(runs).toBe(2);
    expect(sharedSlots.size).toBe(0);
  });

  it('a request arriving during the second run waits for a third', async () => {
    hold();
    const first = get('/shared?a=3');
    await settle();
    const second = get('/shared?a=3');
    await settle();
    const release1 = open;
    hold(); // the second run will be held too
    release1();
    await settle();
    expect(runs).toBe(2);
    const third = get('/shared?a=3');
    await settle();
    gate = null;
    open();
    const [a, b, c] = await Promise.all([first, second, third]);
    expect([body(a).run, body(b).run, body(c).run]).toEqual([1, 2, 3]);
  });

  it('another credential, another query string, another method or a route without sharedRead never share', async () => {
    hold();
    const first = get('/shared?a=4');
    await settle();
    const others = [get('/shared?a=4', 'k2'), get('/shared?a=5'), app.inject({ method: 'POST', url: '/shared?a=4', payload: { x: 1 }, headers: { 'x-key': 'k1' } }), get('/own')];
    await settle();
    expect(runs).toBe(5); // each started its own run at once
    gate = null;
    open();
    const answers = await Promise.all([first, ...others]);
    expect(new Set(answers.map((r) => body(r).run)).size).toBe(5);
  });

  it('POST bodies are part of identity: different bodies do not share, equal ones do', async () => {
    hold();
    const post = (x: number) => app.inject({ method: 'POST', url: '/shared', payload: { x }, headers: { 'x-key': 'k1' } });
    const first = post(1);
    await settle();
    const same = [post(1), post(1)];
    const other = post(2);
    await settle();
    expect(runs).toBe(2); // first and other
    gate = null;
    open();
    const [a, b, c, d] = await Promise.all([first, ...same, other]);
    expect(body(b).run).toBe(body(c).run);
    expect(body(b).run).not.toBe(body(a).run);
    expect(body(d).run).not.toBe(body(b).run);
    expect(runs).toBe(3);
  });

  it('a burst of 200 identical requests: every one answered 200 with the same body, at most two computations, nothing left behind', async () => {
    hold();
    const pending = Array.from({ length: 200 }, () => get('/shared?burst=1'));
    await settle();
    gate = null;
    open();
    const answers = await Promise.all(pending);
    for (const r of answers) expect(r.statusCode).toBe(200);
    expect(runs).toBe(2); // the first, and one for the 199 that arrived while it ran
    expect(new Set(answers.slice(1).map((r) => r.body)).size).toBe(1);
    expect(sharedSlots.size).toBe(0);
  });

  it('an error answer is shared with its status', async () => {
    hold();
    const first = get('/shared?fail=1');
    await settle();
    const later = [get('/shared?fail=1'), get('/shared?fail=1')];
    await settle();
    gate = null;
    open();
    const [a, b, c] = await Promise.all([first, ...later]);
    for (const r of [a, b, c]) expect(r.statusCode).toBe(409);
    expect(b.body).toBe(c.body);
    expect(JSON.parse(b.body).message).toBe('failed 2');
    expect(runs).toBe(2);
    expect(sharedSlots.size).toBe(0);
  });
});
