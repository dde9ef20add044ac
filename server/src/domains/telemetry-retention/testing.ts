/**
 * Test-only: one project's telemetry on either engine, an old half and a new half of each signal, sent the way
 * clients send it (OTLP JSON through the ingest routes; metrics through the write port), for the retention tests.
 */
import { insertHistograms, insertMetric, insertSeries } from '../metrics/test-data.js';
import { projectWithKey, type TestApp } from '../../testing/app.js';
import { attrs, ns } from '../../ingest/otlp/test-fixtures.js';
import { logRequest, postLogs, postTraces, span, spanId, traceId, traceRequest } from '../../ingest/otlp/traces-fixtures.js';

export const DAY = 86_400_000;
export const HOUR = 3_600_000;

/** Every scope the retention tests read, write and delete with. */
export const SCOPES = [
  'ingest:write',
  'metrics:read',
  'traces:read',
  'logs:read',
  'agents:read',
  'llm:read',
  'projects:read',
  'projects:write',
  'metrics:delete',
  'traces:delete',
  'logs:delete',
];

export interface Half {
  /** The run's trace id. */
  traceId: string;
  rootSpanId: string;
  turnId: string;
  logBody: string;
  /** Its time (ms). */
  atMs: number;
}

export interface Seeded {
  projectId: string;
  key: string;
  old: Half;
  fresh: Half;
  /** A trace across the cut-off: its first span is old, its second new (ms of each). */
  across: { traceId: string; oldSpanId: string; newSpanId: string };
}

/**
 * A project with a key, and in it: an agent run of session `s-1` (root, a model call, a memory operation on
 * `mem-1`, an agent event), a log record, `cpu` and `old_only` gauge points and a `lat` histogram sample at
 * `oldAgoMs` before now (the old half) and at one hour before now (the new half), plus a trace whose first span
 * is old and second new.
 */
export async function seedProject(t: TestApp, nowMs: number, oldAgoMs = 10 * DAY): Promise<Seeded> {
  const { projectId, key } = await projectWithKey(t, SCOPES, 'retention');
  const half = async (atMs: number, label: string): Promise<Half> => {
    const trace = traceId();
    const root = spanId();
    const turnId = `turn-${label}`;
    const spans = [
      span({
        traceId: trace,
        spanId: root,
        name: 'invoke_agent bot',
        startMs: atMs,
        endMs: atMs + 100,
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'bot', 'gen_ai.conversation.id': 's-1', 'svc.turn.id': turnId },
        events: [{ name: 'tool.call', ms: atMs + 1 }],
      }),
      span({
        traceId: trace,
        parentSpanId: root,
        name: 'chat gpt-4o',
        startMs: atMs + 2,
        endMs: atMs + 50,
        attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.provider.name': 'openai', 'gen_ai.usage.input_tokens': 10, 'gen_ai.usage.output_tokens': 5 },
      }),
      span({
        traceId: trace,
        parentSpanId: root,
        name: 'search_memory',
        startMs: atMs + 60,
        endMs: atMs + 70,
        attributes: { 'gen_ai.operation.name': 'search_memory', 'svc.memory.item.id': 'mem-1' },
      }),
    ];
    const sent = await postTraces(t, traceRequest({ 'service.name': 'api' }, spans), { format: 'json', key });
    if (sent.statusCode !== 200) throw new Error(`traces: ${sent.statusCode} ${sent.body}`);
    const logBody = `${label} line`;
    const logs = await postLogs(
      t,
      logRequest({ 'service.name': 'api' }, [{ timeUnixNano: ns(atMs), severityNumber: 9, body: { stringValue: logBody }, attributes: attrs({ half: label }) }]),
      { format: 'json', key },
    );
    if (logs.statusCode !== 200) throw new Error(`logs: ${logs.statusCode} ${logs.body}`);
    await insertMetric(t, { projectId, name: 'cpu', type: 'gauge', labels: { host: label } }, [[atMs, label === 'old' ? 100 : 1]]);
    if (label === 'old') await insertMetric(t, { projectId, name: 'old_only', type: 'gauge' }, [[atMs, 5]]);
    const lat = await insertSeries(t, { projectId, name: 'lat', type: 'histogram', labels: { host: label } });
    await insertHistograms(t, { projectId, name: 'lat', seriesId: lat }, [{ at: atMs, temporality: 'delta', bounds: [1, 5], counts: [1, 2, 3] }]);
    return { traceId: trace, rootSpanId: root, turnId, logBody, atMs };
  };
  const old = await half(nowMs - oldAgoMs, 'old');
  const fresh = await half(nowMs - HOUR, 'new');
  const across = { traceId: traceId(), oldSpanId: spanId(), newSpanId: spanId() };
  const spans = [
    span({ traceId: across.traceId, spanId: across.oldSpanId, name: 'early', startMs: nowMs - oldAgoMs, endMs: nowMs - oldAgoMs + 10 }),
    span({ traceId: across.traceId, spanId: across.newSpanId, parentSpanId: across.oldSpanId, name: 'late', startMs: nowMs - HOUR, endMs: nowMs - HOUR + 10 }),
  ];
  const sent = await postTraces(t, traceRequest({ 'service.name': 'api' }, spans), { format: 'json', key });
  if (sent.statusCode !== 200) throw new Error(`traces: ${sent.statusCode} ${sent.body}`);
  return { projectId, key, old, fresh, across };
}

/** PUT the project's windows (the seeded key holds every scope it needs). */
export async function setWindows(t: TestApp, s: { projectId: string; key: string }, windows: { signal: string; retention_days: number }[]) {
  const r = await t.call({ method: 'PUT', url: `/api/v1/projects/${s.projectId}/retention`, key: s.key, payload: { windows } });
  if (r.statusCode !== 200) throw new Error(`retention: ${r.statusCode} ${r.body}`);
  return r.json();
}

export const ALL_SIGNALS = (days: number) => ['SIGNAL_METRICS', 'SIGNAL_SPANS', 'SIGNAL_LOGS'].map((signal) => ({ signal, retention_days: days }));
