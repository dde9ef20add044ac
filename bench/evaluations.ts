/**
 * `npm run bench -- --only=evals`: evaluations.
 *
 * 1. Deterministic evaluation of 10,000 recorded runs (`--quick`: 2,000): the runs of the agent section's
 *    dataset (10 spans each, priced models) are sent through OTLP, then every run is evaluated on demand
 *    through `POST /evaluation/evaluate` (app.inject, 4 in flight) by a three-assertion gate and by a
 *    measurement (`run.cost_nanos`); figures are runs/s and the p50/p99 of one evaluation. Each evaluation
 *    reads the run's facts from the telemetry store and writes its result to the control store.
 * 2. The results read over 100,000 stored results (2,000 runs x 50 evaluator versions): one run's history,
 *    the newest page of a metric, 200 runs' shares, and a mode filter over a time window; 30 reads each after
 *    3 warm-ups, p50 and p99.
 */
import os from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../server/src/context.js';
import type { ResultRecord } from '../server/src/domains/evaluations/results/store.js';
import { BATCH, DAY_MS, IN_FLIGHT, MODELS, SESSIONS, SPANS_PER_RUN, traceIdOf, tracesBody, type Layout } from './agent-reads.js';
import { ingestRun, otlpPoster, pct, perSecond, table } from './lib.js';

const load = () => os.loadavg().map((l) => l.toFixed(2)).join(' ');
const RESULTS_RUNS = 2_000;
const VERSIONS = 50;
const READS = 30;
const WARM_UPS = 3;

export async function benchEvaluations(o: { app: FastifyInstance; ctx: AppContext; address: string; key: string; projectId: string; quick: boolean }): Promise<void> {
  const { app, ctx, key, projectId } = o;
  const call = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object, project = projectId) => {
    const sep = url.includes('?') ? '&' : '?';
    const res = await app.inject({ method, url: `/api/v1${url}${sep}project_id=${project}`, headers: { 'x-svc-api-key': key }, ...(payload ? { payload } : {}) });
    if (res.statusCode !== 200 && res.statusCode !== 201) throw new Error(`${method} ${url} answered ${res.statusCode}: ${res.body}`);
    return res.json();
  };
  console.log(`\nevaluations: load average at start ${load()} (${os.cpus().length} cores)`);

  // ---- 1. deterministic evaluation of recorded runs
  const runs = o.quick ? 2_000 : 10_000;
  const now = Date.now();
  const layout: Layout = { runs, startMs: now - DAY_MS, stepMs: (DAY_MS - 60_000) / runs, perSession: Math.max(1, runs / SESSIONS) };
  for (const m of MODELS)
    await call('PUT', '/llm/pricing', { model: m.model, provider: m.provider, input_usd_per_million_tokens: m.input, output_usd_per_million_tokens: m.output });
  const bodies: Uint8Array[] = [];
  for (let i = 0; i < runs; i += BATCH / SPANS_PER_RUN) bodies.push(tracesBody(layout, i, Math.min(runs, i + BATCH / SPANS_PER_RUN)));
  await ingestRun(otlpPoster(o.address, '/v1/traces', projectId, key), bodies, IN_FLIGHT, []);
  const gate = {
    aggregation: 'all',
    assertions: [
      { field: 'run.status', op: 'equals', value: 'completed' },
      { field: 'run.error_steps', op: 'lte', number: 0 },
      { field: 'steps.tool_names', op: 'contains', value: 'search_docs' },
    ],
  };
  const evaluators = [
    { id: 'bench-gate', kind: 'EVALUATOR_KIND_DETERMINISTIC', config: gate, label: 'gate (3 assertions)' },
    { id: 'bench-cost', kind: 'EVALUATOR_KIND_DETERMINISTIC', config: { measurement: 'run.cost_nanos' }, label: 'measurement run.cost_nanos' },
  ];
  const rows: (string | number)[][] = [];
  for (const e of evaluators) {
    await call('POST', '/evaluation/evaluators', { evaluator_id: e.id, display_name: e.id, metric_name: e.id, kind: e.kind, config_json: JSON.stringify(e.config) });
    let next = 0;
    const latencies: number[] = [];
    let scored = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < runs) {
          const i = next++;
          const s = performance.now();
          const body = await call('POST', '/evaluation/evaluate', {
            evaluator: { evaluator_id: e.id, version: 1 },
            subject_kind: 'SUBJECT_KIND_AGENT_RUN',
            subject_ref: Buffer.from(traceIdOf(i)).toString('hex'),
          });
          latencies.push(performance.now() - s);
          if (body.stored && !body.already_evaluated) scored++;
        }
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    if (scored !== runs) throw new Error(`${e.id}: ${scored} of ${runs} runs scored`);
    latencies.sort((a, b) => a - b);
    rows.push([e.label, runs.toLocaleString('en-US'), IN_FLIGHT, secs.toFixed(1), perSecond(runs, secs), pct(latencies, 50).toFixed(1), pct(latencies, 99).toFixed(1)]);
  }
  table('POST /evaluation/evaluate over recorded runs (deterministic; each reads the run and stores its result)', ['evaluator', 'runs', 'in flight', 's', 'runs/s', 'p50 ms', 'p99 ms'], rows);

  // ---- 2. the results read over 100,000 results
  const resultsProject = (await ctx.projects.create((await ctx.apiKeys.authenticate(key))!, { name: 'bench-evals-results' })).id;
  const orgId = (await ctx.control.assets.liveProjects()).find((p) => p.id === resultsProject)!.orgId;
  const refOf = (i: number) => Buffer.from(traceIdOf(1_000_000 + i)).toString('hex');
  const t1 = performance.now();
  const startMs = now - DAY_MS;
  for (let v = 1; v <= VERSIONS; v++) {
    await ctx.control.transaction(async (tx) => {
      for (let i = 0; i < RESULTS_RUNS; i++) {
        const occurred = new Date(startMs + (i * DAY_MS) / RESULTS_RUNS).toISOString().replace('Z', '000Z');
        const r: ResultRecord = {
          id: ctx.ids.uuid(),
          orgId,
          projectId: resultsProject,
          evaluatorId: `bench-${v % 5}`,
          evaluatorVersion: v,
          metricName: `metric-${v % 5}`,
          mode: i % 3 === 0 ? 'EVALUATION_MODE_SAMPLED' : 'EVALUATION_MODE_ON_DEMAND',
          subjectKind: 'SUBJECT_KIND_AGENT_RUN',
          subjectRef: refOf(i),
          numericValue: (i * v) % 100 / 100,
          label: null,
          explanation: null,
          subjectRelease: `1.${v % 7}.0`,
          legacySource: '',
          occurredAt: occurred,
          evaluatedAt: new Date(now - (VERSIONS - v) * 60_000 + i).toISOString(),
          execution: { sampling: 'NOT_SAMPLED', cost_state: 'FREE', charged_cost_nano_usd: 0, input_tokens: 0, output_tokens: 0, judge_model_state: 'NOT_APPLICABLE', job_status: 'COMPLETED' },
        };
        if (!(await tx.evaluationResults.insert(r))) throw new Error('duplicate bench result');
      }
    });
  }
  const loadSecs = (performance.now() - t1) / 1000;
  const many = Array.from({ length: 200 }, (_, i) => refOf(i * 7)).join(',');
  const windowStart = new Date(startMs + DAY_MS / 4).toISOString();
  const windowEnd = new Date(startMs + DAY_MS / 2).toISOString();
  const reads = [
    { label: 'one run (50 results, history)', url: `/evaluation/results?subject_ref=${refOf(123)}`, expect: (b: { results: unknown[] }) => b.results.length === VERSIONS },
    { label: 'newest 100 of a metric', url: '/evaluation/results?metric_name=metric-3&limit=100', expect: (b: { results: unknown[] }) => b.results.length === 100 },
    { label: '200 runs x share 20', url: `/evaluation/results?subject_refs=${many}`, expect: (b: { results: unknown[]; truncated_subject_refs: unknown[] }) => b.results.length === 4000 && b.truncated_subject_refs.length === 200 },
    { label: 'mode + 6 h window, page 500', url: `/evaluation/results?mode=EVALUATION_MODE_SAMPLED&start=${windowStart}&end=${windowEnd}&limit=500`, expect: (b: { results: unknown[] }) => b.results.length === 500 },
  ];
  const readRows: (string | number)[][] = [];
  for (const r of reads) {
    const times: number[] = [];
    for (let i = 0; i < READS + WARM_UPS; i++) {
      const s = performance.now();
      const body = await call('GET', r.url, undefined, resultsProject);
      const dt = performance.now() - s;
      if (!r.expect(body)) throw new Error(`${r.label}: unexpected answer (${JSON.stringify(body).slice(0, 200)})`);
      if (i >= WARM_UPS) times.push(dt);
    }
    times.sort((a, b) => a - b);
    readRows.push([r.label, READS, pct(times, 50).toFixed(1), pct(times, 99).toFixed(1)]);
  }
  table(
    `GET /evaluation/results over ${(RESULTS_RUNS * VERSIONS).toLocaleString('en-US')} results (${ctx.control.dialect}; loaded in ${loadSecs.toFixed(1)} s)`,
    ['read', 'runs', 'p50 ms', 'p99 ms'],
    readRows,
  );
}
