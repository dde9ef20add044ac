/**
 * Erasure of recorded content (docs/content-policy.md "Erasure"): "A scheduled erasure (on the job
 * runner) brings deletion forward and writes mediated receipts with policy content:retention_window@v1.
 * On-demand subject erasure writes content:subject_erasure@v1." A project-scoped credential is pinned to
 * its own project on erasure routes too (rule 6).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { allowAllContent } from '../../testing/content-policy.js';
import { insertSpans, newTraceId } from '../../testing/trace-fixtures.js';

let t: TestApp;
const clock = fixedClock('2026-03-10T12:00:00.000Z');
beforeAll(async () => {
  t = await testApp({ clock });
});
afterAll(() => t.close());

type Obj = Record<string, any>;
const transcript = { 'gen_ai.input.messages': '[{"role":"user","content":"secret"}]', 'gen_ai.tool.call.arguments': '{"a":1}', 'gen_ai.request.model': 'm' };

async function project(scopes = ['governance:read', 'governance:write', 'traces:read', 'agents:read', 'agents:content:read']) {
  const p = await projectWithKey(t, scopes, 'erasure');
  await allowAllContent(t, p.projectId);
  return p;
}

const erase = (projectId: string, body: Obj, key?: string) => t.call({ method: 'POST', url: `/api/v1/projects/${projectId}/content-erasures`, key, payload: body });
const spanAttrs = async (projectId: string, traceId: string, key: string) => {
  const r = await t.call({ method: 'GET', url: `/api/v1/traces/${traceId}?project_id=${projectId}`, key });
  expect(r.statusCode).toBe(200);
  return (r.json().spans as Obj[]).map((s) => s.attributes as Obj);
};
const receipt = async (projectId: string, actionId: string, key: string) => {
  const r = await t.call({ method: 'GET', url: `/api/v1/action-receipts/${actionId}?project_id=${projectId}`, key });
  expect(r.statusCode).toBe(200);
  return r.json() as Obj;
};

describe('POST /projects/{projectId}/content-erasures (on-demand subject erasure)', () => {
  it('erases the subject\'s content of every class (times, ids and other attributes stay), and writes a mediated receipt under content:subject_erasure@v1', async () => {
    const { projectId, key } = await project();
    const mine = newTraceId();
    const other = newTraceId();
    await insertSpans(t.ctx.telemetry, [
      { projectId, traceId: mine, start: '2026-03-10T11:00:00Z', attributes: transcript },
      { projectId, traceId: other, start: '2026-03-10T11:00:00Z', attributes: transcript },
    ]);
    const r = await erase(projectId, { subject_kind: 'trace_id', subject_id: mine, reason: 'user asked to be forgotten' }, key);
    expect(r.statusCode).toBe(201);
    const e = r.json();
    expect(e).toMatchObject({
      project_id: projectId,
      kind: 'subject',
      subject_kind: 'trace_id',
      subject_id: mine,
      status: 'completed',
      counts: { spans: 1, span_events: 0, logs: 0, attributes: 2, log_bodies: 0 },
      content_classes: ['model_transcript', 'tool_arguments', 'replay_dom', 'person_properties', 'memory_item', 'group_properties'],
    });
    expect(e.requested_by).toMatch(/^(user|api_key):/);
    expect(await spanAttrs(projectId, mine, key)).toEqual([{ 'gen_ai.request.model': 'm' }]);
    expect(await spanAttrs(projectId, other, key)).toEqual([transcript]);

    const rc = await receipt(projectId, e.id, key);
    expect(rc).toMatchObject({
      authority: 'RECEIPT_AUTHORITY_MEDIATED',
      final_state: 'RECEIPT_STATE_EXECUTED',
      policy_id: 'content:subject_erasure',
      policy_version: 'v1',
      requester_principal: e.requested_by,
      destructive: true,
    });
    expect((rc.entries as Obj[]).map((x) => x.state)).toEqual(['RECEIPT_STATE_INTENDED', 'RECEIPT_STATE_AUTHORIZED', 'RECEIPT_STATE_EXECUTED']);
    // Readable afterwards, in the list and alone.
    expect((await t.call({ method: 'GET', url: `/api/v1/projects/${projectId}/content-erasures/${e.id}`, key })).json()).toEqual(e);
    const list = (await t.call({ method: 'GET', url: `/api/v1/projects/${projectId}/content-erasures`, key })).json();
    expect(list).toEqual({ erasures: [e], next_cursor: null });
  });

  it('content_classes narrows the erasure to those classes', async () => {
    const { projectId, key } = await project();
    const tr = newTraceId();
    await insertSpans(t.ctx.telemetry, [{ projectId, traceId: tr, start: '2026-03-10T11:00:00Z', attributes: transcript }]);
    const r = await erase(projectId, { subject_kind: 'trace_id', subject_id: tr, content_classes: ['tool_arguments'], reason: 'r' }, key);
    expect(r.json()).toMatchObject({ content_classes: ['tool_arguments'], counts: { attributes: 1 } });
    expect(await spanAttrs(projectId, tr, key)).toEqual([{ 'gen_ai.input.messages': transcript['gen_ai.input.messages'], 'gen_ai.request.model': 'm' }]);
  });

  it('request_id: the same principal gets the first erasure back (200, nothing new); another principal 409 revealing nothing', async () => {
    const { projectId, key } = await project();
    const body = { subject_kind: 'session_key', subject_id: 's-1', reason: 'r', request_id: `req-${projectId}` };
    const [a, b] = await Promise.all([erase(projectId, body, key), erase(projectId, body, key)]);
    expect([a.statusCode, b.statusCode].sort()).toEqual([200, 201]);
    expect(a.json().id).toBe(b.json().id);
    const again = await erase(projectId, body, key);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(a.json());
    const other = await erase(projectId, body); // the owner key: another principal
    expect(other.statusCode).toBe(409);
    expect(other.json()).toEqual({ error: 'conflict', message: 'request_id is already used by another request' });
    expect((await t.call({ method: 'GET', url: `/api/v1/projects/${projectId}/content-erasures`, key })).json().erasures).toHaveLength(1);
  });

  it('rule 6: a project-scoped credential is pinned to its project: another project is 404 as a missing one, and nothing is erased there', async () => {
    const mine = await project();
    const theirs = await project();
    const tr = newTraceId();
    await insertSpans(t.ctx.telemetry, [{ projectId: theirs.projectId, traceId: tr, start: '2026-03-10T11:00:00Z', attributes: transcript }]);
    const r = await erase(theirs.projectId, { subject_kind: 'trace_id', subject_id: tr, reason: 'r' }, mine.key);
    expect(r.statusCode).toBe(404);
    expect(r.json().error).toBe('not_found');
    expect((await t.call({ method: 'GET', url: `/api/v1/projects/${theirs.projectId}/content-erasures`, key: mine.key })).statusCode).toBe(404);
    expect(await spanAttrs(theirs.projectId, tr, theirs.key)).toEqual([transcript]);
  });

  it('scopes: governance:write to erase, governance:read to read', async () => {
    const { projectId, key } = await projectWithKey(t, ['governance:read'], 'reader');
    expect((await erase(projectId, { subject_kind: 'trace_id', subject_id: 'x', reason: 'r' }, key)).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url: `/api/v1/projects/${projectId}/content-erasures`, key })).statusCode).toBe(200);
    const writer = await projectWithKey(t, ['traces:read'], 'nope');
    expect((await t.call({ method: 'GET', url: `/api/v1/projects/${writer.projectId}/content-erasures`, key: writer.key })).statusCode).toBe(403);
  });

  it('bad input is a 400 in the error shape and records nothing', async () => {
    const { projectId, key } = await project();
    const bad: [string, unknown][] = [
      ['unknown subject kind', { subject_kind: 'email', subject_id: 'x', reason: 'r' }],
      ['missing reason', { subject_kind: 'trace_id', subject_id: 'x' }],
      ['blank reason', { subject_kind: 'trace_id', subject_id: 'x', reason: '   ' }],
      ['reason too long', { subject_kind: 'trace_id', subject_id: 'x', reason: 'r'.repeat(1025) }],
      ['empty subject', { subject_kind: 'trace_id', subject_id: '', reason: 'r' }],
      ['huge subject', { subject_kind: 'trace_id', subject_id: 'x'.repeat(10_000), reason: 'r' }],
      ['unknown class', { subject_kind: 'trace_id', subject_id: 'x', reason: 'r', content_classes: ['secrets'] }],
      ['empty class list', { subject_kind: 'trace_id', subject_id: 'x', reason: 'r', content_classes: [] }],
      ['class twice', { subject_kind: 'trace_id', subject_id: 'x', reason: 'r', content_classes: ['memory_item', 'memory_item'] }],
      ['actor in the body', { subject_kind: 'trace_id', subject_id: 'x', reason: 'r', requested_by: 'user:someone' }],
      ['unknown field', { subject_kind: 'trace_id', subject_id: 'x', reason: 'r', extra: 1 }],
      ['nested junk', { subject_kind: { a: { b: { c: [] } } }, subject_id: 'x', reason: 'r' }],
      ['array body', [1, 2, 3]],
      ['NUL in subject', { subject_kind: 'trace_id', subject_id: 'a\u0000b', reason: 'r' }],
    ];
    for (const [what, body] of bad) {
      const r = await erase(projectId, body as Obj, key);
      expect(r.statusCode, what).toBe(400);
      expect(Object.keys(r.json()).sort(), what).toEqual(expect.arrayContaining(['error', 'message']));
    }
    const malformed = await t.call({ method: 'POST', url: `/api/v1/projects/${projectId}/content-erasures`, key, payload: '{"subject_kind":', headers: { 'content-type': 'application/json' } });
    expect(malformed.statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: `/api/v1/projects/${projectId}/content-erasures`, key })).json().erasures).toEqual([]);
    expect((await t.call({ method: 'GET', url: `/api/v1/projects/${projectId}/content-erasures?kind=weekly`, key })).statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: `/api/v1/projects/${projectId}/content-erasures/nope`, key })).statusCode).toBe(404);
  });
});

describe('scheduled retention erasure (job content.retention_erasure)', () => {
  it('brings deletion forward for classes with a window only, records the erasure with a content:retention_window@v1 receipt; an idle run records nothing', async () => {
    const { projectId, key } = await project();
    const put = await t.call({
      method: 'PUT',
      url: `/api/v1/projects/${projectId}/content-policy/retention`,
      key,
      payload: { windows: [{ content_class: 'model_transcript', retention_days: 2 }] },
    });
    expect(put.statusCode).toBe(200);
    const old = newTraceId();
    const fresh = newTraceId();
    await insertSpans(t.ctx.telemetry, [
      { projectId, traceId: old, start: '2026-03-07T12:00:00Z', attributes: transcript },
      { projectId, traceId: fresh, start: '2026-03-09T13:00:00Z', attributes: transcript },
    ]);
    const done = (await t.ctx.contentErasure.sweepRetention(clock.now())).filter((e) => e.projectId === projectId);
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ kind: 'retention', contentClasses: ['model_transcript'], beforeAt: '2026-03-08T12:00:00.000Z', requestedBy: 'platform:content_retention', status: 'completed' });
    // Only the transcript of the old trace went; tool arguments have no window and stay.
    expect(await spanAttrs(projectId, old, key)).toEqual([{ 'gen_ai.tool.call.arguments': '{"a":1}', 'gen_ai.request.model': 'm' }]);
    expect(await spanAttrs(projectId, fresh, key)).toEqual([transcript]);
    const rc = await receipt(projectId, done[0].id, key);
    expect(rc).toMatchObject({ authority: 'RECEIPT_AUTHORITY_MEDIATED', final_state: 'RECEIPT_STATE_EXECUTED', policy_id: 'content:retention_window', policy_version: 'v1' });
    expect((await t.ctx.contentErasure.sweepRetention(clock.now())).filter((e) => e.projectId === projectId)).toEqual([]);
    const listed = (await t.call({ method: 'GET', url: `/api/v1/projects/${projectId}/content-erasures?kind=retention`, key })).json();
    expect(listed.erasures.map((e: Obj) => e.id)).toEqual([done[0].id]);
  });

  it('runs hourly on the job runner (last in this file: it moves the clock)', async () => {
    const { projectId, key } = await project();
    await t.call({ method: 'PUT', url: `/api/v1/projects/${projectId}/content-policy/retention`, key, payload: { windows: [{ content_class: 'tool_arguments', retention_days: 1 }] } });
    const tr = newTraceId();
    await insertSpans(t.ctx.telemetry, [{ projectId, traceId: tr, start: '2026-03-09T00:00:00Z', attributes: transcript }]);
    clock.advance(2 * 3_600_000);
    await t.ctx.jobs.runDue();
    const listed = (await t.call({ method: 'GET', url: `/api/v1/projects/${projectId}/content-erasures`, key })).json();
    expect(listed.erasures).toMatchObject([{ kind: 'retention', content_classes: ['tool_arguments'], status: 'completed', counts: { spans: 1, attributes: 1 } }]);
  });
});
