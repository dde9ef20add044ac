/**
 * GET /agent-events (spec 2 "Step-level agent event", "Agent events and receipts", "Limits"; spec 1
 * "Pagination of agent evidence"; docs/agent-model.md "Step-level agent events").
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { insertEvents, insertSpans, spanId, traceId, us, type EventFixture } from '../../testing/agent-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

const BASE = us('2026-03-01T10:00:00.000Z');
const at = (sec: number, extraUs = 0) => BASE + sec * 1_000_000 + extraUs;
const iso = (sec: number) => new Date(BASE / 1000 + sec * 1000).toISOString();
const enc = encodeURIComponent;

const R1 = traceId(1);
const R2 = traceId(2);
const NOT_A_RUN = traceId(3);
const [ROOT1, CHAT1, TOOL1, ROOT2, TOOL2, PLAIN] = [1, 2, 3, 4, 5, 6].map(spanId);

/** Two runs of two agents in two sessions, and a trace that is not a run. */
async function fixture(projectId: string) {
  await insertSpans(t, projectId, [
    { traceId: R1, spanId: ROOT1, op: 'invoke_agent', agentName: 'a', serviceName: 'svc', sessionKey: 's1', turnId: 't1', startUs: at(0), endUs: at(9) },
    { traceId: R1, spanId: CHAT1, parentSpanId: ROOT1, op: 'chat', startUs: at(1), endUs: at(5), contextEvents: 3 },
    { traceId: R1, spanId: TOOL1, parentSpanId: ROOT1, op: 'execute_tool', toolName: 'search', startUs: at(6), endUs: at(7) },
    { traceId: R2, spanId: ROOT2, op: 'invoke_agent', agentName: 'b', serviceName: 'svc', sessionKey: 's2', startUs: at(10), endUs: at(20) },
    { traceId: R2, spanId: TOOL2, parentSpanId: ROOT2, op: 'execute_tool', toolName: 'fetch', startUs: at(11), endUs: at(13), contextEvents: 1 },
    { traceId: NOT_A_RUN, spanId: PLAIN, op: 'execute_tool', startUs: at(7), endUs: at(8) },
  ]);
  const events: EventFixture[] = [
    { traceId: R1, spanId: ROOT1, index: 0, tsUs: at(1), name: 'agent.start' },
    { traceId: R1, spanId: CHAT1, index: 0, tsUs: at(2), name: 'model.request' },
    {
      traceId: R1,
      spanId: CHAT1,
      index: 1,
      tsUs: at(3),
      name: 'context.assembly',
      contextKind: 'assembly',
      contextDetail: { budget_tokens: 1000, assembled_tokens: 0, overflow: false, digest: 'sha256:aa', sources: [{ id: 'doc-1', kind: 'file', tokens: 10 }, { id: 'doc-2' }] },
      contextSourceIds: ['doc-1', 'doc-2'],
    },
    {
      traceId: R1,
      spanId: CHAT1,
      index: 2,
      tsUs: at(4),
      name: 'context.compaction',
      contextKind: 'compaction',
      contextDetail: { trigger: 'budget', strategy: 'summarize', before_count: 10, after_count: 4, removed_source_ids: ['doc-1'] },
      contextSourceIds: ['doc-1'],
    },
    {
      traceId: R1,
      spanId: CHAT1,
      index: 3,
      tsUs: at(4, 500),
      name: 'context.cache',
      contextKind: 'cache',
      contextDetail: { provider: 'anthropic', key_digest: 'k', outcome: 'hit', reused_tokens: 0 },
    },
    // not accepted context event: stored as a plain span event
    { traceId: R1, spanId: CHAT1, index: 4, tsUs: at(4, 600), name: 'context.weird', category: null },
    { traceId: R1, spanId: TOOL1, index: 0, tsUs: at(6), name: 'tool.call' },
    { traceId: R1, spanId: TOOL1, index: 1, tsUs: at(6, 500), name: 'exception', category: null },
    { traceId: R2, spanId: ROOT2, index: 0, tsUs: at(10, 1), name: 'agent.start' },
    { traceId: R2, spanId: TOOL2, index: 0, tsUs: at(11), name: 'tool.call', category: 'mcp' },
    {
      traceId: R2,
      spanId: TOOL2,
      index: 1,
      tsUs: at(12),
      name: 'context.assembly',
      contextKind: 'assembly',
      contextDetail: { sources: [{ id: 'doc-1' }] },
      contextSourceIds: ['doc-1'],
    },
    { traceId: NOT_A_RUN, spanId: PLAIN, index: 0, tsUs: at(7), name: 'tool.call' },
  ];
  await insertEvents(t, projectId, events);
}

let p: { projectId: string; key: string; get(q: string): ReturnType<TestApp['call']>; ids(q: string): Promise<string[]> };
beforeAll(async () => {
  const k = await projectWithKey(t, ['agents:read']);
  await fixture(k.projectId);
  const get = (q: string) => t.call({ method: 'GET', url: `/api/v1/agent-events?${q}`, key: k.key });
  p = {
    ...k,
    get,
    async ids(q) {
      const res = await get(q);
      expect(res.statusCode, res.body).toBe(200);
      return res.json().events.map((e: { run_id: string; event_id: string }) => `${e.run_id === R1 ? 'R1' : 'R2'}/${e.event_id}`);
    },
  };
});

const R1_ALL = [`R1/${TOOL1}:0`, `R1/${CHAT1}:3`, `R1/${CHAT1}:2`, `R1/${CHAT1}:1`, `R1/${CHAT1}:0`, `R1/${ROOT1}:0`];

describe('agent events: anchors ("anchor required ... otherwise rejected")', () => {
  it('no anchor at all is 400', async () => {
    const res = await p.get('');
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/anchor is required/);
  });

  it('"a run": run_id alone anchors; newest first; plain span events and not-accepted context events are not agent events', async () => {
    expect(await p.ids(`run_id=${R1}`)).toEqual(R1_ALL);
  });

  it('"a session": session_key alone anchors', async () => {
    expect(await p.ids('session_key=s2')).toEqual([`R2/${TOOL2}:1`, `R2/${TOOL2}:0`, `R2/${ROOT2}:0`]);
  });

  it('"an agent identity with a bounded window": observation_key needs since and until (at most 7 days apart)', async () => {
    expect((await p.get('observation_key=svc%2Fa')).statusCode).toBe(400);
    expect((await p.get(`observation_key=svc%2Fa&since=${enc(iso(0))}`)).statusCode).toBe(400);
    const far = await p.get(`observation_key=svc%2Fa&since=2026-02-01T00:00:00Z&until=2026-03-02T00:00:00Z`);
    expect(far.statusCode).toBe(400);
    expect(far.json().message).toMatch(/7 days/);
    expect(await p.ids(`observation_key=svc%2Fa&since=2026-02-23T00:00:00Z&until=2026-03-02T00:00:00Z`)).toEqual(R1_ALL);
  });

  it('"a window no wider than 24 hours" anchors; wider, or one side only, is 400 ("Agent-event window without another anchor: at most 24 hours")', async () => {
    const all = await p.ids(`since=2026-03-01T00:00:00Z&until=2026-03-02T00:00:00Z`);
    expect(all).toHaveLength(9);
    expect(all.slice(0, 3)).toEqual([`R2/${TOOL2}:1`, `R2/${TOOL2}:0`, `R2/${ROOT2}:0`]);
    const wide = await p.get(`since=2026-03-01T00:00:00Z&until=2026-03-02T00:00:00.000001Z`);
    expect(wide.statusCode).toBe(400);
    expect(wide.json().message).toMatch(/24 hours/);
    expect((await p.get(`since=2026-03-01T00:00:00Z`)).statusCode).toBe(400);
    expect((await p.get(`until=2026-03-01T00:00:00Z`)).statusCode).toBe(400);
  });

  it('a window narrows a run anchor (closed at both ends)', async () => {
    expect(await p.ids(`run_id=${R1}&since=${enc(iso(2))}&until=${enc(iso(4))}`)).toEqual([`R1/${CHAT1}:2`, `R1/${CHAT1}:1`, `R1/${CHAT1}:0`]);
  });

  it('"context_source_id (narrowing only; needs another anchor such as run_id)"', async () => {
    const alone = await p.get('context_source_id=doc-1');
    expect(alone.statusCode).toBe(400);
    expect(alone.json().message).toMatch(/context_source_id only narrows/);
    expect(await p.ids(`run_id=${R1}&context_source_id=doc-1`)).toEqual([`R1/${CHAT1}:2`, `R1/${CHAT1}:1`]);
    expect(await p.ids(`run_id=${R1}&context_source_id=doc-2`)).toEqual([`R1/${CHAT1}:1`]);
    expect(await p.ids(`since=2026-03-01T00:00:00Z&until=2026-03-02T00:00:00Z&context_source_id=doc-1`)).toEqual([
      `R2/${TOOL2}:1`,
      `R1/${CHAT1}:2`,
      `R1/${CHAT1}:1`,
    ]);
  });

  it('a malformed run_id is 400', async () => {
    expect((await p.get('run_id=xyz')).statusCode).toBe(400);
  });
});

describe('agent events: filters', () => {
  it('"Filters category, canonical_operation (repeatable, OR within AND across)"', async () => {
    expect(await p.ids(`run_id=${R1}&category=tool&category=model`)).toEqual([`R1/${TOOL1}:0`, `R1/${CHAT1}:0`]);
    expect(await p.ids(`run_id=${R1}&category=tool,model`)).toEqual([`R1/${TOOL1}:0`, `R1/${CHAT1}:0`]);
    expect(await p.ids(`run_id=${R1}&canonical_operation=CANONICAL_OPERATION_CHAT`)).toEqual([`R1/${CHAT1}:3`, `R1/${CHAT1}:2`, `R1/${CHAT1}:1`, `R1/${CHAT1}:0`]);
    expect(await p.ids(`run_id=${R1}&category=context&category=agent&canonical_operation=CANONICAL_OPERATION_CHAT`)).toEqual([
      `R1/${CHAT1}:3`,
      `R1/${CHAT1}:2`,
      `R1/${CHAT1}:1`,
    ]);
    expect(
      await p.ids(`run_id=${R1}&canonical_operation=CANONICAL_OPERATION_INVOKE_AGENT&canonical_operation=CANONICAL_OPERATION_EXECUTE_TOOL`),
    ).toEqual([`R1/${TOOL1}:0`, `R1/${ROOT1}:0`]);
  });

  it('"unknown category is 400"; an unknown or unspecified canonical_operation is 400', async () => {
    for (const q of ['category=thoughts', 'category=tool,', 'canonical_operation=CANONICAL_OPERATION_UNSPECIFIED', 'canonical_operation=chat']) {
      const res = await p.get(`run_id=${R1}&${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
  });

  it('"Deprecated outcome selector is rejected" (any value, also empty); "Events have no outcome field"', async () => {
    for (const q of ['outcome=OUTCOME_OK', 'outcome=', 'outcome=OUTCOME_ERROR&outcome=OUTCOME_OK']) {
      const res = await p.get(`run_id=${R1}&${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().message).toMatch(/outcome selector is deprecated/);
    }
    const events = (await p.get(`run_id=${R1}`)).json().events;
    for (const e of events) expect(e).not.toHaveProperty('outcome');
  });
});

describe('agent events: fields', () => {
  it('an event returns its id, run, span, session, turn, identity, step operation, category, name and time; "The raw span-event attribute map is never returned"', async () => {
    const res = await p.get(`run_id=${R1}&category=tool`);
    expect(res.json().events).toEqual([
      {
        event_id: `${TOOL1}:0`,
        run_id: R1,
        span_id: TOOL1,
        session_key: 's1',
        turn_id: 't1',
        observation_key: 'svc/a',
        canonical_operation: 'CANONICAL_OPERATION_EXECUTE_TOOL',
        category: 'tool',
        name: 'tool.call',
        occurred_at: '2026-03-01T10:00:06.000000Z',
      },
    ]);
    expect((await p.get(`run_id=${R1}`)).body).not.toContain('raw attribute');
  });

  it('"Context events (category=context) carry exactly one typed context detail"; "a measured zero is returned as zero"; optional members omitted when omitted', async () => {
    const events = (await p.get(`run_id=${R1}&category=context`)).json().events;
    expect(events.map((e: { context: unknown }) => e.context)).toEqual([
      { kind: 'cache', cache: { provider: 'anthropic', key_digest: 'k', outcome: 'hit', reused_tokens: 0 } },
      {
        kind: 'compaction',
        compaction: { trigger: 'budget', strategy: 'summarize', before_count: 10, after_count: 4, removed_source_ids: ['doc-1'], ratio: 0.4 },
      },
      {
        kind: 'assembly',
        assembly: {
          budget_tokens: 1000,
          assembled_tokens: 0,
          overflow: false,
          digest: 'sha256:aa',
          sources: [{ id: 'doc-1', kind: 'file', tokens: 10 }, { id: 'doc-2' }],
        },
      },
    ]);
    const other = (await p.get(`run_id=${R1}&category=tool,model,agent`)).json().events;
    for (const e of other) expect(e).not.toHaveProperty('context');
  });
});

describe('agent events: pagination ("Pagination of agent evidence")', () => {
  it('rule 1: "Omit it, or send it once empty, for the first page. A continuation sends exactly one non-empty cursor."', async () => {
    const omitted = (await p.get(`run_id=${R1}&limit=2`)).json();
    const empty = (await p.get(`run_id=${R1}&limit=2&cursor=`)).json();
    expect(empty).toEqual(omitted);
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const body: { events: { event_id: string }[]; next_cursor: string | null } = (await p.get(`run_id=${R1}&limit=2&cursor=${enc(cursor)}`)).json();
      seen.push(...body.events.map((e) => `R1/${e.event_id}`));
      cursor = body.next_cursor;
    }
    expect(seen).toEqual(R1_ALL);
  });

  it('rule 2: "Two or more cursor parameters (identical values, two empty values, or empty plus non-empty) return 400 ... the evidence query does not run"', async () => {
    const c = (await p.get(`run_id=${R1}&limit=2`)).json().next_cursor;
    const read = vi.spyOn(t.ctx.telemetry.agentRuns, 'events');
    try {
      for (const q of [`cursor=${c}&cursor=${c}`, 'cursor=&cursor=', `cursor=&cursor=${c}`]) {
        const res = await p.get(`run_id=${R1}&${q}`);
        expect(res.statusCode, q).toBe(400);
        expect(res.json()).toEqual({ error: 'invalid_request', message: 'cursor must be provided at most once' });
      }
      expect(read).not.toHaveBeenCalled();
    } finally {
      read.mockRestore();
    }
  });

  it('rule 3: "A single cursor goes unchanged to the endpoint\'s own validation; it can still be rejected as expired or malformed"', async () => {
    for (const c of ['abc!', 'bm9wZQ', Buffer.from('[1,"zz.nope"]').toString('base64url')]) {
      const res = await p.get(`run_id=${R1}&cursor=${c}`);
      expect(res.statusCode, c).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
  });

  it('rule 4: "limit is optional, at most once, a non-empty unsigned 32-bit integer ... each endpoint applies its own default and maximum" (default 100, max 500, 0 refused)', async () => {
    for (const q of ['limit=1&limit=2', 'limit=', 'limit=-1', 'limit=abc', 'limit=4294967296', 'limit=501', 'limit=0']) {
      const res = await p.get(`run_id=${R1}&${q}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
    expect((await p.get(`run_id=${R1}&limit=500`)).statusCode).toBe(200);
    const many = await projectWithKey(t, ['agents:read']);
    await insertSpans(t, many.projectId, [{ traceId: R1, spanId: ROOT1, op: 'invoke_agent', agentName: 'a', startUs: at(0) }]);
    await insertEvents(
      t,
      many.projectId,
      Array.from({ length: 101 }, (_, i) => ({ traceId: R1, spanId: ROOT1, index: i, tsUs: at(1, i), name: 'agent.step' })),
    );
    const page = (await t.call({ method: 'GET', url: `/api/v1/agent-events?run_id=${R1}`, key: many.key })).json();
    expect(page.events).toHaveLength(100);
    expect(page.next_cursor).toEqual(expect.any(String));
    expect(page.events[0].event_id).toBe(`${ROOT1}:100`);
  });

  it('rule 5: "Keep project, selectors, filters and explicit time bounds unchanged while continuing": a cursor sent with another query is 400', async () => {
    const c = (await p.get(`run_id=${R1}&limit=2`)).json().next_cursor;
    for (const q of [`run_id=${R1}&category=tool`, `session_key=s1`, `run_id=${R1}&since=${enc(iso(0))}`]) {
      const res = await p.get(`${q}&limit=2&cursor=${c}`);
      expect(res.statusCode, q).toBe(400);
      expect(res.json().message).toMatch(/another query/);
    }
    // a different page size is the same query
    expect((await p.get(`run_id=${R1}&limit=3&cursor=${c}`)).statusCode).toBe(200);
  });

  it('events of another project are never returned', async () => {
    const other = await projectWithKey(t, ['agents:read']);
    const res = await t.call({ method: 'GET', url: `/api/v1/agent-events?run_id=${R1}`, key: other.key });
    expect(res.json()).toEqual({ events: [], next_cursor: null });
  });

  it('agent-event reads need agents:read (403 naming it)', async () => {
    const k = await projectWithKey(t, ['metrics:read']);
    const res = await t.call({ method: 'GET', url: `/api/v1/agent-events?run_id=${R1}`, key: k.key });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toContain('agents:read');
  });
});
