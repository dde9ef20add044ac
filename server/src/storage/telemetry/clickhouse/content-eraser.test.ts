/**
 * Erasure of recorded content on ClickHouse (docs/content-policy.md "Erasure"), the cases of
 * duckdb/content-eraser.test.ts with the same counts: only the attributes of the erased classes go, only in the
 * rows of the scope (project, cut-off time, subject); every other attribute and column stays. And what is
 * particular to ClickHouse: the rows are updated in place (copies, ingest times and row counts stay), a retried
 * erasure changes and counts nothing, and the copies of one row are read whole across pages.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTENT_CLASSES } from '../../../domains/content/content-keys.js';
import { openTestChDb, type TestChDb } from '../../../testing/clickhouse.js';
import { newSpanId, newTraceId, us, type At } from '../duckdb/trace-log-fixtures.js';
import { withoutClasses as duckWithoutClasses } from '../duckdb/content-eraser.js';
import { ChContentEraser, withoutClasses } from './content-eraser.js';

let db: TestChDb;
let eraser: ChContentEraser;

beforeAll(async () => {
  db = await openTestChDb();
  eraser = new ChContentEraser(db);
});
afterAll(() => db?.drop());

interface SpanSpec {
  projectId: string;
  traceId: string;
  spanId?: string;
  start: At;
  attributes: Record<string, unknown>;
  sessionKey?: string;
  /** Default: the start. */
  ingestedAt?: At;
  events?: { name: string; at: At; attributes?: Record<string, unknown> }[];
}

/** Span rows (and their events) as the spans writer stores them, the columns a test does not name at their defaults. */
async function insertSpans(specs: SpanSpec[]): Promise<string[]> {
  const ids: string[] = [];
  const spans: object[] = [];
  const events: object[] = [];
  for (const s of specs) {
    const spanId = s.spanId ?? newSpanId();
    ids.push(spanId);
    const start = us(s.start);
    spans.push({
      project_id: s.projectId,
      trace_id: s.traceId,
      span_id: spanId,
      name: 'op',
      kind: 'internal',
      start_us: start,
      end_us: start + 1000,
      status_code: 'unset',
      service_name: 'api',
      attributes: JSON.stringify(s.attributes),
      resource_attributes: '{"service.name":"api"}',
      canonical_operation: 'CANONICAL_OPERATION_UNKNOWN',
      session_key: s.sessionKey ?? null,
      safety_check: false,
      context_events: 0,
      ingested_at_us: s.ingestedAt !== undefined ? us(s.ingestedAt) : start,
    });
    for (const [i, e] of (s.events ?? []).entries())
      events.push({
        project_id: s.projectId,
        trace_id: s.traceId,
        span_id: spanId,
        event_index: i,
        ts_us: us(e.at),
        name: e.name,
        attributes: JSON.stringify(e.attributes ?? {}),
        ingested_at_us: us(e.at),
      });
  }
  await db.client.insert('spans', spans);
  await db.client.insert('span_events', events);
  return ids;
}

interface LogSpec {
  projectId: string;
  at: At;
  body?: string | null;
  bodyClass?: string;
  traceId?: string;
  attributes?: Record<string, unknown>;
}

async function insertLogs(specs: LogSpec[]): Promise<string[]> {
  const rows = specs.map((l) => ({
    project_id: l.projectId,
    log_id: randomUUID(),
    ts_us: us(l.at),
    body: l.body === undefined ? 'hello' : l.body,
    body_class: l.bodyClass ?? null,
    trace_id: l.traceId ?? null,
    service_name: 'api',
    attributes: JSON.stringify(l.attributes ?? {}),
    resource_attributes: '{"service.name":"api"}',
    ingested_at_us: us(l.at),
  }));
  await db.client.insert('logs', rows);
  return rows.map((r) => r.log_id);
}

/** span id -> attributes, of every stored copy (the last copy read wins; tests that need copies read them apart). */
const attrsOf = async (project: string) =>
  Object.fromEntries(
    (await db.client.query<{ span_id: string; attributes: string }>('SELECT span_id, attributes FROM spans WHERE project_id = {p:String}', { p: project })).map((r) => [
      r.span_id,
      JSON.parse(r.attributes),
    ]),
  );

const content = {
  'gen_ai.input.messages': '[{"role":"user","content":"my card is 4111"}]',
  'GEN_AI.TOOL.CALL.ARGUMENTS': '{"q":"x"}',
  'llm.input_messages.0.message.content': 'hello',
  'gen_ai.request.model': 'gpt-x',
};

describe('ChContentEraser', () => {
  it("removes only the erased classes' keys (exact, differently cased, prefixed) and keeps every other attribute", async () => {
    const t = newTraceId();
    const [a] = await insertSpans([{ projectId: 'p1', traceId: t, start: '2026-01-01T00:00:00Z', attributes: content }]);
    const r = await eraser.erase({ projectId: 'p1', classes: ['model_transcript'] });
    expect(r).toMatchObject({ spans: 1, attributes: 2 });
    expect((await attrsOf('p1'))[a]).toEqual({ 'GEN_AI.TOOL.CALL.ARGUMENTS': '{"q":"x"}', 'gen_ai.request.model': 'gpt-x' });
    expect(await eraser.erase({ projectId: 'p1', classes: ['tool_arguments'] })).toMatchObject({ spans: 1, attributes: 1 });
    expect((await attrsOf('p1'))[a]).toEqual({ 'gen_ai.request.model': 'gpt-x' });
  });

  it('a cut-off time erases only older rows (retention brings deletion forward, never touches newer content)', async () => {
    const t = newTraceId();
    const [old, fresh] = await insertSpans([
      { projectId: 'p2', traceId: t, start: '2026-01-01T00:00:00Z', attributes: content, events: [{ name: 'e', at: '2026-01-01T00:00:00Z', attributes: { 'gen_ai.prompt': 'hi' } }] },
      { projectId: 'p2', traceId: t, start: '2026-01-10T00:00:00Z', attributes: content },
    ]);
    await insertLogs([
      { projectId: 'p2', at: '2026-01-01T00:00:00Z', attributes: { 'gen_ai.completion': 'x', level: 'info' } },
      { projectId: 'p2', at: '2026-01-10T00:00:00Z', attributes: { 'gen_ai.completion': 'y' } },
    ]);
    const r = await eraser.erase({ projectId: 'p2', classes: ['model_transcript'], beforeUs: Date.parse('2026-01-05T00:00:00Z') * 1000 });
    expect(r).toEqual({ spans: 1, spanEvents: 1, logs: 1, attributes: 4, bodies: 0 });
    const after = await attrsOf('p2');
    expect(after[old]['gen_ai.input.messages']).toBeUndefined();
    expect(after[fresh]['gen_ai.input.messages']).toBe(content['gen_ai.input.messages']);
    const logs = await db.client.query<{ attributes: string }>("SELECT attributes FROM logs WHERE project_id = 'p2' ORDER BY ts_us");
    expect(logs.map((l) => JSON.parse(l.attributes))).toEqual([{ level: 'info' }, { 'gen_ai.completion': 'y' }]);
    const events = await db.client.query<{ attributes: string }>("SELECT attributes FROM span_events WHERE project_id = 'p2'");
    expect(events.map((e) => JSON.parse(e.attributes))).toEqual([{}]);
  });

  it('a subject erases the rows of that session, trace or end user only, in spans, their events and their logs', async () => {
    const mine = newTraceId();
    const other = newTraceId();
    const [s1] = await insertSpans([
      { projectId: 'p3', traceId: mine, start: '2026-01-01T00:00:00Z', attributes: content, sessionKey: 'sess-1', events: [{ name: 'e', at: '2026-01-01T00:00:00Z', attributes: { 'gen_ai.prompt': 'a' } }] },
    ]);
    const [s2] = await insertSpans([
      { projectId: 'p3', traceId: other, start: '2026-01-01T00:00:00Z', attributes: { ...content, 'enduser.id': 'u-9' }, events: [{ name: 'e', at: '2026-01-01T00:00:00Z', attributes: { 'gen_ai.prompt': 'b' } }] },
    ]);
    await insertLogs([
      { projectId: 'p3', at: '2026-01-01T00:00:00Z', traceId: mine, attributes: { 'gen_ai.prompt': 'a' } },
      { projectId: 'p3', at: '2026-01-01T00:00:00Z', traceId: other, attributes: { 'gen_ai.prompt': 'b' } },
    ]);
    expect(await eraser.erase({ projectId: 'p3', classes: ['model_transcript'], subject: { kind: 'session_key', id: 'sess-1' } })).toEqual({
      spans: 1,
      spanEvents: 1,
      logs: 1,
      attributes: 4,
      bodies: 0,
    });
    let after = await attrsOf('p3');
    expect(after[s1]['gen_ai.input.messages']).toBeUndefined();
    expect(after[s2]['gen_ai.input.messages']).toBeDefined();
    expect(await eraser.erase({ projectId: 'p3', classes: ['model_transcript'], subject: { kind: 'enduser_id', id: 'u-9' } })).toEqual({
      spans: 1,
      spanEvents: 1,
      logs: 0, // the log carries no enduser.id of its own
      attributes: 3,
      bodies: 0,
    });
    after = await attrsOf('p3');
    expect(after[s2]).toEqual({ 'GEN_AI.TOOL.CALL.ARGUMENTS': '{"q":"x"}', 'gen_ai.request.model': 'gpt-x', 'enduser.id': 'u-9' });
    expect(await eraser.erase({ projectId: 'p3', classes: ['model_transcript'], subject: { kind: 'trace_id', id: other } })).toEqual({
      spans: 0,
      spanEvents: 0,
      logs: 1,
      attributes: 1,
      bodies: 0,
    });
  });

  it("another project's rows are never touched; a value that merely mentions a key is left alone", async () => {
    const [x] = await insertSpans([{ projectId: 'p4', traceId: newTraceId(), start: '2026-01-01T00:00:00Z', attributes: content }]);
    await insertSpans([{ projectId: 'p5', traceId: newTraceId(), start: '2026-01-01T00:00:00Z', attributes: { note: '"gen_ai.prompt is a key' } }]);
    expect(await eraser.mayHaveContent({ projectId: 'p5', classes: ['model_transcript'] })).toBe(true);
    expect(await eraser.erase({ projectId: 'p5', classes: ['model_transcript'] })).toEqual({ spans: 0, spanEvents: 0, logs: 0, attributes: 0, bodies: 0 });
    expect((await attrsOf('p4'))[x]).toEqual(content);
    expect(await eraser.mayHaveContent({ projectId: 'p5', classes: [] })).toBe(false);
    expect(await eraser.erase({ projectId: 'p4', classes: [] })).toEqual({ spans: 0, spanEvents: 0, logs: 0, attributes: 0, bodies: 0 });
  });

  it('pages through more rows than one page', async () => {
    const t = newTraceId();
    await insertSpans(Array.from({ length: 601 }, (_, i) => ({ projectId: 'p6', traceId: t, start: 1_700_000_000_000_000 + i, attributes: content })));
    const r = await eraser.erase({ projectId: 'p6', classes: ['model_transcript', 'tool_arguments'] });
    expect(r).toMatchObject({ spans: 601, attributes: 3 * 601 });
    expect(Object.values(await attrsOf('p6')).every((a) => Object.keys(a).join() === 'gen_ai.request.model')).toBe(true);
  });

  it('a GenAI event log body of an erased class becomes null (retention cut-off); a row rewritten both ways counts once in logs', async () => {
    const [both, bodyOnly, fresh, tool, plain] = await insertLogs([
      { projectId: 'p7', at: '2026-01-01T00:00:00Z', body: 'hi model', bodyClass: 'model_transcript', attributes: { 'gen_ai.prompt': 'x', level: 'info' } },
      { projectId: 'p7', at: '2026-01-01T00:00:01Z', body: 'the answer', bodyClass: 'model_transcript' },
      { projectId: 'p7', at: '2026-01-10T00:00:00Z', body: 'too new', bodyClass: 'model_transcript' },
      { projectId: 'p7', at: '2026-01-01T00:00:02Z', body: '{"r":1}', bodyClass: 'tool_arguments' },
      { projectId: 'p7', at: '2026-01-01T00:00:03Z', body: 'plain text' },
    ]);
    const scope = { projectId: 'p7', classes: ['model_transcript' as const], beforeUs: Date.parse('2026-01-05T00:00:00Z') * 1000 };
    expect(await eraser.mayHaveContent(scope)).toBe(true);
    expect(await eraser.erase(scope)).toEqual({ spans: 0, spanEvents: 0, logs: 2, attributes: 1, bodies: 2 });
    const bodies = Object.fromEntries(
      (await db.client.query<{ log_id: string; body: string | null }>("SELECT log_id, body FROM logs WHERE project_id = 'p7'")).map((r) => [r.log_id, r.body]),
    );
    expect([bodies[both], bodies[bodyOnly], bodies[fresh], bodies[tool], bodies[plain]]).toEqual([null, null, 'too new', '{"r":1}', 'plain text']);
    expect(await eraser.mayHaveContent(scope)).toBe(false);
    expect(await eraser.erase(scope)).toEqual({ spans: 0, spanEvents: 0, logs: 0, attributes: 0, bodies: 0 });
  });

  it('rows are updated in place: every copy of a span is erased, copies, ingest times and other columns stay; a retried erasure changes and counts nothing', async () => {
    const t = newTraceId();
    const spanId = newSpanId();
    await insertSpans([
      { projectId: 'p8', traceId: t, spanId, start: '2026-01-01T00:00:00Z', ingestedAt: '2026-01-01T00:00:01Z', attributes: content, sessionKey: 's' },
      { projectId: 'p8', traceId: t, spanId, start: '2026-01-01T00:00:00Z', ingestedAt: '2026-01-01T00:00:09Z', attributes: content, sessionKey: 's' },
    ]);
    const before = await db.client.query("SELECT * EXCEPT attributes FROM spans WHERE project_id = 'p8' ORDER BY ingested_at_us");
    expect(await eraser.erase({ projectId: 'p8', classes: [...CONTENT_CLASSES] })).toEqual({ spans: 2, spanEvents: 0, logs: 0, attributes: 6, bodies: 0 });
    const rows = await db.client.query<{ attributes: string }>("SELECT * FROM spans WHERE project_id = 'p8' ORDER BY ingested_at_us");
    expect(rows.map((r) => JSON.parse(r.attributes))).toEqual([{ 'gen_ai.request.model': 'gpt-x' }, { 'gen_ai.request.model': 'gpt-x' }]);
    expect(rows.map(({ attributes: _, ...rest }) => rest)).toEqual(before);
    expect(await eraser.erase({ projectId: 'p8', classes: [...CONTENT_CLASSES] })).toEqual({ spans: 0, spanEvents: 0, logs: 0, attributes: 0, bodies: 0 });
    expect(await db.client.query("SELECT count() AS n FROM spans WHERE project_id = 'p8'")).toEqual([{ n: '2' }]);
  });

  it('the copies of one row are read whole when a page ends among them, and when they fill a page alone', async () => {
    const t = newTraceId();
    const id = (i: number) => i.toString(16).padStart(16, '0');
    // 498 spans, then one stored 4 times (rows 499-502: the first page ends among its copies), then one stored
    // 600 times (more copies than a page holds), then one more.
    await insertSpans([
      ...Array.from({ length: 498 }, (_, i) => ({ projectId: 'p9', traceId: t, spanId: id(i), start: 1_700_000_000_000_000 + i, attributes: content })),
      ...Array.from({ length: 4 }, (_, i) => ({ projectId: 'p9', traceId: t, spanId: id(498), start: 1_700_000_000_000_498, ingestedAt: 1_700_000_000_000_498 + i, attributes: content })),
      ...Array.from({ length: 600 }, (_, i) => ({ projectId: 'p9', traceId: t, spanId: id(499), start: 1_700_000_000_000_499, ingestedAt: 1_700_000_000_000_499 + i, attributes: content })),
      { projectId: 'p9', traceId: t, spanId: id(500), start: 1_700_000_000_000_500, attributes: content },
    ]);
    expect(await eraser.erase({ projectId: 'p9', classes: ['model_transcript'] })).toEqual({ spans: 1103, spanEvents: 0, logs: 0, attributes: 2 * 1103, bodies: 0 });
    const left = await db.client.query("SELECT count() AS n FROM spans WHERE project_id = 'p9' AND attributes LIKE '%gen_ai.input.messages%'");
    expect(left).toEqual([{ n: '0' }]);
  });

  it('the rewritten JSON is stored as written, whatever it holds, over as many mutations as its size needs', async () => {
    const t = newTraceId();
    const odd = { "it's": 'a \\ back\\slash\nnew line \u0001 é 😀 \'"', '\\"k': [1, { x: null }], n: 1e21 };
    const specs = Array.from({ length: 400 }, (_, i) => ({
      projectId: 'p10',
      traceId: t,
      start: 1_700_000_000_000_000 + i,
      attributes: { ...content, ...odd, pad: `${i}:${'x'.repeat(1000)}` },
    }));
    const ids = await insertSpans(specs);
    expect(await eraser.erase({ projectId: 'p10', classes: ['model_transcript', 'tool_arguments'] })).toMatchObject({ spans: 400, attributes: 1200 });
    const stored = new Map(
      (await db.client.query<{ span_id: string; attributes: string }>("SELECT span_id, attributes FROM spans WHERE project_id = 'p10'")).map((r) => [r.span_id, r.attributes]),
    );
    ids.forEach((id, i) => expect(stored.get(id)).toBe(JSON.stringify({ 'gen_ai.request.model': 'gpt-x', ...odd, pad: `${i}:${'x'.repeat(1000)}` })));
  });

  it('withoutClasses: the rule of the embedded engine; undefined when nothing of the classes is there or the JSON is unreadable', () => {
    expect(withoutClasses('{"a":1}', new Set(['model_transcript']))).toBeUndefined();
    expect(withoutClasses('not json', new Set(['model_transcript']))).toBeUndefined();
    const classes = new Set(['model_transcript', 'tool_arguments'] as const);
    for (const json of [
      JSON.stringify(content),
      '{"n":100000000000000000000,"gen_ai.prompt":"x"}',
      '{"Gen_AI.Prompt.0.Content":"x","ai.toolCall.args":{"a":[1,2]},"keep":"\\"gen_ai.prompt"}',
      '{"2":1,"1":"x","input.value":"y"}',
      '[1,2]',
    ])
      expect(withoutClasses(json, classes), json).toEqual(duckWithoutClasses(json, classes));
  });
});
