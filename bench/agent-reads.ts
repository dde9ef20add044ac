/**
 * The agent section of `npm run bench` (`--only=agent`): loads a day of agent runs and logs through the real
 * OTLP endpoints (protobuf, 5,000 items a request, 4 in flight) into a project of its own, then times the
 * agent, trace and log reads through `app.inject` (no socket: the figure is the app's routing, validation,
 * SQL and serialization), 30 runs each after 3 warm-ups.
 *
 * Dataset (full; `--quick` has 20,000 runs): 100,000 runs of 10 spans (1M spans) evenly over the last 24 h,
 * ~1,000 sessions (gen_ai.conversation.id) of 3 turns each, 20 sessions interleaved at any time; each run is
 * an invoke_agent root, 4 chat steps with tokens (2 priced models), 3 tool calls (every 4th run has one
 * failed, and then the run status is failed), a retrieval and a memory upsert; the first chat step carries
 * a context.assembly event. Plus 200,000 log records over the same 24 h from 20 services.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import { createRequire } from 'node:module';
import type { FastifyInstance, InjectOptions } from 'fastify';
import type { TelemetryEngine } from '../server/src/storage/telemetry/engine.js';
import { afterBulkLoad, countRows } from './engine.js';
import { ingestRun, otlpPoster, pct, perSecond, table } from './lib.js';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportTraceReq = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const ExportLogsReq = root.opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest;

const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const int = (key: string, v: number) => ({ key, value: { intValue: v } });

export const DAY_MS = 24 * 3_600_000;
export const SPANS_PER_RUN = 10;
export const SESSIONS = 1_000;
const TURNS = 3;
/** Sessions open at the same time: runs are dealt round-robin to a block of this many sessions. */
const CONCURRENT_SESSIONS = 20;
export const BATCH = 5_000;
export const IN_FLIGHT = 4;
const LOGS = 200_000;
const LOG_SERVICES = 20;
const RUNS = 30;
const WARM_UPS = 3;

export const MODELS = [
  { model: 'gpt-4o-mini', provider: 'openai', input: 0.15, output: 0.6 },
  { model: 'claude-sonnet-4', provider: 'anthropic', input: 3, output: 15 },
];
const TOOLS = ['search_docs', 'run_sql', 'send_email', 'fetch_url'];

const md5 = (s: string) => createHash('md5').update(s).digest();
/** The trace id (= run id) of run `i`: deterministic, so the reads can name runs without asking. */
export const traceIdOf = (i: number) => md5(`run-${i}`);
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

export interface Layout {
  runs: number;
  startMs: number;
  stepMs: number;
  perSession: number;
}

/** Session, position in it and turn of run `i` (runs are in time order). */
function placement(l: Layout, i: number) {
  const block = CONCURRENT_SESSIONS * l.perSession;
  const session = Math.floor(i / block) * CONCURRENT_SESSIONS + (i % CONCURRENT_SESSIONS);
  const j = Math.floor((i % block) / CONCURRENT_SESSIONS);
  return { sessionKey: `conv-${String(session).padStart(4, '0')}`, turn: Math.min(TURNS - 1, Math.floor((j * TURNS) / l.perSession)) };
}

/** The 10 spans of run `i` (`into`: in that session, at that time, instead of its place in the layout). */
function runSpans(l: Layout, i: number, into?: { sessionKey: string; atMs: number }): object[] {
  const traceId = traceIdOf(i);
  const spanId = (k: number) => Buffer.concat([traceId.subarray(0, 7), Buffer.from([k])]);
  const baseNs = BigInt(Math.round(into?.atMs ?? l.startMs + i * l.stepMs)) * 1_000_000n;
  const t = (ms: number) => (baseNs + BigInt(ms) * 1_000_000n).toString();
  const placed = placement(l, i);
  const { sessionKey, turn } = into ? { ...placed, sessionKey: into.sessionKey } : placed;
  const agent = i % 20;
  const failed = i % 4 === 0;
  const spans: object[] = [
    {
      traceId,
      spanId: spanId(0),
      name: `invoke_agent support-bot-${agent}`,
      kind: 1,
      startTimeUnixNano: t(0),
      endTimeUnixNano: t(9_000),
      attributes: [
        str('gen_ai.operation.name', 'invoke_agent'),
        str('gen_ai.agent.name', `support-bot-${agent}`),
        str('gen_ai.agent.id', `agent-${agent}`),
        str('gen_ai.conversation.id', sessionKey),
        str('svc.turn.id', `turn-${turn}`),
        str('svc.agent.run.status', failed ? 'failed' : 'completed'),
        str('gen_ai.provider.name', 'openai'),
      ],
      status: { code: failed ? 2 : 0 },
    },
  ];
  for (let k = 1; k < SPANS_PER_RUN; k++) {
    const op = k <= 4 ? 'chat' : k <= 7 ? 'execute_tool' : k === 8 ? 'retrieval' : 'upsert_memory';
    const m = MODELS[(i + k) % 2];
    const toolFailed = failed && k === 7;
    const attributes =
      op === 'chat'
        ? [
            str('gen_ai.operation.name', 'chat'),
            str('gen_ai.provider.name', m.provider),
            str('gen_ai.request.model', m.model),
            str('gen_ai.response.model', m.model),
            int('gen_ai.usage.input_tokens', 800 + ((i * 37 + k * 101) % 3000)),
            int('gen_ai.usage.output_tokens', 100 + ((i * 11 + k * 53) % 700)),
            str('gen_ai.response.status', 'completed'),
            str('gen_ai.conversation.id', sessionKey),
          ]
        : op === 'execute_tool'
          ? [
              str('gen_ai.operation.name', 'execute_tool'),
              str('gen_ai.tool.name', TOOLS[(i + k) % 4]),
              str('gen_ai.tool.call.id', `call_${hex(traceId).slice(0, 10)}_${k}`),
              str('gen_ai.response.status', toolFailed ? 'failed' : 'completed'),
            ]
          : op === 'retrieval'
            ? [str('gen_ai.operation.name', 'retrieval'), str('gen_ai.data_source.id', 'kb-main'), str('gen_ai.response.status', 'completed')]
            : [
                str('gen_ai.operation.name', 'upsert_memory'),
                str('gen_ai.data_source.id', 'mem-store'),
                str('svc.memory.item.id', `item-${i}`),
                str('svc.memory.item.provenance', 'user_message'),
                str('svc.memory.trust_label', 'MEMORY_TRUST_LABEL_TRUSTED'),
                str('gen_ai.response.status', 'completed'),
              ];
    spans.push({
      traceId,
      spanId: spanId(k),
      parentSpanId: spanId(0),
      name: op === 'chat' ? `chat ${m.model}` : op === 'execute_tool' ? `execute_tool ${TOOLS[(i + k) % 4]}` : op,
      kind: op === 'chat' ? 3 : 1,
      startTimeUnixNano: t((k - 1) * 1000 + 10),
      endTimeUnixNano: t((k - 1) * 1000 + 900),
      attributes,
      events:
        k === 1
          ? [
              {
                name: 'context.assembly',
                timeUnixNano: t(11),
                attributes: [
                  int('svc.context.assembly.budget_tokens', 8000),
                  int('svc.context.assembly.assembled_tokens', 5000 + (i % 3000)),
                  { key: 'svc.context.assembly.source_ids', value: { arrayValue: { values: [{ stringValue: `doc-${i % 500}` }, { stringValue: 'doc-faq' }] } } },
                ],
              },
            ]
          : [],
      status: { code: toolFailed ? 2 : 0 },
    });
  }
  return spans;
}

/** One ExportTraceServiceRequest of runs [from, to), or (`into`) of one new run `from + k` into each session `k`. */
export function tracesBody(l: Layout, from: number, to: number, into?: { sessionKeys: string[]; atMs: number }): Uint8Array {
  const spans: object[] = [];
  if (into) into.sessionKeys.forEach((sessionKey, k) => spans.push(...runSpans(l, from + k, { sessionKey, atMs: into.atMs })));
  else for (let i = from; i < to; i++) spans.push(...runSpans(l, i));
  const msg = ExportTraceReq.fromObject({
    resourceSpans: [
      {
        resource: {
          attributes: [
            str('service.name', 'support-agents'),
            str('deployment.environment.name', 'prod'),
            str('host.name', 'bench-host'),
            str('telemetry.sdk.language', 'nodejs'),
          ],
        },
        scopeSpans: [{ scope: { name: 'bench-agent', version: '1.0.0' }, spans }],
      },
    ],
  });
  return ExportTraceReq.encode(msg).finish();
}

// ---- logs

/** Body templates (weights out of 100) with their severity; "timeout" is the word searched for (~3%). */
const LOG_TEMPLATES: { w: number; sev: [number, string]; body: (n: number) => string }[] = [
  { w: 30, sev: [9, 'INFO'], body: (n) => `GET /api/orders/${n % 100_000} 200 in ${n % 250}ms` },
  { w: 15, sev: [9, 'INFO'], body: (n) => `POST /api/checkout 201 in ${(n % 900) + 20}ms` },
  { w: 12, sev: [5, 'DEBUG'], body: (n) => `cache miss for key "sess:${(n * 2654435761).toString(16).slice(0, 8)}"` },
  { w: 10, sev: [9, 'INFO'], body: (n) => `user ${md5(`u${n % 5000}`).toString('hex').replace(/^(.{8})(.{4})(.{4})(.{4})(.{12}).*$/, '$1-$2-$3-$4-$5')} signed in from 10.0.${n % 256}.${(n * 7) % 256}` },
  { w: 10, sev: [9, 'INFO'], body: (n) => `processed batch of ${n % 500} events in ${n % 90}ms` },
  { w: 8, sev: [13, 'WARN'], body: (n) => `retrying job ${n} (attempt ${(n % 3) + 1} of 3)` },
  { w: 6, sev: [13, 'WARN'], body: (n) => `payment ${n} declined: insufficient funds` },
  { w: 3, sev: [17, 'ERROR'], body: (n) => `upstream timeout after ${3000 + (n % 2000)}ms calling inventory-svc` },
  { w: 3, sev: [13, 'WARN'], body: (n) => `db pool exhausted, waited ${n % 400}ms for a connection` },
  { w: 3, sev: [17, 'ERROR'], body: (n) => `unhandled error in worker ${n % 16}: connection reset by peer` },
];
const TEMPLATE_AT: number[] = LOG_TEMPLATES.flatMap((t, i) => Array<number>(t.w).fill(i));

/** One ExportLogsServiceRequest of records [from, to) (record k at startMs + k * stepMs), one resource per service. */
function logsBody(startMs: number, stepMs: number, from: number, to: number): Uint8Array {
  const byService: object[][] = Array.from({ length: LOG_SERVICES }, () => []);
  for (let k = from; k < to; k++) {
    const h = (k * 2654435761) >>> 0;
    const tpl = LOG_TEMPLATES[TEMPLATE_AT[h % 100]];
    const ns = (BigInt(Math.round(startMs + k * stepMs)) * 1_000_000n).toString();
    byService[(h >>> 8) % LOG_SERVICES].push({
      timeUnixNano: ns,
      observedTimeUnixNano: ns,
      severityNumber: tpl.sev[0],
      severityText: tpl.sev[1],
      body: { stringValue: tpl.body(k) },
      attributes: [str('code.function', `handler${h % 12}`), int('thread.id', h % 64), str('http.route', `/api/r${h % 30}`)],
    });
  }
  const msg = ExportLogsReq.fromObject({
    resourceLogs: byService.map((logRecords, s) => ({
      resource: {
        attributes: [
          str('service.name', `svc-${String(s).padStart(2, '0')}`),
          str('deployment.environment.name', 'prod'),
          str('host.name', `host-${s % 5}`),
        ],
      },
      scopeLogs: [{ scope: { name: 'app-logger' }, logRecords }],
    })),
  });
  return ExportLogsReq.encode(msg).finish();
}

// ---- the section

export interface AgentBenchInput {
  app: FastifyInstance;
  /** The engine the app runs on: the stored rows are counted there. */
  telemetry: TelemetryEngine;
  address: string;
  key: string;
  /** A project of its own (the other sections' spans would otherwise be in the reads). */
  projectId: string;
  quick: boolean;
}

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(' ');

export async function benchAgentReads({ app, telemetry, address, key, projectId, quick }: AgentBenchInput): Promise<void> {
  const runs = quick ? 20_000 : 100_000;
  const now = Date.now();
  const layout: Layout = { runs, startMs: now - DAY_MS, stepMs: (DAY_MS - 60_000) / runs, perSession: runs / SESSIONS };
  console.log(`\nagent reads: load average at start ${load()} (${os.cpus().length} cores)`);

  // Model prices, so runs and sessions have costs.
  for (const m of MODELS) {
    const res = await app.inject({
      method: 'PUT',
      url: `/api/v1/llm/pricing?project_id=${projectId}`,
      headers: { 'x-svc-api-key': key },
      payload: { model: m.model, provider: m.provider, input_usd_per_million_tokens: m.input, output_usd_per_million_tokens: m.output },
    });
    if (res.statusCode !== 200) throw new Error(`PUT /llm/pricing answered ${res.statusCode}: ${res.body}`);
  }

  // ---- the dataset (bodies are encoded before the clock starts)
  const t0 = performance.now();
  const runsPerBody = BATCH / SPANS_PER_RUN;
  const spanBodies: Uint8Array[] = [];
  for (let i = 0; i < runs; i += runsPerBody) spanBodies.push(tracesBody(layout, i, Math.min(runs, i + runsPerBody)));
  const logStep = DAY_MS / LOGS;
  const logBodies: Uint8Array[] = [];
  for (let k = 0; k < LOGS; k += BATCH) logBodies.push(logsBody(now - DAY_MS, logStep, k, Math.min(LOGS, k + BATCH)));
  const encodeSecs = (performance.now() - t0) / 1000;

  const ingestRows: (string | number)[][] = [];
  const kib = (bodies: Uint8Array[]) => `${Math.round(bodies.reduce((a, b) => a + b.length, 0) / bodies.length / 1024)} KiB`;
  const spans = await ingestRun(otlpPoster(address, '/v1/traces', projectId, key), spanBodies, IN_FLIGHT, []);
  ingestRows.push(['spans', (runs * SPANS_PER_RUN).toLocaleString('en-US'), spanBodies.length, kib(spanBodies), IN_FLIGHT, spans.secs.toFixed(1), perSecond(runs * SPANS_PER_RUN, spans.secs), spans.p50.toFixed(0), spans.p99.toFixed(0)]);
  const logs = await ingestRun(otlpPoster(address, '/v1/logs', projectId, key), logBodies, IN_FLIGHT, []);
  ingestRows.push(['logs', LOGS.toLocaleString('en-US'), logBodies.length, kib(logBodies), IN_FLIGHT, logs.secs.toFixed(1), perSecond(LOGS, logs.secs), logs.p50.toFixed(0), logs.p99.toFixed(0)]);
  spanBodies.length = 0;
  logBodies.length = 0;

  // Everything answered 200 must be there (counted by the engine that stores it).
  const stored = {
    spans: await countRows(telemetry, 'spans', projectId),
    events: await countRows(telemetry, 'span_events', projectId),
    logs: await countRows(telemetry, 'logs', projectId),
  };
  if (stored.spans !== runs * SPANS_PER_RUN || stored.events !== runs || stored.logs !== LOGS)
    throw new Error(`stored ${JSON.stringify(stored)}, expected ${runs * SPANS_PER_RUN} spans, ${runs} events, ${LOGS} logs`);
  const settled = await afterBulkLoad(telemetry, ['spans', 'span_events', 'logs', 'trace_summaries', 'run_summaries']);
  table(
    `Agent dataset ingest through OTLP protobuf (${runs.toLocaleString('en-US')} runs x ${SPANS_PER_RUN} spans, ~${SESSIONS} sessions, over 24 h; ${LOGS.toLocaleString('en-US')} logs from ${LOG_SERVICES} services; every 2xx is committed)`,
    ['signal', 'items', 'requests', 'body', 'in flight', 'secs', 'items/s', 'p50 ms', 'p99 ms'],
    ingestRows,
  );
  console.log(`(bodies encoded beforehand in ${encodeSecs.toFixed(1)} s, not counted; ${settled}; load average ${load()})`);

  // ---- the reads
  const api = (path: string) => `/api/v1${path}${path.includes('?') ? '&' : '?'}project_id=${projectId}`;
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url: api(url), headers: { 'x-svc-api-key': key } });
    if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
    return res.json() as Record<string, unknown>;
  };
  // Ids that vary per iteration (33 runs and sessions spread over the day), so no two runs read the same row.
  const sampleRun = (n: number) => Math.floor(((n % (RUNS + WARM_UPS)) + 0.5) * (runs / (RUNS + WARM_UPS)));
  const runId = (n: number) => hex(traceIdOf(sampleRun(n)));
  const sessionKey = (n: number) => placement(layout, sampleRun(n)).sessionKey;
  const iso = (ms: number) => new Date(ms).toISOString();
  const hourAgo = now - 12 * 3_600_000; // a 1 h window in the middle of the day
  const eventsWindow = `since=${iso(hourAgo)}&until=${iso(hourAgo + 3_600_000)}`;

  // The cursor of page 20 of the run list.
  let cursor: string | null = null;
  for (let page = 1; page < 20; page++) {
    const body = await get(`/agent-runs?limit=50${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    cursor = body.next_cursor as string | null;
    if (!cursor) throw new Error(`the run list ended at page ${page}`);
  }
  const page20 = cursor!;

  const len = (field: string) => (b: Record<string, unknown>) => {
    const n = (b[field] as unknown[]).length;
    return `${n} ${n === 1 ? field.slice(0, -1) : field}`;
  };
  // Constant ingest into the newest sessions: before each read, one new run in each session of the first page.
  const post = otlpPoster(address, '/v1/traces', projectId, key);
  const touchFirstPage = async (n: number) => {
    const keys = ((await get('/agent-sessions?limit=50')).sessions as { session_key: string }[]).map((s) => s.session_key);
    await post(tracesBody(layout, runs + n * keys.length, 0, { sessionKeys: keys, atMs: Date.now() - 60_000 }));
  };
  const reads: { label: string; before?: (n: number) => Promise<void>; inject: (n: number) => InjectOptions; answered: (b: Record<string, unknown>) => string }[] = [
    { label: 'GET /agent-runs?limit=50', inject: () => ({ url: '/agent-runs?limit=50' }), answered: len('runs') },
    { label: 'GET /agent-runs?limit=50, page 20 (cursor)', inject: () => ({ url: `/agent-runs?limit=50&cursor=${encodeURIComponent(page20)}` }), answered: len('runs') },
    { label: 'GET /agent-runs?session_key=', inject: (n) => ({ url: `/agent-runs?session_key=${sessionKey(n)}` }), answered: len('runs') },
    { label: 'GET /agent-runs/{id}', inject: (n) => ({ url: `/agent-runs/${runId(n)}` }), answered: (b) => `${b.step_count} steps` },
    { label: 'GET /agent-runs/{id}/graph', inject: (n) => ({ url: `/agent-runs/${runId(n)}/graph` }), answered: len('steps') },
    { label: 'GET /agent-events?run_id=', inject: (n) => ({ url: `/agent-events?run_id=${runId(n)}` }), answered: len('events') },
    { label: 'GET /agent-events?since&until (1 h, category=context)', inject: () => ({ url: `/agent-events?${eventsWindow}&category=context` }), answered: len('events') },
    { label: 'GET /agent-sessions?limit=50', inject: () => ({ url: '/agent-sessions?limit=50' }), answered: len('sessions') },
    { label: 'GET /agent-sessions?limit=50, every session changed', before: touchFirstPage, inject: () => ({ url: '/agent-sessions?limit=50' }), answered: len('sessions') },
    { label: 'GET /agent-sessions/{key}', inject: (n) => ({ url: `/agent-sessions/${sessionKey(n)}` }), answered: (b) => `${b.run_count} runs` },
    { label: 'GET /traces?limit=20&since=1h', inject: () => ({ url: '/traces?limit=20&since=1h' }), answered: len('traces') },
    { label: 'GET /traces/{id}', inject: (n) => ({ url: `/traces/${runId(n)}` }), answered: len('spans') },
    { label: 'GET /logs?limit=50&since=1h', inject: () => ({ url: '/logs?limit=50&since=1h' }), answered: len('logs') },
    { label: 'GET /logs?q=timeout&since=24h', inject: () => ({ url: '/logs?q=timeout&since=24h' }), answered: len('logs') },
    {
      label: 'POST /logs/aggregate (24 h, step 1h, by service)',
      inject: () => ({ method: 'POST', url: '/logs/aggregate', payload: { since: '24h', step: '1h', group_by: ['service'] } }),
      answered: (b) => `${(b.series as unknown[]).length} series`,
    },
    { label: 'GET /logs/patterns?since=1h', inject: () => ({ url: '/logs/patterns?since=1h' }), answered: (b) => `${(b.patterns as unknown[]).length} of ${b.scanned} logs` },
  ];

  const rows: (string | number)[][] = [];
  for (const r of reads) {
    const times: number[] = [];
    let answered = '';
    for (let n = 0; n < RUNS + WARM_UPS; n++) {
      await r.before?.(n);
      const o = r.inject(n);
      const t = performance.now();
      const res = await app.inject({ method: 'GET', ...o, url: api(o.url as string), headers: { 'x-svc-api-key': key } });
      const dt = performance.now() - t;
      if (res.statusCode !== 200) throw new Error(`${r.label} answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
      if (n >= WARM_UPS) times.push(dt);
      if (n === WARM_UPS) answered = r.answered(res.json());
    }
    times.sort((a, b) => a - b);
    rows.push([r.label, answered, pct(times, 50).toFixed(1), pct(times, 99).toFixed(1)]);
  }
  table(
    `Agent, trace and log reads (app.inject; ${(runs * SPANS_PER_RUN).toLocaleString('en-US')} spans, ${LOGS.toLocaleString('en-US')} logs; ${RUNS} runs each after ${WARM_UPS} warm-ups, p99 of ${RUNS} is the slowest)`,
    ['read', 'answered', 'p50 ms', 'p99 ms'],
    rows,
  );
  console.log(`(load average at the end ${load()})`);
}
