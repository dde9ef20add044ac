/**
 * Erasure of recorded content (docs/content-policy.md "Erasure"): only the attributes of the erased
 * classes go, only in the rows of the scope (project, cut-off time, subject); every other attribute and
 * column stays.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentEraser, withoutClasses } from './content-eraser.js';
import { openTelemetryDb, type TelemetryDb } from './open.js';
import { insertLogs, insertSpans, newTraceId } from './trace-log-fixtures.js';
import { rows } from './statements.js';

let db: TelemetryDb;
let eraser: ContentEraser;

beforeAll(async () => {
  db = await openTelemetryDb({ memory: true });
  eraser = new ContentEraser(db);
});
afterAll(() => db.close());

const attrsOf = async (project: string) =>
  db.read(async (c) =>
    Object.fromEntries(
      (await rows(c, 'SELECT span_id, attributes FROM spans WHERE project_id = $p', { p: project })).map((r) => [r[0] as string, JSON.parse(r[1] as string)]),
    ),
  );

const content = {
  'gen_ai.input.messages': '[{"role":"user","content":"my card is 4111"}]',
  'GEN_AI.TOOL.CALL.ARGUMENTS': '{"q":"x"}',
  'llm.input_messages.0.message.content': 'hello',
  'gen_ai.request.model': 'gpt-x',
};

describe('ContentEraser', () => {
  it('removes only the erased classes\' keys (exact, differently cased, prefixed) and keeps every other attribute', async () => {
    const t = newTraceId();
    const [a] = await insertSpans(db, [{ projectId: 'p1', traceId: t, start: '2026-01-01T00:00:00Z', attributes: content }]);
    const r = await eraser.erase({ projectId: 'p1', classes: ['model_transcript'] });
    expect(r).toMatchObject({ spans: 1, attributes: 2 });
    expect((await attrsOf('p1'))[a]).toEqual({ 'GEN_AI.TOOL.CALL.ARGUMENTS': '{"q":"x"}', 'gen_ai.request.model': 'gpt-x' });
    expect(await eraser.erase({ projectId: 'p1', classes: ['tool_arguments'] })).toMatchObject({ spans: 1, attributes: 1 });
    expect((await attrsOf('p1'))[a]).toEqual({ 'gen_ai.request.model': 'gpt-x' });
  });

  it('a cut-off time erases only older rows (retention brings deletion forward, never touches newer content)', async () => {
    const t = newTraceId();
    const [old, fresh] = await insertSpans(db, [
      { projectId: 'p2', traceId: t, start: '2026-01-01T00:00:00Z', attributes: content, events: [{ name: 'e', at: '2026-01-01T00:00:00Z', attributes: { 'gen_ai.prompt': 'hi' } }] },
      { projectId: 'p2', traceId: t, start: '2026-01-10T00:00:00Z', attributes: content },
    ]);
    await insertLogs(db, [
      { projectId: 'p2', at: '2026-01-01T00:00:00Z', attributes: { 'gen_ai.completion': 'x', level: 'info' } },
      { projectId: 'p2', at: '2026-01-10T00:00:00Z', attributes: { 'gen_ai.completion': 'y' } },
    ]);
    const r = await eraser.erase({ projectId: 'p2', classes: ['model_transcript'], beforeUs: Date.parse('2026-01-05T00:00:00Z') * 1000 });
    expect(r).toEqual({ spans: 1, spanEvents: 1, logs: 1, attributes: 4, bodies: 0 });
    const after = await attrsOf('p2');
    expect(after[old]['gen_ai.input.messages']).toBeUndefined();
    expect(after[fresh]['gen_ai.input.messages']).toBe(content['gen_ai.input.messages']);
    const logs = await db.read((c) => rows(c, "SELECT attributes FROM logs WHERE project_id = 'p2' ORDER BY ts_us", {}));
    expect(logs.map((l) => JSON.parse(l[0] as string))).toEqual([{ level: 'info' }, { 'gen_ai.completion': 'y' }]);
  });

  it('a subject erases the rows of that session, trace or end user only, in spans, their events and their logs', async () => {
    const mine = newTraceId();
    const other = newTraceId();
    const [s1] = await insertSpans(db, [{ projectId: 'p3', traceId: mine, start: '2026-01-01T00:00:00Z', attributes: content }]);
    const [s2] = await insertSpans(db, [{ projectId: 'p3', traceId: other, start: '2026-01-01T00:00:00Z', attributes: { ...content, 'enduser.id': 'u-9' } }]);
    await db.writer.run(`UPDATE spans SET session_key = 'sess-1' WHERE trace_id = '${mine}'`);
    await insertLogs(db, [{ projectId: 'p3', at: '2026-01-01T00:00:00Z', traceId: mine, attributes: { 'gen_ai.prompt': 'a' } }]);
    expect(await eraser.erase({ projectId: 'p3', classes: ['model_transcript'], subject: { kind: 'session_key', id: 'sess-1' } })).toEqual({
      spans: 1,
      spanEvents: 0,
      logs: 1,
      attributes: 3,
      bodies: 0,
    });
    let after = await attrsOf('p3');
    expect(after[s1]['gen_ai.input.messages']).toBeUndefined();
    expect(after[s2]['gen_ai.input.messages']).toBeDefined();
    expect(await eraser.erase({ projectId: 'p3', classes: ['model_transcript'], subject: { kind: 'enduser_id', id: 'u-9' } })).toMatchObject({ spans: 1 });
    after = await attrsOf('p3');
    expect(after[s2]).toEqual({ 'GEN_AI.TOOL.CALL.ARGUMENTS': '{"q":"x"}', 'gen_ai.request.model': 'gpt-x', 'enduser.id': 'u-9' });
  });

  it('another project\'s rows are never touched; a value that merely mentions a key is left alone', async () => {
    const [x] = await insertSpans(db, [{ projectId: 'p4', traceId: newTraceId(), start: '2026-01-01T00:00:00Z', attributes: content }]);
    await insertSpans(db, [{ projectId: 'p5', traceId: newTraceId(), start: '2026-01-01T00:00:00Z', attributes: { note: '"gen_ai.prompt is a key' } }]);
    expect(await eraser.erase({ projectId: 'p5', classes: ['model_transcript'] })).toEqual({ spans: 0, spanEvents: 0, logs: 0, attributes: 0, bodies: 0 });
    expect((await attrsOf('p4'))[x]).toEqual(content);
  });

  it('pages through more rows than one page', async () => {
    const t = newTraceId();
    await insertSpans(db, Array.from({ length: 601 }, (_, i) => ({ projectId: 'p6', traceId: t, start: 1_700_000_000_000_000 + i, attributes: content })));
    const r = await eraser.erase({ projectId: 'p6', classes: ['model_transcript', 'tool_arguments'] });
    expect(r).toMatchObject({ spans: 601, attributes: 3 * 601 });
    expect(Object.values(await attrsOf('p6')).every((a) => Object.keys(a).join() === 'gen_ai.request.model')).toBe(true);
  });

  it('withoutClasses: undefined when nothing of the classes is there or the JSON is unreadable', () => {
    expect(withoutClasses('{"a":1}', new Set(['model_transcript']))).toBeUndefined();
    expect(withoutClasses('not json', new Set(['model_transcript']))).toBeUndefined();
  });

  it('a GenAI event log body of an erased class becomes null (retention cut-off); a row rewritten both ways counts once in logs', async () => {
    const [both, bodyOnly, fresh, tool, plain] = await insertLogs(db, [
      { projectId: 'p6', at: '2026-01-01T00:00:00Z', body: 'hi model', bodyClass: 'model_transcript', attributes: { 'gen_ai.prompt': 'x', level: 'info' } },
      { projectId: 'p6', at: '2026-01-01T00:00:01Z', body: 'the answer', bodyClass: 'model_transcript' },
      { projectId: 'p6', at: '2026-01-10T00:00:00Z', body: 'too new', bodyClass: 'model_transcript' },
      { projectId: 'p6', at: '2026-01-01T00:00:02Z', body: '{"r":1}', bodyClass: 'tool_arguments' },
      { projectId: 'p6', at: '2026-01-01T00:00:03Z', body: 'plain text' },
    ]);
    const scope = { projectId: 'p6', classes: ['model_transcript' as const], beforeUs: Date.parse('2026-01-05T00:00:00Z') * 1000 };
    expect(await eraser.mayHaveContent({ ...scope, projectId: 'p6' })).toBe(true);
    expect(await eraser.erase(scope)).toEqual({ spans: 0, spanEvents: 0, logs: 2, attributes: 1, bodies: 2 });
    const bodies = Object.fromEntries(
      (await db.read((c) => rows(c, "SELECT log_id, body FROM logs WHERE project_id = 'p6'", {}))).map((r) => [r[0] as string, r[1] as string | null]),
    );
    expect([bodies[both], bodies[bodyOnly], bodies[fresh], bodies[tool], bodies[plain]]).toEqual([null, null, 'too new', '{"r":1}', 'plain text']);
    expect(await eraser.mayHaveContent(scope)).toBe(false);
    expect(await eraser.erase(scope)).toEqual({ spans: 0, spanEvents: 0, logs: 0, attributes: 0, bodies: 0 });
  });
});
