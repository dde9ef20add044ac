/**
 * `GET /evaluation/results` over HTTP (the results-read rules): every filter, "at most 200 distinct runs; a
 * longer list is refused, not shortened", the single-run and multi-run `limit` rules, `truncated` and
 * `truncated_subject_refs`, history, and bad input. Results are written through the store (the evaluation
 * paths that write them are driven end to end in evaluate.test.ts and sampled-e2e.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import type { ResultRecord } from './store.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

const run = (i: number) => i.toString(16).padStart(32, '0');
let seq = 0;

async function project() {
  const p = await projectWithKey(t, ['evals:read']);
  const put = async (over: Partial<ResultRecord>) => {
    seq++;
    const r: ResultRecord = {
      id: `res-${String(seq).padStart(6, '0')}`,
      orgId: t.orgId,
      projectId: p.projectId,
      evaluatorId: 'ev',
      evaluatorVersion: 1,
      metricName: 'quality',
      mode: 'EVALUATION_MODE_ON_DEMAND',
      subjectKind: 'SUBJECT_KIND_AGENT_RUN',
      subjectRef: run(1),
      numericValue: 1,
      label: null,
      explanation: null,
      subjectRelease: null,
      legacySource: '',
      occurredAt: '2026-03-01T00:00:00.000000Z',
      evaluatedAt: new Date(Date.UTC(2026, 2, 1) + seq * 1000).toISOString(),
      execution: { sampling: 'NOT_SAMPLED', cost_state: 'FREE', charged_cost_nano_usd: 0, input_tokens: 0, output_tokens: 0, judge_model_state: 'NOT_APPLICABLE', job_status: 'COMPLETED' },
      ...over,
    };
    expect(await t.ctx.control.evaluationResults.insert(r)).toBe(true);
    return r;
  };
  const get = (query: string) => t.call({ method: 'GET', url: `/api/v1/evaluation/results${query ? `?${query}` : ''}`, key: p.key });
  const ids = async (query: string) => {
    const res = await get(query);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json().results as { result_id: string }[]).map((r) => r.result_id);
  };
  return { ...p, put, get, ids };
}

describe('GET /evaluation/results', () => {
  it('"history is returned, one result per evaluator version per run", newest evaluated first; every filter narrows (AND across, OR within)', async () => {
    const p = await project();
    const v1 = await p.put({ evaluatorVersion: 1 });
    const v2 = await p.put({ evaluatorVersion: 2 });
    const other = await p.put({ subjectRef: run(2), metricName: 'latency', evaluatorId: 'lat', mode: 'EVALUATION_MODE_SAMPLED', occurredAt: '2026-03-05T00:00:00.000000Z' });
    expect(await p.ids('')).toEqual([other.id, v2.id, v1.id]);
    expect(await p.ids(`subject_ref=${run(1)}`)).toEqual([v2.id, v1.id]);
    expect(await p.ids('metric_name=latency')).toEqual([other.id]);
    expect(await p.ids('evaluator_id=ev')).toEqual([v2.id, v1.id]);
    expect(await p.ids('mode=EVALUATION_MODE_SAMPLED')).toEqual([other.id]);
    expect(await p.ids('mode=EVALUATION_MODE_SAMPLED,EVALUATION_MODE_ON_DEMAND')).toEqual([other.id, v2.id, v1.id]);
    expect(await p.ids('start=2026-03-02T00:00:00Z')).toEqual([other.id]);
    expect(await p.ids('end=2026-03-02T00:00:00Z')).toEqual([v2.id, v1.id]);
    expect(await p.ids('metric_name=quality&mode=EVALUATION_MODE_SAMPLED')).toEqual([]);
    const body = (await p.get(`subject_ref=${run(1)}`)).json();
    expect(body).toMatchObject({ truncated: false, truncated_subject_refs: [], next_cursor: null });
    expect(body.results[0]).toMatchObject({ provenance: { evaluator: { evaluator_id: 'ev', version: 2 } } });
  });

  it('"for at most one run limit is the page size (default 100, max 500)": a cut page says truncated and continues by cursor without repeats', async () => {
    const p = await project();
    const all: string[] = [];
    for (let v = 1; v <= 5; v++) all.unshift((await p.put({ evaluatorVersion: v })).id);
    const first = (await p.get(`subject_ref=${run(1)}&limit=2`)).json();
    expect(first.results.map((r: { result_id: string }) => r.result_id)).toEqual(all.slice(0, 2));
    expect(first.truncated).toBe(true);
    const second = (await p.get(`subject_ref=${run(1)}&limit=2&cursor=${first.next_cursor}`)).json();
    const third = (await p.get(`subject_ref=${run(1)}&limit=2&cursor=${second.next_cursor}`)).json();
    expect([...second.results, ...third.results].map((r: { result_id: string }) => r.result_id)).toEqual(all.slice(2));
    expect(third).toMatchObject({ truncated: false, next_cursor: null });
    expect((await p.get('limit=500')).statusCode).toBe(200);
    expect((await p.get('limit=501')).statusCode).toBe(400);
    expect((await p.get('limit=0')).statusCode).toBe(400);
    // A cursor of another query is refused.
    expect((await p.get(`subject_ref=${run(2)}&cursor=${first.next_cursor}`)).statusCode).toBe(400);
  });

  it('"for several runs it bounds each run\'s share (default and max 20)": truncated_subject_refs names exactly the runs whose share was cut', async () => {
    const p = await project();
    for (let v = 1; v <= 22; v++) await p.put({ subjectRef: run(10), evaluatorVersion: v });
    for (let v = 1; v <= 3; v++) await p.put({ subjectRef: run(11), evaluatorVersion: v });
    const body = (await p.get(`subject_refs=${run(10)},${run(11)}&subject_refs=${run(12)}`)).json();
    expect(body.results).toHaveLength(23);
    expect(body).toMatchObject({ truncated: true, truncated_subject_refs: [run(10)], next_cursor: null });
    const share = (await p.get(`subject_ref=${run(10)}&subject_refs=${run(11)}&limit=3`)).json();
    expect(share.results).toHaveLength(6);
    expect(share.truncated_subject_refs).toEqual([run(10)]);
    expect((await p.get(`subject_refs=${run(10)},${run(11)}&limit=21`)).statusCode).toBe(400);
    const exact = (await p.get(`subject_refs=${run(11)},${run(12)}`)).json();
    expect(exact).toMatchObject({ truncated: false, truncated_subject_refs: [] });
  });

  it('"at most 200 distinct runs; a longer list is refused, not shortened" (subject_ref and subject_refs are one set; repeats count once)', async () => {
    const p = await project();
    const refs = Array.from({ length: 200 }, (_, i) => run(1000 + i));
    expect((await p.get(`subject_refs=${refs.join(',')}&subject_refs=${refs[0]}`)).statusCode).toBe(200);
    expect((await p.get(`subject_refs=${refs.join(',')}&subject_ref=${refs[5]}`)).statusCode).toBe(200);
    const over = await p.get(`subject_refs=${refs.join(',')}&subject_ref=${run(5000)}`);
    expect(over.statusCode).toBe(400);
    expect(over.json()).toMatchObject({ error: 'invalid_request', details: { limit: 200, subjects: 201 } });
  });

  it('bad input as an attacker writes it: unknown mode, empty values, bad times, end before start, repeated scalars, unknown parameters: 400 in our shape', async () => {
    const p = await project();
    for (const q of [
      'mode=EVALUATION_MODE_UNSPECIFIED',
      'mode=bogus',
      'mode=',
      'metric_name=',
      'subject_ref=',
      'subject_refs=a,,b',
      'start=yesterday',
      'start=2026-03-02T00:00:00Z&end=2026-03-01T00:00:00Z',
      'limit=-1',
      'limit=abc',
      'limit=1&limit=2',
      'metric_name=a&metric_name=b',
      'cursor=not-a-cursor',
      'unknown=1',
      `metric_name=${'m'.repeat(600)}`,
    ]) {
      const res = await p.get(q);
      expect(res.statusCode, `${q.slice(0, 60)}: ${res.body}`).toBe(400);
      expect(typeof res.json().message).toBe('string');
    }
  });

  it('another project\'s results are never read; a project key naming another project is 404', async () => {
    const a = await project();
    const b = await project();
    await b.put({});
    expect(await a.ids('')).toEqual([]);
    const res = await t.call({ method: 'GET', url: `/api/v1/evaluation/results?project_id=${b.projectId}`, key: a.key });
    expect(res.statusCode).toBe(404);
  });

  it('"a result written before the execution record exists returns empty values for it"; a legacy result is readable with its source and version 0', async () => {
    const p = await project();
    const legacy = await p.put({ evaluatorId: 'legacy/alice/helpfulness', evaluatorVersion: 0, mode: 'EVALUATION_MODE_LEGACY', legacySource: 'import', execution: null });
    const [r] = (await p.get('mode=EVALUATION_MODE_LEGACY')).json().results;
    expect(r).toMatchObject({ result_id: legacy.id, provenance: { evaluator: { evaluator_id: 'legacy/alice/helpfulness', version: 0 }, legacy_source: 'import', execution: {} } });
  });
});
