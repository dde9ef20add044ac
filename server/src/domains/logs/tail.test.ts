/**
 * `GET /stream/logs`, the live tail, against a listening server (spec 1, "Raw observability"; Authentication
 * rules 7 and 8: "live log tail, `/stream/logs` ... Stops within 30 seconds"; "a stream ends with a final
 * event naming `unauthorized` ... or `forbidden` ..., marked final"; "Routine session expiry ends a stream
 * without the final marker"). The poll and re-check intervals are shortened so each case takes well under
 * a second; the bound checked is a few re-check intervals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertLogs, SEV } from '../../testing/log-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, signIn } from '../../testing/people.js';

const RECHECK_MS = 150;
const BOUND_MS = 10 * RECHECK_MS;

interface SseEvent {
  event?: string;
  data?: string;
  id?: string;
  comment?: string;
}

/** Reads a response body as SSE blocks. */
function sseReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = '';
  let done = false;
  const waiters = new Set<() => void>();
  (async () => {
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        buffer += decoder.decode(value, { stream: true });
        let i: number;
        while ((i = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, i);
          buffer = buffer.slice(i + 2);
          const e: SseEvent = {};
          for (const line of block.split('\n')) {
            if (line.startsWith(':')) e.comment = line.slice(1).trim();
            else {
              const [k, ...v] = line.split(': ');
              (e as Record<string, string>)[k] = v.join(': ');
            }
          }
          events.push(e);
        }
        for (const w of [...waiters]) w();
      }
    } catch {
      /* aborted */
    }
    done = true;
    for (const w of [...waiters]) w();
  })();
  return {
    events,
    get done() {
      return done;
    },
    /** Waits until `check` holds (re-evaluated on every block and at the end), or fails after `ms`. */
    async until<T>(check: () => T | undefined | false, ms = 3000): Promise<T> {
      const deadline = Date.now() + ms;
      for (;;) {
        const v = check();
        if (v) return v;
        if (Date.now() > deadline) throw new Error(`timed out; events so far: ${JSON.stringify(events)}`);
        await new Promise<void>((resolve) => {
          const w = () => {
            waiters.delete(w);
            resolve();
          };
          waiters.add(w);
          setTimeout(w, 25);
        });
      }
    },
    logs: () => events.filter((e) => e.event === 'log').map((e) => JSON.parse(e.data!)),
  };
}

describe('live log tail', () => {
  let t: TestApp;
  let base: string;
  const aborts: AbortController[] = [];

  beforeAll(async () => {
    t = await testApp();
    Object.assign(t.ctx.logTail.settings, { pollMs: 30, recheckMs: RECHECK_MS, heartbeatMs: 200 });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const addr = t.app.server.address() as { port: number };
    base = `http://127.0.0.1:${addr.port}/api/v1`;
  });
  afterAll(async () => {
    for (const a of aborts) a.abort();
    await t.close();
  });

  async function open(query: string, headers: Record<string, string>) {
    const ac = new AbortController();
    aborts.push(ac);
    const res = await fetch(`${base}/stream/logs${query}`, { headers, signal: ac.signal });
    return { res, ac, sse: res.status === 200 ? sseReader(res) : undefined };
  }
  const ingest = (projectId: string, specs: Omit<Parameters<typeof insertLogs>[1][number], 'projectId' | 'at'>[]) =>
    insertLogs(
      t.ctx.telemetry,
      specs.map((s) => ({ projectId, at: Date.now() * 1000, ingestedAt: Date.now() * 1000, ...s })),
    );

  it('sends each new matching record once as `event: log` (the /logs shape), none of the backlog, with heartbeats', async () => {
    const { projectId, key } = await projectWithKey(t, ['logs:read']);
    await ingest(projectId, [{ body: 'backlog', severityNumber: SEV.error }]);
    const { res, sse } = await open('?service=api&severity=warn&q=BOOM', { 'x-svc-api-key': key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    await sse!.until(() => sse!.events.some((e) => e.comment === 'stream open'));
    await ingest(projectId, [
      { body: 'boom one', severityNumber: SEV.error, attributes: { n: 1 } },
      { body: 'boom quiet', severityNumber: SEV.info },
      { body: 'boom elsewhere', severityNumber: SEV.error, service: 'db' },
      { body: 'nothing', severityNumber: SEV.fatal },
    ]);
    // A record committed late with an ingest time slightly in the past is still sent (the overlap).
    await ingest(projectId, [{ body: 'boom late', severityNumber: SEV.warn, ingestedAt: (Date.now() - 1000) * 1000 }]);
    const logs = await sse!.until(() => (sse!.logs().length >= 2 ? sse!.logs() : undefined));
    expect(logs.map((l) => l.body).sort()).toEqual(['boom late', 'boom one']);
    expect(logs.find((l) => l.body === 'boom one')).toMatchObject({ severity: 'error', service_name: 'api', attributes: { n: 1 } });
    const ids = sse!.events.filter((e) => e.event === 'log').map((e) => e.id);
    expect(ids).toEqual(logs.map((l) => l.log_id));
    await sse!.until(() => sse!.events.some((e) => e.comment === 'ping'));
    await new Promise((r) => setTimeout(r, 200));
    expect(sse!.logs()).toHaveLength(2); // each once
  });

  it('a revoked key: the stream ends with a final `unauthorized` event within the re-check bound', async () => {
    const { projectId, key, keyId } = await projectWithKey(t, ['logs:read']);
    const { sse } = await open('', { 'x-svc-api-key': key });
    await ingest(projectId, [{ body: 'before revocation' }]);
    await sse!.until(() => sse!.logs().length === 1);
    const revokedAt = Date.now();
    expect((await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${keyId}/revoke` })).statusCode).toBe(200);
    const final = await sse!.until(() => sse!.events.find((e) => e.event === 'error'), BOUND_MS);
    expect(Date.now() - revokedAt).toBeLessThan(BOUND_MS);
    expect(JSON.parse(final.data!)).toEqual({ error: 'unauthorized', message: 'authentication required', final: true });
    await sse!.until(() => sse!.done);
    expect(sse!.events[sse!.events.length - 1]).toBe(final);
  });

  it('narrowing the key\'s scopes (logs:read removed): final `forbidden` event', async () => {
    const { key, keyId } = await projectWithKey(t, ['logs:read', 'metrics:read']);
    const { sse } = await open('', { 'x-svc-api-key': key });
    await sse!.until(() => sse!.events.length > 0);
    const patched = await t.call({ method: 'PATCH', url: `/api/v1/account/api-keys/${keyId}`, payload: { scopes: ['metrics:read'] } });
    expect(patched.statusCode).toBe(200);
    const final = await sse!.until(() => sse!.events.find((e) => e.event === 'error'), BOUND_MS);
    expect(JSON.parse(final.data!)).toEqual({ error: 'forbidden', message: expect.stringContaining('logs:read'), final: true });
    await sse!.until(() => sse!.done);
  });

  it('a person signing out that session: final `unauthorized`; signing out another device does not stop it', async () => {
    const person = await addPerson(t, 'member');
    const b = await signIn(t, person);
    const other = await signIn(t, person);
    const { sse } = await open(`?project_id=${t.projectId}`, { cookie: `svc_session=${b.cookies.svc_session}` });
    await ingest(t.projectId, [{ body: 'for the person' }]);
    await sse!.until(() => sse!.logs().some((l) => l.body === 'for the person'));
    await other.call({ method: 'POST', url: '/api/v1/auth/logout' });
    await new Promise((r) => setTimeout(r, 3 * RECHECK_MS));
    expect(sse!.events.some((e) => e.event === 'error')).toBe(false);
    expect(sse!.done).toBe(false);
    await b.call({ method: 'POST', url: '/api/v1/auth/logout' });
    const final = await sse!.until(() => sse!.events.find((e) => e.event === 'error'), BOUND_MS);
    expect(JSON.parse(final.data!)).toMatchObject({ error: 'unauthorized', final: true });
  });

  it('routine session expiry (the session credential rotated by a refresh) ends the stream without the final marker', async () => {
    const person = await addPerson(t, 'member');
    const b = await signIn(t, person);
    const { sse } = await open(`?project_id=${t.projectId}`, { cookie: `svc_session=${b.cookies.svc_session}` });
    await sse!.until(() => sse!.events.length > 0);
    expect((await b.call({ method: 'POST', url: '/api/v1/auth/refresh' })).statusCode).toBe(200);
    await sse!.until(() => sse!.done, BOUND_MS);
    expect(sse!.events.some((e) => e.event === 'error')).toBe(false);
  });

  it('the client disconnecting stops the polling and the re-checks', async () => {
    const { key } = await projectWithKey(t, ['logs:read']);
    const before = t.ctx.logTail.openCount;
    const { ac, sse } = await open('', { 'x-svc-api-key': key });
    await sse!.until(() => sse!.events.length > 0);
    expect(t.ctx.logTail.openCount).toBe(before + 1);
    ac.abort();
    const deadline = Date.now() + 2000;
    while (t.ctx.logTail.openCount !== before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(t.ctx.logTail.openCount).toBe(before);
  });

  it('refusals come before the stream opens, as JSON: 401, 403 without logs:read, 400 bad filter, 429 over the per-organization cap', async () => {
    const { key } = await projectWithKey(t, ['logs:read']);
    const unauth = await open('', {});
    expect(unauth.res.status).toBe(401);
    expect(await unauth.res.json()).toEqual({ error: 'unauthorized', message: 'authentication required' });
    const noScope = await open('', { 'x-svc-api-key': (await projectWithKey(t, ['metrics:read'])).key });
    expect(noScope.res.status).toBe(403);
    const bad = await open('?severity=loud', { 'x-svc-api-key': key });
    expect(bad.res.status).toBe(400);
    expect((await bad.res.json()).error).toBe('invalid_request');
    const max = t.ctx.logTail.settings.maxPerOrg;
    t.ctx.logTail.settings.maxPerOrg = t.ctx.logTail.openCount;
    try {
      const full = await open('', { 'x-svc-api-key': key });
      expect(full.res.status).toBe(429);
      expect(full.res.headers.get('retry-after')).toBe('5');
      expect((await full.res.json()).error).toBe('too_many_streams');
    } finally {
      t.ctx.logTail.settings.maxPerOrg = max;
    }
  });

  it('a reconnect with Last-Event-ID resumes after that record; HEAD opens no tail', async () => {
    const { projectId, key } = await projectWithKey(t, ['logs:read']);
    const first = await open('', { 'x-svc-api-key': key });
    await first.sse!.until(() => first.sse!.events.length > 0);
    await ingest(projectId, [{ body: 'seen' }]);
    const [seen] = await first.sse!.until(() => (first.sse!.logs().length === 1 ? first.sse!.logs() : undefined));
    first.ac.abort();
    await ingest(projectId, [{ body: 'missed 1' }, { body: 'missed 2' }]);
    const second = await open('', { 'x-svc-api-key': key, 'last-event-id': seen.log_id });
    const logs = await second.sse!.until(() => (second.sse!.logs().length >= 2 ? second.sse!.logs() : undefined));
    expect(logs.map((l) => l.body).sort()).toEqual(['missed 1', 'missed 2']);
    second.ac.abort();
    const count = t.ctx.logTail.openCount;
    const head = await fetch(`${base}/stream/logs`, { method: 'HEAD', headers: { 'x-svc-api-key': key } });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(t.ctx.logTail.openCount).toBeLessThanOrEqual(count);
  });

  it('deleting the project ends its tails (also under an organization-wide key) without the final event; a reconnect is 404', async () => {
    const { projectId } = await projectWithKey(t, ['logs:read']);
    const other = await projectWithKey(t, ['logs:read']);
    const k = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'org-tail', scopes: ['logs:read'], org_wide: true } });
    expect(k.statusCode).toBe(201);
    const orgKey = k.json().key as string;
    const { sse } = await open(`?project_id=${projectId}`, { 'x-svc-api-key': orgKey });
    const { sse: untouched } = await open(`?project_id=${other.projectId}`, { 'x-svc-api-key': orgKey });
    await sse!.until(() => sse!.events.some((e) => e.comment === 'stream open'));
    await untouched!.until(() => untouched!.events.some((e) => e.comment === 'stream open'));
    expect((await t.call({ method: 'DELETE', url: `/api/v1/projects/${projectId}` })).statusCode).toBe(204);
    await sse!.until(() => sse!.done);
    expect(sse!.events.some((e) => e.event === 'error')).toBe(false);
    expect(untouched!.done).toBe(false);
    const again = await open(`?project_id=${projectId}`, { 'x-svc-api-key': orgKey });
    expect(again.res.status).toBe(404);
  });

  it('a server shutdown ends open tails without the final event', async () => {
    const { key } = await projectWithKey(t, ['logs:read']);
    const { sse } = await open('', { 'x-svc-api-key': key });
    await sse!.until(() => sse!.events.length > 0);
    t.ctx.logTail.closeAll();
    await sse!.until(() => sse!.done);
    expect(sse!.events.some((e) => e.event === 'error')).toBe(false);
  });
});
