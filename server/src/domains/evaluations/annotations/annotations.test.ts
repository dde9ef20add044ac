/**
 * Human judgments over HTTP: "The author is always the credential's person; API keys cannot record
 * judgments", "Re-judging the same run and metric replaces only the caller's judgment", "metric_name (free
 * text, lower-cased and trimmed)", "numeric_value (optional; absent means not scored, 0 is a score of zero)",
 * "At least one of numeric_value and label is required", `/evaluation/annotations` with `subject_refs`
 * (at most 200), foreign projects and bad input. Runs are sent by the real OpenTelemetry SDK.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { addPerson, signIn, type Browser } from '../../../testing/people.js';
import { connectAgent, withToken } from '../../../testing/oauth.js';
import { sendAgentRun } from '../../../testing/otel-agent-run.js';

let t: TestApp;
let base: string;
let alice: Browser;
let bob: Browser;
let aliceId: string;
let bobId: string;
beforeAll(async () => {
  t = await testApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const a = await addPerson(t, 'member');
  const b = await addPerson(t, 'member');
  aliceId = a.userId;
  bobId = b.userId;
  alice = await signIn(t, a);
  bob = await signIn(t, b);
});
afterAll(async () => t?.close());

async function project() {
  const p = await projectWithKey(t, ['ingest:write', 'agents:read', 'scores:read', 'scores:write', 'evals:read']);
  const runId = async () => (await sendAgentRun({ base, format: 'json', key: p.key })).root.spanContext().traceId;
  const judge = (who: Browser, run: string, payload: unknown) =>
    who.call({ method: 'POST', url: `/api/v1/agent-runs/${run}/annotations?project_id=${p.projectId}`, payload: payload as object });
  const read = (who: Browser, query: string) => who.call({ method: 'GET', url: `/api/v1/evaluation/annotations?project_id=${p.projectId}${query ? `&${query}` : ''}` });
  const all = async () => (await t.ctx.control.annotations.list({ projectId: p.projectId }, { limit: 1000 })).length;
  return { ...p, runId, judge, read, all };
}

describe('POST /agent-runs/{run_id}/annotations', () => {
  it('a signed-in person records a judgment: 201, author from the credential, metric_name trimmed and lower-cased', async () => {
    const p = await project();
    const run = await p.runId();
    const res = await p.judge(alice, run, { metric_name: '  Helpfulness ', numeric_value: 0.75, label: 'good', comment: 'fine' });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      annotation: { project_id: p.projectId, run_id: run, metric_name: 'helpfulness', numeric_value: 0.75, label: 'good', comment: 'fine', author_id: aliceId },
      replaced_annotation_id: null,
    });
  });

  it('"0 is a score of zero" and "absent means not scored": a zero is kept, an absent value is absent (never 0)', async () => {
    const p = await project();
    const run = await p.runId();
    const zero = await p.judge(alice, run, { metric_name: 'accuracy', numeric_value: 0 });
    expect(zero.json().annotation.numeric_value).toBe(0);
    const labelOnly = await p.judge(bob, run, { metric_name: 'accuracy', label: 'fail' });
    expect(labelOnly.statusCode, labelOnly.body).toBe(201);
    expect(labelOnly.json().annotation).not.toHaveProperty('numeric_value');
    const nulls = await p.judge(alice, run, { metric_name: 'tone', numeric_value: null, label: 'ok' });
    expect(nulls.json().annotation).not.toHaveProperty('numeric_value');
  });

  it('"At least one of numeric_value and label is required": neither, or only nulls, or an empty label, is 400 and stores nothing', async () => {
    const p = await project();
    const run = await p.runId();
    for (const body of [{ metric_name: 'm' }, { metric_name: 'm', numeric_value: null, label: null }, { metric_name: 'm', label: '   ' }, { metric_name: 'm', comment: 'only a comment' }]) {
      const res = await p.judge(alice, run, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
    expect(await p.all()).toBe(0);
  });

  it('"Re-judging the same run and metric replaces only the caller\'s judgment": a new id replaces alice\'s; bob\'s stays', async () => {
    const p = await project();
    const run = await p.runId();
    const a1 = (await p.judge(alice, run, { metric_name: 'quality', numeric_value: 1 })).json().annotation;
    const b1 = (await p.judge(bob, run, { metric_name: 'quality', numeric_value: 3 })).json().annotation;
    const a2 = await p.judge(alice, run, { metric_name: 'QUALITY', numeric_value: 2 });
    expect(a2.json().replaced_annotation_id).toBe(a1.annotation_id);
    expect(a2.json().annotation.annotation_id).not.toBe(a1.annotation_id);
    const list = (await p.read(alice, `subject_refs=${run}`)).json().annotations;
    expect(list.map((a: { annotation_id: string; numeric_value: number }) => [a.annotation_id, a.numeric_value]).sort()).toEqual(
      [[b1.annotation_id, 3], [a2.json().annotation.annotation_id, 2]].sort(),
    );
    // Another metric is another judgment.
    await p.judge(alice, run, { metric_name: 'speed', numeric_value: 5 });
    expect(await p.all()).toBe(3);
  });

  it('concurrent identical judgments of one person leave exactly one judgment', async () => {
    const p = await project();
    const run = await p.runId();
    const all = await Promise.all(Array.from({ length: 6 }, () => p.judge(alice, run, { metric_name: 'race', numeric_value: 1 })));
    for (const r of all) expect(r.statusCode, r.body).toBe(201);
    expect(await p.all()).toBe(1);
  });

  it('"API keys cannot record judgments": a key with scores:write is 403 and stores nothing', async () => {
    const p = await project();
    const run = await p.runId();
    const res = await t.call({ method: 'POST', url: `/api/v1/agent-runs/${run}/annotations`, key: p.key, payload: { metric_name: 'm', numeric_value: 1 } });
    expect(res.statusCode).toBe(403);
    expect(res.json().error).toBe('permission_denied');
    expect(res.json().message).toMatch(/signed-in person/);
    expect(await p.all()).toBe(0);
  });

  it('a person\'s OAuth access token (an agent acting for the person) records the person\'s judgment', async () => {
    const p = await project();
    const run = await p.runId();
    const { tokens } = await connectAgent(t, alice, { scope: 'scores:write scores:read', projectId: p.projectId });
    const res = await withToken(t, tokens.access_token, { method: 'POST', url: `/api/v1/agent-runs/${run}/annotations?project_id=${p.projectId}`, payload: { metric_name: 'm', label: 'pass' } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().annotation.author_id).toBe(aliceId);
  });

  it('"who acts comes from the credential": author, author_id, created_by in the body are 400', async () => {
    const p = await project();
    const run = await p.runId();
    for (const f of ['author', 'author_id', 'created_by', 'actor']) {
      const res = await p.judge(alice, run, { metric_name: 'm', numeric_value: 1, [f]: bobId });
      expect(res.statusCode, f).toBe(400);
    }
    expect(await p.all()).toBe(0);
  });

  it('a missing run, a malformed run id, and a run of another project are 404/400 like missing; nothing is stored', async () => {
    const p = await project();
    const q = await project();
    const foreignRun = await q.runId();
    expect((await p.judge(alice, 'ab'.repeat(16), { metric_name: 'm', numeric_value: 1 })).statusCode).toBe(404);
    expect((await p.judge(alice, foreignRun, { metric_name: 'm', numeric_value: 1 })).statusCode).toBe(404);
    expect((await p.judge(alice, 'not-a-run', { metric_name: 'm', numeric_value: 1 })).statusCode).toBe(400);
    expect(await p.all()).toBe(0);
  });

  it('bad input as an attacker sends it: wrong types, huge fields, unknown fields, nested bodies, non-finite numbers are 400', async () => {
    const p = await project();
    const run = await p.runId();
    const bad: unknown[] = [
      { metric_name: 7, numeric_value: 1 },
      { metric_name: '', numeric_value: 1 },
      { metric_name: '   ', numeric_value: 1 },
      { metric_name: 'x'.repeat(300), numeric_value: 1 },
      { metric_name: 'm', numeric_value: '1' },
      { metric_name: 'm', numeric_value: 1, label: 'x'.repeat(200) },
      { metric_name: 'm', numeric_value: 1, comment: 'x'.repeat(5000) },
      { metric_name: 'm', numeric_value: 1, extra: true },
      { metric_name: { a: { b: { c: {} } } }, numeric_value: 1 },
      [{ metric_name: 'm', numeric_value: 1 }],
    ];
    for (const body of bad) {
      const res = await p.judge(alice, run, body);
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(res.json()).toHaveProperty('error');
    }
    const raw = await alice.call({ method: 'POST', url: `/api/v1/agent-runs/${run}/annotations?project_id=${p.projectId}`, payload: '{"metric_name":', headers: { 'content-type': 'application/json' } });
    expect(raw.statusCode).toBe(400);
    const inf = await alice.call({ method: 'POST', url: `/api/v1/agent-runs/${run}/annotations?project_id=${p.projectId}`, payload: '{"metric_name":"m","numeric_value":1e999}', headers: { 'content-type': 'application/json' } });
    expect(inf.statusCode).toBe(400);
    expect(await p.all()).toBe(0);
  });
});

describe('reading judgments', () => {
  it('GET /agent-runs/{run_id}/annotations reads every reviewer\'s judgments, needing no content scope; a project key reads them', async () => {
    const p = await project();
    const run = await p.runId();
    await p.judge(alice, run, { metric_name: 'q', numeric_value: 1 });
    await p.judge(bob, run, { metric_name: 'q', numeric_value: 2 });
    const res = await t.call({ method: 'GET', url: `/api/v1/agent-runs/${run}/annotations`, key: p.key });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().annotations.map((a: { author_id: string }) => a.author_id).sort()).toEqual([aliceId, bobId].sort());
    expect(res.json().truncated).toBe(false);
  });

  it('GET /evaluation/annotations filters subject_refs (repeated or comma list, one set), metric_name (normalized), author_id; pages with truncated', async () => {
    const p = await project();
    const [r1, r2, r3] = [await p.runId(), await p.runId(), await p.runId()];
    await p.judge(alice, r1, { metric_name: 'q', numeric_value: 1 });
    await p.judge(bob, r2, { metric_name: 'q', numeric_value: 2 });
    await p.judge(alice, r3, { metric_name: 'other', label: 'x' });
    const ids = async (query: string) => ((await p.read(alice, query)).json().annotations as { run_id: string }[]).map((a) => a.run_id).sort();
    expect(await ids(`subject_refs=${r1},${r2}`)).toEqual([r1, r2].sort());
    expect(await ids(`subject_refs=${r1}&subject_refs=${r3}`)).toEqual([r1, r3].sort());
    expect(await ids(`subject_refs=${r1.toUpperCase()}`)).toEqual([r1]);
    expect(await ids('metric_name=%20Q%20')).toEqual([r1, r2].sort());
    expect(await ids(`author_id=${bobId}`)).toEqual([r2]);
    const page = (await p.read(alice, 'limit=2')).json();
    expect(page.annotations).toHaveLength(2);
    expect(page.truncated).toBe(true);
    const rest = (await p.read(alice, `limit=2&cursor=${page.next_cursor}`)).json();
    expect(rest.annotations).toHaveLength(1);
    expect(rest.truncated).toBe(false);
  });

  it('"at most 200" subject_refs: 201 distinct runs are refused, not shortened; 200 are read', async () => {
    const p = await project();
    const refs = (n: number) => Array.from({ length: n }, (_, i) => i.toString(16).padStart(32, '0')).join(',');
    const over = await p.read(alice, `subject_refs=${refs(201)}`);
    expect(over.statusCode).toBe(400);
    expect(over.json().details).toMatchObject({ limit: 200, subjects: 201 });
    expect((await p.read(alice, `subject_refs=${refs(200)}`)).statusCode).toBe(200);
  });

  it('limit above 500 is refused; a bad cursor is 400; an unknown query parameter is 400', async () => {
    const p = await project();
    expect((await p.read(alice, 'limit=501')).statusCode).toBe(400);
    expect((await p.read(alice, 'cursor=garbage')).statusCode).toBe(400);
    expect((await p.read(alice, 'bogus=1')).statusCode).toBe(400);
  });

  it('a project key naming another project is 404, the same answer as a missing project; scores:read is needed', async () => {
    const p = await project();
    const q = await project();
    const res = await t.call({ method: 'GET', url: `/api/v1/evaluation/annotations?project_id=${q.projectId}`, key: p.key });
    expect(res.statusCode).toBe(404);
    const noScope = await projectWithKey(t, ['evals:read']);
    expect((await t.call({ method: 'GET', url: '/api/v1/evaluation/annotations', key: noScope.key })).statusCode).toBe(403);
  });
});
