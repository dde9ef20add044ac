/**
 * Sandbox replay over HTTP, of cases frozen from real runs sent by the OpenTelemetry SDK: "Unset default
 * is external, and a call the recording does not name is external", the step dispositions `carried`,
 * `recorded`, `unrecorded`, `stubbed`, "a plan digest (identical behaviour gives one digest)", the counts,
 * "the sorted set of tools the sandbox answered for", "one entry per step in order", "stores nothing",
 * "a tool declared twice in a sandbox plan" and "an effect value outside the declared values (the accepted
 * values are named)" refused.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { allowAllContent } from '../../../testing/content-policy.js';
import { sendAgentRun } from '../../../testing/otel-agent-run.js';
import { addPerson, signIn, type Browser } from '../../../testing/people.js';
import type { DatasetCase } from '../datasets/case.js';
import { parsePlan, replayCase } from './replay.js';

let t: TestApp;
let base: string;
let admin: Browser;
beforeAll(async () => {
  t = await testApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  admin = await signIn(t, await addPerson(t, 'admin'));
});
afterAll(async () => t?.close());

/** A project with one dataset whose version 1 holds one frozen run (with or without the search tool's recorded result). */
async function frozen(opts: { toolResult: boolean }) {
  const p = await projectWithKey(t, ['ingest:write', 'agents:read', 'evals:read']);
  await allowAllContent(t, p.projectId);
  const q = `project_id=${p.projectId}`;
  const content = { prompt: 'hi', completion: 'hello', toolArguments: '{"q":"x"}', ...(opts.toolResult ? { toolResult: '{"hits":3}' } : {}) };
  const runId = (await sendAgentRun({ base, format: 'json', key: p.key, content })).root.spanContext().traceId;
  const review = (await admin.call({ method: 'POST', url: `/api/v1/agent-runs/${runId}/annotations?${q}`, payload: { metric_name: 'ok', label: 'yes' } })).json().annotation;
  await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets?${q}`, payload: { dataset_id: 'd' } });
  const r = await admin.call({
    method: 'POST',
    url: `/api/v1/evaluation/datasets/d/promotions?${q}`,
    payload: { subjects: [{ subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: runId, review_annotation_id: review.annotation_id }] },
  });
  expect(r.statusCode, r.body).toBe(201);
  const itemId = r.json().subjects[0].item_id as string;
  const item = (await t.call({ method: 'GET', url: `/api/v1/evaluation/datasets/d/versions/1/items?${q}`, key: p.key })).json().items[0];
  const replay = (plan: unknown, key = p.key, path = `d/versions/1/items/${itemId}`) =>
    t.call({ method: 'POST', url: `/api/v1/evaluation/datasets/${path}/replays?${q}`, key, payload: plan as object });
  return { ...p, q, itemId, case: item.case as DatasetCase, replay };
}

async function tableCounts(): Promise<Record<string, number>> {
  const tables =
    t.ctx.control.dialect === 'postgres'
      ? await sql<{ name: string }>`select table_name as name from information_schema.tables where table_schema = current_schema() and table_type = 'BASE TABLE'`.execute(t.db)
      : await sql<{ name: string }>`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`.execute(t.db);
  const out: Record<string, number> = {};
  for (const { name } of tables.rows) out[name] = Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(name)}`.execute(t.db)).rows[0]!.n);
  return out;
}

describe('POST /evaluation/datasets/{datasetId}/versions/{version}/items/{itemId}/replays', () => {
  it('a recorded run under a mixed plan: one entry per step in order; search replays its recorded answer, send_email is stubbed (unset default is external); counts and sandbox tools; stores nothing', async () => {
    const f = await frozen({ toolResult: true });
    const before = await tableCounts();
    const r = await f.replay({ policies: [{ tool_name: 'search', effect: 'SANDBOX_EFFECT_NONE' }] });
    expect(r.statusCode, r.body).toBe(200);
    const body = r.json();
    // The SDK starts the steps within the same microseconds: the case's own order (start, then id) is the order.
    const rows = body.steps.map((s: { canonical_operation: string; tool_name: string | null; disposition: string; effect?: string }) => [s.canonical_operation, s.tool_name, s.effect ?? null, s.disposition]);
    expect(rows.map((r: unknown[]) => r[0])).toEqual(f.case.steps.map((s) => s.canonical_operation));
    expect([...rows].sort()).toEqual([
      ['CANONICAL_OPERATION_CHAT', null, null, 'carried'],
      ['CANONICAL_OPERATION_EXECUTE_TOOL', 'search', 'SANDBOX_EFFECT_NONE', 'recorded'],
      ['CANONICAL_OPERATION_EXECUTE_TOOL', 'send_email', 'SANDBOX_EFFECT_EXTERNAL', 'stubbed'],
      ['CANONICAL_OPERATION_RETRIEVAL', null, null, 'carried'],
      ['CANONICAL_OPERATION_UPSERT_MEMORY', null, null, 'carried'],
    ].sort());
    expect(body.steps.map((s: { index: number; step_id: string }) => [s.index, s.step_id])).toEqual(f.case.steps.map((s, i) => [i, s.step_id]));
    expect(body.counts).toEqual({ steps: 5, tool_calls: 2, replayed: 1, stubbed: 1, nothing_recorded: 0 });
    expect(body.sandbox_tools).toEqual(['send_email']);
    // The replayed run is in case encoding: search keeps its recorded answer, send_email carries the marked stub.
    const run = body.replayed_run as DatasetCase;
    expect(run.run).toEqual(f.case.run);
    expect(run.steps.find((s) => s.tool_name === 'search')).toEqual(f.case.steps.find((s) => s.tool_name === 'search'));
    expect(run.steps.find((s) => s.tool_name === 'send_email')!.content).toEqual([
      { key: 'gen_ai.tool.call.result', content_class: 'tool_arguments', value: { sandbox_stub: true, effect: 'SANDBOX_EFFECT_EXTERNAL', tool_name: 'send_email' } },
    ]);
    expect(await tableCounts()).toEqual(before);
  });

  it('NONE with nothing recorded is `unrecorded`; INTERNAL is stubbed and marked with its effect', async () => {
    const f = await frozen({ toolResult: false });
    const r = (await f.replay({ policies: [{ tool_name: 'search', effect: 'SANDBOX_EFFECT_NONE' }], default_effect: 'SANDBOX_EFFECT_INTERNAL' })).json();
    const of = (tool: string) => r.steps.find((s: { tool_name: string | null }) => s.tool_name === tool).disposition;
    expect([of('search'), of('send_email')]).toEqual(['unrecorded', 'stubbed']);
    expect(r.counts).toMatchObject({ replayed: 0, stubbed: 1, nothing_recorded: 1 });
    const stub = (r.replayed_run as DatasetCase).steps.find((s) => s.tool_name === 'send_email')!.content[0]!.value;
    expect(stub).toMatchObject({ sandbox_stub: true, effect: 'SANDBOX_EFFECT_INTERNAL' });
  });

  it('"identical behaviour gives one digest": order, a tool the case never calls, and a default every call overrides change nothing; another effect does', async () => {
    const f = await frozen({ toolResult: true });
    const digest = async (plan: object) => (await f.replay(plan)).json().plan_digest as string;
    const a = await digest({ policies: [{ tool_name: 'search', effect: 'SANDBOX_EFFECT_NONE' }, { tool_name: 'send_email', effect: 'SANDBOX_EFFECT_INTERNAL' }] });
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(await digest({ policies: [{ tool_name: 'send_email', effect: 'SANDBOX_EFFECT_INTERNAL' }, { tool_name: 'search', effect: 'SANDBOX_EFFECT_NONE' }] })).toBe(a);
    expect(
      await digest({
        policies: [{ tool_name: 'search', effect: 'SANDBOX_EFFECT_NONE' }, { tool_name: 'never_called', effect: 'SANDBOX_EFFECT_EXTERNAL' }],
        default_effect: 'SANDBOX_EFFECT_INTERNAL',
      }),
    ).toBe(a);
    // The plan is the body: none at all is 400 (send {} for the plan where every call is external).
    const empty = await t.call({ method: 'POST', url: `/api/v1/evaluation/datasets/d/versions/1/items/${f.itemId}/replays?${f.q}`, key: f.key });
    expect(empty.statusCode, empty.body).toBe(400);
    // The unset default (external) equals an explicit external default.
    expect(await digest({})).toBe(await digest({ default_effect: 'SANDBOX_EFFECT_EXTERNAL' }));
    expect(await digest({ policies: [{ tool_name: 'search', effect: 'SANDBOX_EFFECT_EXTERNAL' }, { tool_name: 'send_email', effect: 'SANDBOX_EFFECT_INTERNAL' }] })).not.toBe(a);
  });

  it('refused plans are 400 in the error shape: a tool declared twice, an effect outside the values (naming them), _UNSPECIFIED, wrong types, too many policies, unknown fields; nothing stored', async () => {
    const f = await frozen({ toolResult: true });
    const before = await tableCounts();
    const twice = await f.replay({ policies: [{ tool_name: 'search', effect: 'SANDBOX_EFFECT_NONE' }, { tool_name: 'search', effect: 'SANDBOX_EFFECT_NONE' }] });
    expect(twice.statusCode).toBe(400);
    expect(twice.json().message).toContain('declared twice');
    const unknown = await f.replay({ policies: [{ tool_name: 'search', effect: 'SANDBOX_EFFECT_MAYBE' }] });
    expect(unknown.statusCode).toBe(400);
    expect(unknown.json().details.accepted).toEqual(['SANDBOX_EFFECT_NONE', 'SANDBOX_EFFECT_INTERNAL', 'SANDBOX_EFFECT_EXTERNAL']);
    const plans: unknown[] = [
      { default_effect: 'SANDBOX_EFFECT_UNSPECIFIED' },
      { policies: [{ tool_name: 'search', effect: 'SANDBOX_EFFECT_UNSPECIFIED' }] },
      { default_effect: 'none' },
      { default_effect: 3 },
      { policies: 'search' },
      { policies: [{ tool_name: '', effect: 'SANDBOX_EFFECT_NONE' }] },
      { policies: [{ tool_name: 'x'.repeat(300), effect: 'SANDBOX_EFFECT_NONE' }] },
      { policies: [{ tool_name: 'search' }] },
      { policies: [{ tool_name: 'search', effect: 'SANDBOX_EFFECT_NONE', extra: true }] },
      { policies: Array.from({ length: 501 }, (_, i) => ({ tool_name: `t${i}`, effect: 'SANDBOX_EFFECT_NONE' })) },
      { plan: {} },
      { created_by: 'me' },
    ];
    for (const plan of plans) {
      const r = await f.replay(plan);
      expect(r.statusCode, JSON.stringify(plan).slice(0, 80)).toBe(400);
      expect(r.json()).toHaveProperty('error');
    }
    let deep: object = {};
    for (let i = 0; i < 200; i++) deep = { policies: [deep] };
    expect((await f.replay(deep)).statusCode).toBe(400);
    const malformed = await t.call({ method: 'POST', url: `/api/v1/evaluation/datasets/d/versions/1/items/${f.itemId}/replays?${f.q}`, key: f.key, payload: '{"policies":[', headers: { 'content-type': 'application/json' } });
    expect(malformed.statusCode).toBe(400);
    expect(await tableCounts()).toEqual(before);
  });

  it('the path: "latest" or 0 is 400, a malformed item id is 400, a missing version or item is 404; evals:read is needed', async () => {
    const f = await frozen({ toolResult: true });
    expect((await f.replay({}, f.key, `d/versions/latest/items/${f.itemId}`)).statusCode).toBe(400);
    expect((await f.replay({}, f.key, `d/versions/0/items/${f.itemId}`)).statusCode).toBe(400);
    expect((await f.replay({}, f.key, 'd/versions/1/items/NOT-AN-ID')).statusCode).toBe(400);
    expect((await f.replay({}, f.key, `d/versions/2/items/${f.itemId}`)).statusCode).toBe(404);
    expect((await f.replay({}, f.key, `d/versions/1/items/${'0'.repeat(64)}`)).statusCode).toBe(404);
    const weak = await projectWithKey(t, ['agents:read']);
    const r = await t.call({ method: 'POST', url: `/api/v1/evaluation/datasets/d/versions/1/items/${f.itemId}/replays?project_id=${weak.projectId}`, key: weak.key, payload: {} });
    expect(r.statusCode).toBe(403);
  });
});

describe('replayCase (pure)', () => {
  it('"a call the recording does not name is external": an unnamed tool call is stubbed as EXTERNAL whatever the default, and is in no tool set', () => {
    const c: DatasetCase = {
      run: {
        run_id: 'a'.repeat(32),
        root_step_id: 'b'.repeat(16),
        status: 'completed',
        started_at: '2026-01-01T00:00:00.000000Z',
        duration_ms: 1,
        step_count: 2,
        error_steps: 0,
        tool_calls: 1,
        model_calls: 0,
        cost_nanos: null,
        cost_unavailable_reason: null,
        safety_error_steps: null,
        session_key: null,
        release: null,
        content: [],
      },
      steps: [
        {
          step_id: 'c'.repeat(16),
          parent_step_id: 'b'.repeat(16),
          name: 'execute_tool',
          canonical_operation: 'CANONICAL_OPERATION_EXECUTE_TOOL',
          outcome: 'OUTCOME_OK',
          tool_name: null,
          started_at: '2026-01-01T00:00:00.000000Z',
          safety_check: false,
          content: [],
        },
      ],
      withheld_classes: [],
    };
    const r = replayCase(c, parsePlan({ default_effect: 'SANDBOX_EFFECT_NONE' }));
    expect(r.steps[0]).toMatchObject({ effect: 'SANDBOX_EFFECT_EXTERNAL', disposition: 'stubbed' });
    expect(r.sandbox_tools).toEqual([]);
    expect(r.counts).toEqual({ steps: 1, tool_calls: 1, replayed: 0, stubbed: 1, nothing_recorded: 0 });
  });
});
