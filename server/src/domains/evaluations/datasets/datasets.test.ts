/**
 * Datasets over HTTP, with real runs sent by the OpenTelemetry SDK and judgments recorded by signed-in
 * people: "A dataset has editable metadata and immutable versions", "promoting the same run twice gives
 * one case, and a case keeps its id across versions", "classes of content withheld by the project's
 * content settings are recorded rather than silently missing", "Only a human-reviewed run can be
 * promoted", "a missing or mismatched review is refused before anything is frozen", "The frozen item
 * records review id, reviewer and review time", "promotion or removal seals a new version; sealed versions
 * never change", "a version cited by a stored score, and a dataset holding one, cannot be removed",
 * "version must be named", scopes, foreign projects and bad input.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { allowAllContent, gridRules, setContentPolicy } from '../../../testing/content-policy.js';
import { connectAgent, withToken } from '../../../testing/oauth.js';
import { sendAgentRun } from '../../../testing/otel-agent-run.js';
import { addPerson, signIn, type Browser } from '../../../testing/people.js';
import { AgentFactsReader } from '../scoring/facts.js';
import { caseFacts, caseId, type DatasetCase } from './case.js';

let t: TestApp;
let base: string;
let admin: Browser;
let adminId: string;
let member: Browser;
beforeAll(async () => {
  t = await testApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const a = await addPerson(t, 'admin');
  adminId = a.userId;
  admin = await signIn(t, a);
  member = await signIn(t, await addPerson(t, 'member'));
});
afterAll(async () => t?.close());

const CONTENT = { prompt: '[{"role":"user","content":"where is my order?"}]', completion: '[{"role":"assistant","content":"on its way"}]', toolArguments: '{"q":"order 7"}', toolResult: '{"status":"shipped"}' };

async function project(opts: { content?: 'all' | 'no-tool-export' | 'none' } = {}) {
  const p = await projectWithKey(t, ['ingest:write', 'agents:read', 'evals:read', 'evals:write', 'scores:read', 'scores:write']);
  if (opts.content === 'all' || opts.content === undefined) await allowAllContent(t, p.projectId);
  if (opts.content === 'no-tool-export') await setContentPolicy(t, p.projectId, gridRules((c, b) => (c === 'tool_arguments' && b === 'export' ? 'deny' : 'allow')));
  const q = `project_id=${p.projectId}`;
  const run = async (content: Partial<typeof CONTENT> | null = CONTENT) =>
    (await sendAgentRun({ base, format: 'json', key: p.key, ...(content ? { content } : {}) })).root.spanContext().traceId;
  const judge = async (runId: string, who: Browser = admin) => {
    const r = await who.call({ method: 'POST', url: `/api/v1/agent-runs/${runId}/annotations?${q}`, payload: { metric_name: 'quality', label: 'good' } });
    expect(r.statusCode, r.body).toBe(201);
    return r.json().annotation as { annotation_id: string; created_at: string };
  };
  const create = async (datasetId = 'support', extra: object = {}) => {
    const r = await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets?${q}`, payload: { dataset_id: datasetId, ...extra } });
    expect(r.statusCode, r.body).toBe(201);
    return r.json();
  };
  const subject = (runId: string, annotationId: string) => ({ subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: runId, review_annotation_id: annotationId });
  const promote = (datasetId: string, subjects: unknown[], who: Browser = admin) =>
    who.call({ method: 'POST', url: `/api/v1/evaluation/datasets/${datasetId}/promotions?${q}`, payload: { subjects } });
  const remove = (datasetId: string, itemIds: unknown) => admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets/${datasetId}/removals?${q}`, payload: { item_ids: itemIds } });
  const items = (datasetId: string, version: string | number, extra = '') => t.call({ method: 'GET', url: `/api/v1/evaluation/datasets/${datasetId}/versions/${version}/items?${q}${extra}`, key: p.key });
  const get = (datasetId: string) => t.call({ method: 'GET', url: `/api/v1/evaluation/datasets/${datasetId}?${q}`, key: p.key });
  const replay = (datasetId: string, version: number | string, itemId: string, plan: unknown) =>
    t.call({ method: 'POST', url: `/api/v1/evaluation/datasets/${datasetId}/versions/${version}/items/${itemId}/replays?${q}`, key: p.key, payload: plan as object });
  /** A dataset holding one reviewed run (version 1). */
  const seeded = async (datasetId = 'support', content: Partial<typeof CONTENT> | null = CONTENT) => {
    await create(datasetId);
    const runId = await run(content);
    const review = await judge(runId);
    const r = await promote(datasetId, [subject(runId, review.annotation_id)]);
    expect(r.statusCode, r.body).toBe(201);
    const item = (await items(datasetId, 1)).json().items[0];
    return { runId, review, itemId: item.item_id as string, case: item.case as DatasetCase };
  };
  return { ...p, q, run, judge, create, subject, promote, remove, items, get, replay, seeded };
}

/** Row counts of every control table (to show a request wrote nothing). */
async function tableCounts(): Promise<Record<string, number>> {
  const tables =
    t.ctx.control.dialect === 'postgres'
      ? await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(t.db)
      : await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(t.db);
  const out: Record<string, number> = {};
  for (const { name } of tables.rows) out[name] = Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(name)}`.execute(t.db)).rows[0]!.n);
  return out;
}

describe('dataset metadata', () => {
  it('create answers 201 with no version yet; the same id again is 409; GET shows it with its versions; list pages by id', async () => {
    const p = await project();
    const d = await p.create('alpha', { display_name: 'Alpha', description: 'first' });
    expect(d).toMatchObject({ project_id: p.projectId, dataset_id: 'alpha', display_name: 'Alpha', description: 'first', latest_version: 0, created_by: `user:${adminId}` });
    const again = await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets?${p.q}`, payload: { dataset_id: 'alpha' } });
    expect(again.statusCode).toBe(409);
    await p.create('beta');
    expect((await p.get('alpha')).json()).toMatchObject({ dataset_id: 'alpha', versions: [] });
    const page1 = await t.call({ method: 'GET', url: `/api/v1/evaluation/datasets?${p.q}&limit=1`, key: p.key });
    expect(page1.json().datasets.map((x: { dataset_id: string }) => x.dataset_id)).toEqual(['alpha']);
    const page2 = await t.call({ method: 'GET', url: `/api/v1/evaluation/datasets?${p.q}&limit=1&cursor=${page1.json().next_cursor}`, key: p.key });
    expect(page2.json()).toMatchObject({ datasets: [{ dataset_id: 'beta' }], next_cursor: null });
  });

  it('"A dataset has editable metadata": PATCH changes display_name and description, never a version', async () => {
    const p = await project();
    const s = await p.seeded('edit');
    const r = await admin.call({ method: 'PATCH', url: `/api/v1/evaluation/datasets/edit?${p.q}`, payload: { display_name: 'Edited', description: 'now described' } });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ display_name: 'Edited', description: 'now described', latest_version: 1 });
    expect((await p.items('edit', 1)).json().items.map((i: { item_id: string }) => i.item_id)).toEqual([s.itemId]);
    expect((await admin.call({ method: 'PATCH', url: `/api/v1/evaluation/datasets/edit?${p.q}`, payload: {} })).statusCode).toBe(400);
    expect((await admin.call({ method: 'PATCH', url: `/api/v1/evaluation/datasets/nope?${p.q}`, payload: { description: 'x' } })).statusCode).toBe(404);
  });

  it('bad input is 400 in the error shape and creates nothing: id charset and length, wrong types, unknown and actor fields, malformed JSON', async () => {
    const p = await project();
    const bodies: unknown[] = [
      { dataset_id: 'Upper' },
      { dataset_id: 'has space' },
      { dataset_id: 'x'.repeat(129) },
      { dataset_id: '' },
      { dataset_id: 7 },
      { dataset_id: 'ok', display_name: '   ' },
      { dataset_id: 'ok', display_name: 'x'.repeat(201) },
      { dataset_id: 'ok', description: 'x'.repeat(4001) },
      { dataset_id: 'ok', extra: 1 },
      { dataset_id: 'ok', created_by: 'me' },
      { dataset_id: 'ok', latest_version: 3 },
      [],
    ];
    for (const payload of bodies) {
      const r = await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets?${p.q}`, payload: payload as object });
      expect(r.statusCode, JSON.stringify(payload).slice(0, 80)).toBe(400);
      expect(r.json()).toHaveProperty('error');
    }
    const malformed = await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets?${p.q}`, payload: '{"dataset_id":', headers: { 'content-type': 'application/json' } });
    expect(malformed.statusCode).toBe(400);
    expect((await t.call({ method: 'GET', url: `/api/v1/evaluation/datasets?${p.q}`, key: p.key })).json().datasets).toEqual([]);
  });

  it('concurrent identical creates: one 201, the others 409, one dataset', async () => {
    const p = await project();
    const codes = await Promise.all([1, 2, 3].map(() => admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets?${p.q}`, payload: { dataset_id: 'race' } })));
    expect(codes.map((c) => c.statusCode).sort()).toEqual([201, 409, 409]);
  });
});

describe('promotion', () => {
  it('a reviewed run is frozen into version 1: the case carries the run\'s facts and allowed content; the item records review id, reviewer and review time', async () => {
    const p = await project();
    const s = await p.seeded('frozen');
    expect(s.itemId).toBe(caseId(s.case));
    expect(s.case.run.run_id).toBe(s.runId);
    expect(s.case.withheld_classes).toEqual([]);
    const search = s.case.steps.find((x) => x.tool_name === 'search')!;
    expect(search.content.map((c) => [c.key, c.value])).toEqual([
      ['gen_ai.tool.call.arguments', CONTENT.toolArguments],
      ['gen_ai.tool.call.result', CONTENT.toolResult],
    ]);
    const chat = s.case.steps.find((x) => x.canonical_operation === 'CANONICAL_OPERATION_CHAT')!;
    expect(chat.content.map((c) => c.content_class)).toEqual(['model_transcript', 'model_transcript']);
    const item = (await p.items('frozen', 1)).json().items[0];
    expect(item.review).toEqual({ annotation_id: s.review.annotation_id, reviewer_id: adminId, reviewed_at: s.review.created_at });
    const ds = (await p.get('frozen')).json();
    expect(ds).toMatchObject({ latest_version: 1, versions: [{ version: 1, item_count: 1, change: 'promotion', changed_count: 1, cited: false, sealed_by: `user:${adminId}` }] });
  });

  it('a dataset item is scored exactly like its run: caseFacts rebuilds the facts the evaluators read from the run', async () => {
    const p = await project();
    const s = await p.seeded('facts');
    const reader = new AgentFactsReader(t.ctx.agentRuns, t.ctx.telemetry.releases);
    expect(caseFacts(s.case)).toEqual(await reader.run(p.projectId, s.runId));
  });

  it('"promoting the same run twice gives one case, and a case keeps its id across versions"', async () => {
    const p = await project();
    const s = await p.seeded('twice');
    const again = await p.promote('twice', [p.subject(s.runId, s.review.annotation_id)]);
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json()).toMatchObject({ sealed: false, version: { version: 1 }, subjects: [{ subject_ref: s.runId, item_id: s.itemId, added: false }] });
    const other = await p.run();
    const r = await p.promote('twice', [p.subject(s.runId, s.review.annotation_id), p.subject(other, (await p.judge(other)).annotation_id)]);
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json().version).toMatchObject({ version: 2, item_count: 2, changed_count: 1 });
    const v2 = (await p.items('twice', 2)).json().items;
    expect(v2.map((i: { item_id: string }) => i.item_id)[0]).toBe(s.itemId);
    expect(v2).toHaveLength(2);
    // Another dataset freezing the same run gets the same case id.
    await p.create('elsewhere');
    const e = await p.promote('elsewhere', [p.subject(s.runId, s.review.annotation_id)]);
    expect(e.json().subjects[0].item_id).toBe(s.itemId);
  });

  it('"classes of content withheld by the project\'s content settings are recorded": export denied for tool arguments leaves them out and names the class', async () => {
    const p = await project({ content: 'no-tool-export' });
    const s = await p.seeded('withheld');
    expect(s.case.withheld_classes).toEqual(['tool_arguments']);
    expect(s.case.steps.flatMap((x) => x.content).map((c) => c.content_class)).toEqual(['model_transcript', 'model_transcript']);
  });

  it('a run recorded without content has nothing withheld and no content (nothing recorded is not withheld)', async () => {
    const p = await project({ content: 'none' });
    const s = await p.seeded('bare', null);
    expect(s.case.withheld_classes).toEqual([]);
    expect(s.case.steps.every((x) => x.content.length === 0)).toBe(true);
  });

  it('"a missing or mismatched review is refused before anything is frozen": the whole request is 400 and no version, item or case is written', async () => {
    const p = await project();
    await p.create('strict');
    const a = await p.run();
    const b = await p.run();
    const reviewA = await p.judge(a);
    const before = await tableCounts();
    const cases: [unknown[], string][] = [
      [[p.subject(a, reviewA.annotation_id), p.subject(b, 'no-such-annotation')], 'review_not_found'],
      [[p.subject(a, reviewA.annotation_id), p.subject(b, reviewA.annotation_id)], 'review_of_another_run'],
    ];
    for (const [subjects, reason] of cases) {
      const r = await p.promote('strict', subjects);
      expect(r.statusCode, r.body).toBe(400);
      expect(r.json().details).toMatchObject({ reason, index: 1 });
    }
    // A review of another project is missing here.
    const q = await project();
    const foreignRun = await q.run();
    const foreignReview = await q.judge(foreignRun);
    expect((await p.promote('strict', [p.subject(a, foreignReview.annotation_id)])).json().details.reason).toBe('review_not_found');
    const after = await tableCounts();
    for (const k of ['evaluation_datasets', 'evaluation_dataset_versions', 'evaluation_dataset_items', 'evaluation_dataset_cases']) expect(after[k], k).toBe(before[k]);
    expect((await p.get('strict')).json().latest_version).toBe(0);
  });

  it('subject kinds other than SUBJECT_KIND_AGENT_RUN are 400 naming the accepted value; _UNSPECIFIED and unknown too; a run named twice, a bad run id, more than 100 subjects', async () => {
    const p = await project();
    await p.create('kinds');
    const runId = await p.run();
    const review = await p.judge(runId);
    for (const kind of ['SUBJECT_KIND_AGENT_STEP', 'SUBJECT_KIND_DATASET_ITEM', 'SUBJECT_KIND_UNSPECIFIED', 'SUBJECT_KIND_BANANA', '']) {
      const r = await p.promote('kinds', [{ ...p.subject(runId, review.annotation_id), subject_kind: kind }]);
      expect(r.statusCode, kind).toBe(400);
      expect(r.json().details.accepted).toEqual(['SUBJECT_KIND_AGENT_RUN']);
      expect(r.json().message).toContain('SUBJECT_KIND_AGENT_RUN');
    }
    const dup = await p.promote('kinds', [p.subject(runId, review.annotation_id), p.subject(runId.toUpperCase(), review.annotation_id)]);
    expect(dup.statusCode).toBe(400);
    expect((await p.promote('kinds', [p.subject('not-a-run', review.annotation_id)])).statusCode).toBe(400);
    expect((await p.promote('kinds', [])).statusCode).toBe(400);
    const many = Array.from({ length: 101 }, (_, i) => p.subject(i.toString(16).padStart(32, '0'), review.annotation_id));
    const big = await p.promote('kinds', many);
    expect(big.statusCode).toBe(400);
    expect((await p.promote('kinds', [{ ...p.subject(runId, review.annotation_id), extra: 1 }])).statusCode).toBe(400);
    expect((await p.promote('kinds', [{ ...p.subject(runId, review.annotation_id), review_annotation_id: 5 }])).statusCode).toBe(400);
    expect((await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets/kinds/promotions?${p.q}`, payload: { subjects: [], reviewed_by: 'x' } })).statusCode).toBe(400);
    expect((await p.get('kinds')).json().latest_version).toBe(0);
  });

  it('a run the project does not have is 404 and seals nothing; a missing dataset is 404', async () => {
    const p = await project();
    await p.create('gone');
    const runId = await p.run();
    const review = await p.judge(runId);
    expect((await p.promote('nope', [p.subject(runId, review.annotation_id)])).statusCode).toBe(404);
    expect((await p.get('gone')).json().latest_version).toBe(0);
  });

  it('"needs evals:write and scores:write through a user session": an API key is 403, a member session (no evals:write) is 403; an admin\'s OAuth token with both scopes promotes', async () => {
    const p = await project();
    await p.create('scoped');
    const runId = await p.run();
    const review = await p.judge(runId);
    const body = { subjects: [p.subject(runId, review.annotation_id)] };
    const byKey = await t.call({ method: 'POST', url: `/api/v1/evaluation/datasets/scoped/promotions?${p.q}`, key: p.key, payload: body });
    expect(byKey.statusCode).toBe(403);
    const owner = await t.call({ method: 'POST', url: `/api/v1/evaluation/datasets/scoped/promotions?${p.q}`, payload: body });
    expect(owner.statusCode).toBe(403);
    expect((await p.promote('scoped', body.subjects, member)).statusCode).toBe(403);
    const evalsOnly = await connectAgent(t, admin, { scope: 'evals:write', projectId: p.projectId });
    expect((await withToken(t, evalsOnly.tokens.access_token, { method: 'POST', url: `/api/v1/evaluation/datasets/scoped/promotions?${p.q}`, payload: body })).statusCode).toBe(403);
    expect((await p.get('scoped')).json().latest_version).toBe(0);
    const both = await connectAgent(t, admin, { scope: 'evals:write scores:write', projectId: p.projectId });
    const ok = await withToken(t, both.tokens.access_token, { method: 'POST', url: `/api/v1/evaluation/datasets/scoped/promotions?${p.q}`, payload: body });
    expect(ok.statusCode, ok.body).toBe(201);
  });

  it('concurrent identical promotions: one seals version 1, the others answer it with sealed false; one case', async () => {
    const p = await project();
    await p.create('same');
    const runId = await p.run();
    const review = await p.judge(runId);
    const res = await Promise.all([1, 2, 3].map(() => p.promote('same', [p.subject(runId, review.annotation_id)])));
    expect(res.map((r) => r.statusCode).sort()).toEqual([200, 200, 201]);
    expect(new Set(res.map((r) => r.json().subjects[0].item_id)).size).toBe(1);
    expect((await p.get('same')).json().versions).toHaveLength(1);
  });

  it('a deeply nested or huge promotion body is 400 and seals nothing', async () => {
    const p = await project();
    await p.create('deep');
    let deep: object = {};
    for (let i = 0; i < 200; i++) deep = { subjects: [deep] };
    expect((await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets/deep/promotions?${p.q}`, payload: deep })).statusCode).toBe(400);
    const huge = { subjects: [{ subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: 'a'.repeat(100_000), review_annotation_id: 'x' }] };
    expect((await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets/deep/promotions?${p.q}`, payload: huge })).statusCode).toBe(400);
    expect((await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets/deep/promotions?${p.q}&project_id=${p.projectId}`, payload: { subjects: [] } })).statusCode).toBe(400);
    expect((await p.get('deep')).json().latest_version).toBe(0);
  });

  it('concurrent promotions of different runs take consecutive versions and lose no case', async () => {
    const p = await project();
    await p.create('busy');
    const runs = await Promise.all([p.run(), p.run(), p.run()]);
    const reviews = await Promise.all(runs.map((r) => p.judge(r)));
    const res = await Promise.all(runs.map((r, i) => p.promote('busy', [p.subject(r, reviews[i]!.annotation_id)])));
    expect(res.map((r) => r.statusCode)).toEqual([201, 201, 201]);
    expect(res.map((r) => r.json().version.version).sort()).toEqual([1, 2, 3]);
    expect((await p.items('busy', 3)).json().items).toHaveLength(3);
  });
});

describe('removal, versions and deletion', () => {
  it('"removal seals a new version without the cases"; "sealed versions never change": version 1 still holds the removed item', async () => {
    const p = await project();
    const s = await p.seeded('trim');
    const r = await p.remove('trim', [s.itemId]);
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({ sealed: true, version: { version: 2, item_count: 0, change: 'removal', changed_count: 1 } });
    expect((await p.items('trim', 2)).json()).toMatchObject({ item_count: 0, items: [] });
    const v1 = (await p.items('trim', 1)).json();
    expect(v1.items.map((i: { item_id: string }) => i.item_id)).toEqual([s.itemId]);
    expect(v1.items[0].case).toEqual(s.case);
  });

  it('removal of an item the latest version does not hold is 400 naming it and seals nothing; malformed, repeated or too many ids are 400', async () => {
    const p = await project();
    const s = await p.seeded('strict-rm');
    const unknown = 'f'.repeat(64);
    const r = await p.remove('strict-rm', [s.itemId, unknown]);
    expect(r.statusCode).toBe(400);
    expect(r.json().details.unknown_item_ids).toEqual([unknown]);
    for (const ids of [[], ['NOT-HEX'], [s.itemId, s.itemId], Array.from({ length: 1001 }, () => s.itemId), [5], 'x'])
      expect((await p.remove('strict-rm', ids)).statusCode, JSON.stringify(ids).slice(0, 40)).toBe(400);
    expect((await p.remove('missing', [s.itemId])).statusCode).toBe(404);
    expect((await p.get('strict-rm')).json().latest_version).toBe(1);
  });

  it('"version must be named": latest, 0, 1.0, -1 and huge are 400; a version the dataset does not have is 404; items page by position with a cursor', async () => {
    const p = await project();
    await p.create('paged');
    const runs = [await p.run(), await p.run(), await p.run()];
    const subjects = [];
    for (const r of runs) subjects.push(p.subject(r, (await p.judge(r)).annotation_id));
    expect((await p.promote('paged', subjects)).statusCode).toBe(201);
    for (const v of ['latest', '0', '1.0', '-1', '99999999999', 'x']) expect((await p.items('paged', v)).statusCode, v).toBe(400);
    expect((await p.items('paged', 2)).statusCode).toBe(404);
    expect((await p.items('nope', 1)).statusCode).toBe(404);
    const first = (await p.items('paged', 1, '&limit=2')).json();
    expect(first.items.map((i: { position: number }) => i.position)).toEqual([1, 2]);
    const rest = (await p.items('paged', 1, `&limit=2&cursor=${first.next_cursor}`)).json();
    expect(rest).toMatchObject({ items: [{ position: 3 }], next_cursor: null, item_count: 3 });
    expect((await p.items('paged', 1, '&limit=201')).statusCode).toBe(400);
    expect((await p.items('paged', 1, '&limit=1&limit=2')).statusCode).toBe(400);
    // A cursor of another version is refused.
    expect((await p.items('paged', 2, `&cursor=${first.next_cursor}`)).statusCode).toBe(400);
  });

  it('"a version cited by a stored score, and a dataset holding one, cannot be removed": DELETE is 409 naming the version; uncited, it is 204', async () => {
    const p = await project();
    const s = await p.seeded('cited');
    await p.seeded('free');
    await t.ctx.control.evaluationResults.insert({
      id: `res-${p.projectId}`,
      orgId: t.orgId,
      projectId: p.projectId,
      evaluatorId: 'ev',
      evaluatorVersion: 1,
      metricName: 'm',
      mode: 'EVALUATION_MODE_EXPERIMENT',
      subjectKind: 'SUBJECT_KIND_DATASET_ITEM',
      subjectRef: `cited/1/${s.itemId}`,
      numericValue: 1,
      label: null,
      explanation: null,
      subjectRelease: null,
      legacySource: '',
      occurredAt: '2026-01-01T00:00:00.000000Z',
      evaluatedAt: '2026-01-01T00:00:00.000Z',
      execution: null,
    });
    expect((await p.get('cited')).json().versions[0].cited).toBe(true);
    const refused = await admin.call({ method: 'DELETE', url: `/api/v1/evaluation/datasets/cited?${p.q}` });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().details.cited_versions).toEqual([1]);
    expect((await p.get('cited')).statusCode).toBe(200);
    const ok = await admin.call({ method: 'DELETE', url: `/api/v1/evaluation/datasets/free?${p.q}` });
    expect(ok.statusCode).toBe(204);
    expect((await p.get('free')).statusCode).toBe(404);
    expect((await admin.call({ method: 'DELETE', url: `/api/v1/evaluation/datasets/free?${p.q}` })).statusCode).toBe(404);
  });

  it('a project key naming another project is 404 like a missing dataset; objects of another project are 404', async () => {
    const p = await project();
    const s = await p.seeded('mine');
    const q = await project();
    const foreign = [
      { method: 'GET', url: `/api/v1/evaluation/datasets/mine?project_id=${p.projectId}` },
      { method: 'GET', url: `/api/v1/evaluation/datasets?project_id=${p.projectId}` },
      { method: 'GET', url: `/api/v1/evaluation/datasets/mine/versions/1/items?project_id=${p.projectId}` },
      { method: 'POST', url: `/api/v1/evaluation/datasets/mine/versions/1/items/${s.itemId}/replays?project_id=${p.projectId}`, payload: {} },
      { method: 'POST', url: `/api/v1/evaluation/datasets?project_id=${p.projectId}`, payload: { dataset_id: 'x' } },
    ] as const;
    for (const f of foreign) expect((await t.call({ ...f, key: q.key })).statusCode, f.url).toBe(404);
    // Its own project has no such dataset.
    expect((await t.call({ method: 'GET', url: `/api/v1/evaluation/datasets/mine?project_id=${q.projectId}`, key: q.key })).statusCode).toBe(404);
    expect((await q.replay('mine', 1, s.itemId, {})).statusCode).toBe(404);
  });

  it('scopes: reads need evals:read, writes evals:write (403 otherwise)', async () => {
    const p = await project();
    const weak = await projectWithKey(t, ['agents:read']);
    expect((await t.call({ method: 'GET', url: `/api/v1/evaluation/datasets?project_id=${weak.projectId}`, key: weak.key })).statusCode).toBe(403);
    const reader = await projectWithKey(t, ['evals:read']);
    expect((await t.call({ method: 'POST', url: `/api/v1/evaluation/datasets?project_id=${reader.projectId}`, key: reader.key, payload: { dataset_id: 'x' } })).statusCode).toBe(403);
    expect((await member.call({ method: 'POST', url: `/api/v1/evaluation/datasets?${p.q}`, payload: { dataset_id: 'x' } })).statusCode).toBe(403);
  });
});
