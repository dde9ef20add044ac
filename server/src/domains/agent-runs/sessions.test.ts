/**
 * Sessions and turns (docs/agent-model.md "Sessions and turns"; spec 3 `session.*` measurements; spec 1
 * "Pagination of agent evidence" lists `/agent-sessions`, `/agent-turns`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSpans, spanId, traceId, us, type SpanFixture } from '../../testing/agent-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { testTelemetryKind } from '../../testing/clickhouse.js';
import type { ModelPrices } from './pricing-port.js';
import { AgentRunsService } from './service.js';

let t: TestApp;
const fakePrices: ModelPrices = {
  pricesOf: async (_p, models) => models.map((m) => (m.model === 'm' ? { inputNanosPerToken: 1, outputNanosPerToken: 1 } : undefined)),
};
beforeAll(async () => {
  t = await testApp();
  t.ctx.agentRuns = new AgentRunsService(t.ctx.telemetry.agentRuns, fakePrices);
});
afterAll(async () => t.close());

const BASE = us('2026-03-01T10:00:00.000Z');
const at = (sec: number, extraUs = 0) => BASE + sec * 1_000_000 + extraUs;

async function project(scopes = ['agents:read']) {
  const p = await projectWithKey(t, scopes);
  const get = (url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key: p.key });
  const spans = (s: SpanFixture[]) => insertSpans(t, p.projectId, s);
  return { ...p, get, spans };
}

/** A run n of a session, optionally in a turn, with model steps of the given cost (undefined: a step with no usage). */
function run(n: number, o: { session?: string; turn?: string; startUs?: number; endUs?: number; costs?: (number | undefined)[]; tokens?: number }): SpanFixture[] {
  const tid = traceId(n);
  const start = o.startUs ?? at(n);
  const root: SpanFixture = { traceId: tid, spanId: spanId(n * 100), op: 'invoke_agent', agentName: 'bot', sessionKey: o.session, turnId: o.turn, startUs: start, endUs: o.endUs ?? start + 1_000_000 };
  const steps: SpanFixture[] = (o.costs ?? []).map((c, i) => ({ traceId: tid, spanId: spanId(n * 100 + i + 1), parentSpanId: root.spanId, op: 'chat', responseModel: 'x', costNanos: c, startUs: start + 1 }));
  if (o.tokens !== undefined)
    steps.push({ traceId: tid, spanId: spanId(n * 100 + 99), parentSpanId: root.spanId, op: 'chat', responseModel: 'm', inputTokens: o.tokens, startUs: start + 1 });
  return [root, ...steps];
}

describe('sessions', () => {
  it('GET /agent-sessions/{key}: run_count, turn_count, started_at (first run start), ended_at (last run end), duration_ms, cost_nanos (sum of run costs)', async () => {
    const p = await project();
    await p.spans([
      ...run(1, { session: 's', turn: 'a', startUs: at(0), endUs: at(5), costs: [100] }),
      ...run(2, { session: 's', turn: 'b', startUs: at(3), endUs: at(4), costs: [20], tokens: 5 }),
      ...run(3, { session: 's', turn: 'a', startUs: at(6), endUs: at(9, 500), costs: [3] }),
    ]);
    const res = await p.get('/agent-sessions/s');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      session_key: 's',
      run_count: 3,
      turn_count: 2,
      started_at: '2026-03-01T10:00:00.000000Z',
      ended_at: '2026-03-01T10:00:09.000500Z',
      duration_ms: 9000.5,
      cost_nanos: 128,
    });
  });

  it('"session.turn_count ... the session\'s turns carry turn ids": turn_count is absent when no run carries one', async () => {
    const p = await project();
    await p.spans([...run(1, { session: 's', costs: [1] }), ...run(2, { session: 's', costs: [1] })]);
    const s = (await p.get('/agent-sessions/s')).json();
    expect(s).not.toHaveProperty('turn_count');
    expect(s.run_count).toBe(2);
  });

  it('"session.duration_ms ... a single moment measures 0 (a real answer)"', async () => {
    const p = await project();
    await p.spans(run(1, { session: 's', startUs: at(1), endUs: at(1), costs: [1] }));
    expect((await p.get('/agent-sessions/s')).json()).toMatchObject({ duration_ms: 0, started_at: '2026-03-01T10:00:01.000000Z', ended_at: '2026-03-01T10:00:01.000000Z' });
  });

  it('"session.cost_nanos ... a zero is treated as unmeasured": a zero sum is absent (zero_cost)', async () => {
    const p = await project();
    await p.spans([...run(1, { session: 's', costs: [0] }), ...run(2, { session: 's', costs: [0] })]);
    const s = (await p.get('/agent-sessions/s')).json();
    expect(s).not.toHaveProperty('cost_nanos');
    expect(s.cost_unavailable_reason).toBe('zero_cost');
  });

  it('session cost is absent when any run\'s cost is absent ("missing or unpriced is not zero")', async () => {
    const p = await project();
    await p.spans([...run(1, { session: 's', costs: [50] }), ...run(2, { session: 's', costs: [undefined] })]);
    const s = (await p.get('/agent-sessions/s')).json();
    expect(s).not.toHaveProperty('cost_nanos');
    expect(s.cost_unavailable_reason).toBe('run_cost_unavailable');
  });

  it('a run that made no model call adds nothing to the session cost (it has no model cost to miss)', async () => {
    const p = await project();
    await p.spans([...run(1, { session: 's', costs: [50] }), ...run(2, { session: 's' })]);
    expect((await p.get('/agent-runs/' + traceId(2))).json().cost_unavailable_reason).toBe('no_model_calls');
    expect((await p.get('/agent-sessions/s')).json().cost_nanos).toBe(50);
    const only = await project();
    await only.spans(run(3, { session: 't' }));
    expect((await only.get('/agent-sessions/t')).json().cost_unavailable_reason).toBe('zero_cost');
  });

  it('a session key no run carries is 404; so is one of another project', async () => {
    const a = await project();
    const b = await project();
    await b.spans(run(1, { session: 'theirs', costs: [1] }));
    expect((await a.get('/agent-sessions/nothing')).statusCode).toBe(404);
    expect((await a.get('/agent-sessions/theirs')).statusCode).toBe(404);
  });

  it('a session key is one URL-encoded path segment', async () => {
    const p = await project();
    await p.spans(run(1, { session: 'conv/1 a', costs: [1] }));
    expect((await p.get(`/agent-sessions/${encodeURIComponent('conv/1 a')}`)).json().session_key).toBe('conv/1 a');
  });

  it('GET /agent-sessions: newest first (by started_at); runs without a session are in none; cursor pages; since/until on started_at', async () => {
    const p = await project();
    await p.spans([
      ...run(1, { session: 'old', costs: [1] }),
      ...run(2, { session: 'mid', costs: [1] }),
      ...run(3, {}),
      ...run(4, { session: 'new', costs: [1] }),
      ...run(5, { session: 'old', costs: [1] }),
    ]);
    const first = (await p.get('/agent-sessions?limit=2')).json();
    expect(first.sessions.map((s: { session_key: string }) => s.session_key)).toEqual(['new', 'mid']);
    const second = (await p.get(`/agent-sessions?limit=2&cursor=${first.next_cursor}`)).json();
    expect(second).toMatchObject({ next_cursor: null });
    expect(second.sessions.map((s: { session_key: string; run_count: number }) => [s.session_key, s.run_count])).toEqual([['old', 2]]);
    const win = (await p.get(`/agent-sessions?since=2026-03-01T10:00:02Z&until=2026-03-01T10:00:04Z`)).json();
    expect(win.sessions.map((s: { session_key: string }) => s.session_key)).toEqual(['new', 'mid']);
    expect((await p.get('/agent-sessions?cursor=&cursor=')).statusCode).toBe(400);
    expect((await p.get(`/agent-sessions?since=2026-03-01T10:00:02Z&cursor=${first.next_cursor}`)).statusCode).toBe(400);
    expect((await p.get('/agent-sessions?limit=201')).statusCode).toBe(400);
  });
});

describe('session list costs remembered by what they were computed from (session-costs.ts)', () => {
  /**
   * A service of its own: a price that changes, and a count of the session calls the store reads. The price
   * starts at 1.5 nanos per token: not a whole number, so each call is rounded and the calls are read
   * (call-totals.ts); `setPrice` to a whole number prices the sessions from their totals.
   */
  async function counted() {
    const p = await project();
    let price = 1.5;
    let reads = 0;
    const store = t.ctx.telemetry.agentRuns;
    const counting = Object.create(store, {
      sessionUsage: { value: (...a: Parameters<typeof store.sessionUsage>) => (reads++, store.sessionUsage(...a)) },
    }) as typeof store;
    const svc = new AgentRunsService(counting, { pricesOf: async (_p, models) => models.map((m) => (m.model === 'm' ? { inputNanosPerToken: price, outputNanosPerToken: price } : undefined)) });
    const costs = async () => {
      const page = await svc.listSessions(p.projectId, {});
      return Object.fromEntries(page.sessions.map((x) => [x.session_key, 'cost_nanos' in x ? x.cost_nanos : x.cost_unavailable_reason]));
    };
    return { ...p, setPrice: (v: number) => (price = v), reads: () => reads, costs };
  }

  it('a page read again with nothing changed is answered from the remembered costs: no session call is read again', async () => {
    const p = await counted();
    await p.spans([...run(1, { session: 'a', tokens: 10 }), ...run(2, { session: 'b', costs: [7] }), ...run(3, { session: 'c' })]);
    expect(await p.costs()).toEqual({ a: 15, b: 7, c: 'zero_cost' });
    expect(p.reads()).toBe(1);
    expect(await p.costs()).toEqual({ a: 15, b: 7, c: 'zero_cost' });
    expect(p.reads()).toBe(1);
  });

  it('prices of whole nanos per token price a session from its totals kept at ingest: no session call is read, a new price applies at once', async () => {
    const p = await counted();
    p.setPrice(2);
    await p.spans([...run(1, { session: 'a', tokens: 10 }), ...run(2, { session: 'a', tokens: 7 }), ...run(3, { session: 'b', costs: [7] }), ...run(4, { session: 'c', costs: [undefined] })]);
    expect(await p.costs()).toEqual({ a: 34, b: 7, c: 'run_cost_unavailable' });
    p.setPrice(3);
    expect(await p.costs()).toEqual({ a: 51, b: 7, c: 'run_cost_unavailable' });
    // The embedded store keeps the totals; on ClickHouse sessions are grouped from the runs when read, their
    // calls read and priced (the answers are the same).
    const summed = testTelemetryKind() === 'duckdb';
    expect(p.reads()).toBe(summed ? 0 : 2);
    // A price that is not whole nanos per token: the calls are read and each rounded (7 x 1.5 = 10.5 -> 11).
    p.setPrice(1.5);
    expect(await p.costs()).toEqual({ a: 26, b: 7, c: 'run_cost_unavailable' });
    expect(p.reads()).toBe(summed ? 1 : 3);
  });

  it('"a price set after ingest prices the runs already stored": a changed price is priced again, the other sessions are not read', async () => {
    const p = await counted();
    await p.spans([...run(1, { session: 'a', tokens: 10 }), ...run(2, { session: 'b', costs: [7] })]);
    expect(await p.costs()).toEqual({ a: 15, b: 7 });
    p.setPrice(3.5);
    expect(await p.costs()).toEqual({ a: 35, b: 7 });
    expect(p.reads()).toBe(2); // the second read asked for session a only
  });

  it('a new run, or a late model call of a run, changes the fingerprint: the session is priced again', async () => {
    const p = await counted();
    await p.spans(run(1, { session: 'a', tokens: 10 }));
    expect(await p.costs()).toEqual({ a: 15 });
    await p.spans(run(2, { session: 'a', tokens: 5 }));
    expect(await p.costs()).toEqual({ a: 23 }); // 5 x 1.5 = 7.5, rounded half up on its own
    // A late model call of run 1 (a span that arrives after the run was listed).
    await p.spans([{ traceId: traceId(1), spanId: spanId(150), parentSpanId: spanId(100), op: 'chat', responseModel: 'm', inputTokens: 100, startUs: at(1) + 2 }]);
    expect(await p.costs()).toEqual({ a: 173 });
    expect(p.reads()).toBe(3);
  });
});

describe('turns', () => {
  it('GET /agent-turns?session_key=: "A turn groups the runs of a session by turn_id", newest first, each with its runs oldest first', async () => {
    const p = await project();
    await p.spans([
      ...run(1, { session: 's', turn: 'a', costs: [10] }),
      ...run(2, { session: 's', turn: 'b', costs: [0] }),
      ...run(3, { session: 's', turn: 'a', costs: [5] }),
      ...run(4, { session: 's', costs: [1] }),
      ...run(5, { session: 'other', turn: 'a', costs: [1] }),
    ]);
    const res = await p.get('/agent-turns?session_key=s');
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.next_cursor).toBeNull();
    expect(body.turns.map((x: { turn_id: string; run_count: number; runs: { run_id: string }[] }) => [x.turn_id, x.run_count, x.runs.map((r) => r.run_id)])).toEqual([
      ['b', 1, [traceId(2)]],
      ['a', 2, [traceId(1), traceId(3)]],
    ]);
    const a = body.turns[1];
    expect(a).toMatchObject({
      turn_id: 'a',
      session_key: 's',
      started_at: '2026-03-01T10:00:01.000000Z',
      ended_at: '2026-03-01T10:00:04.000000Z',
      duration_ms: 3000,
      cost_nanos: 15,
    });
    expect(a.runs[0]).toMatchObject({ run_id: traceId(1), session_key: 's', turn_id: 'a', cost_nanos: 10 });
    expect(body.turns[0]).toMatchObject({ cost_unavailable_reason: 'zero_cost' });
    expect(body.turns[0]).not.toHaveProperty('cost_nanos');
  });

  it('session_key is required; an unknown session has no turns; cursor pages', async () => {
    const p = await project();
    await p.spans([...run(1, { session: 's', turn: 'a' }), ...run(2, { session: 's', turn: 'b' }), ...run(3, { session: 's', turn: 'c' })]);
    expect((await p.get('/agent-turns')).statusCode).toBe(400);
    expect((await p.get('/agent-turns?session_key=')).statusCode).toBe(400);
    expect((await p.get('/agent-turns?session_key=none')).json()).toEqual({ turns: [], next_cursor: null });
    const first = (await p.get('/agent-turns?session_key=s&limit=2')).json();
    expect(first.turns.map((x: { turn_id: string }) => x.turn_id)).toEqual(['c', 'b']);
    const next = (await p.get(`/agent-turns?session_key=s&limit=2&cursor=${first.next_cursor}`)).json();
    expect(next.turns.map((x: { turn_id: string }) => x.turn_id)).toEqual(['a']);
    expect((await p.get(`/agent-turns?session_key=t&cursor=${first.next_cursor}`)).statusCode).toBe(400);
    expect((await p.get(`/agent-turns?session_key=s&cursor=${first.next_cursor}&cursor=${first.next_cursor}`)).statusCode).toBe(400);
  });

  it('session and turn reads need agents:read', async () => {
    const p = await project(['metrics:read']);
    for (const url of ['/agent-sessions', '/agent-sessions/s', '/agent-turns?session_key=s']) expect((await p.get(url)).statusCode, url).toBe(403);
  });
});
