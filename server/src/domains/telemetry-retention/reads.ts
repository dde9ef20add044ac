/**
 * Every telemetry read, with the retention windows applied (docs/retention.md): the engine's read ports
 * wrapped once, so no domain service and no SQL of a read needs to know about windows. What is older than a
 * project's window for its signal is left out of every read at once, whether or not the sweep has deleted it
 * yet, on either engine:
 *
 * - a read over a time window has its start moved up to the cut-off (metrics names, labels, aggregates,
 *   histograms, forecast history; trace and run lists, LLM calls and usage, agent events, run health, the
 *   evaluation sampler's scan; services per table); logs take the cut-off in their filter (search, aggregate,
 *   fields, patterns, the live tail), so a bucket grid or a tail position never moves;
 * - a metric's tombstone reads as at least the cut-off (every point at or before a tombstone is hidden), so
 *   the histogram reads that start after the tombstone start after the cut-off too;
 * - a detail read drops what is older: a trace's spans and events, a run's steps, a log record and its
 *   context; a trace, run or log record with nothing left is 404, as a deleted one;
 * - sessions and turns are made of the runs that started at or after the cut-off; memory operations of
 *   steps that did.
 *
 * Each row is dated by its own time: a span by its start, a span event by its time, a log record and a metric
 * point by their timestamps, a run by its root span's start, a trace in the trace list by its first span.
 * Reads of what is not telemetry rows (metric descriptions, agent identities and their sightings) are as before.
 */
import type { RunReleaseReader } from '../evaluations/scoring/facts.js';
import type { AgentRunsStore, RunFilter } from '../agent-runs/store.js';
import type { LlmCallFilter, LlmCallsStore } from '../llm/calls-store.js';
import type { LogFilter, LogsStore } from '../logs/store.js';
import type { MemoryOperationsReader } from '../memory/store.js';
import type { ForecastHistoryReader, MetricsStore, TimeWindow } from '../metrics/store.js';
import type { TracesStore } from '../traces/store.js';
import { cutoffMs } from './model.js';
import type { RetentionCutoffs } from './service.js';

/** The read ports of the telemetry engine (storage/telemetry/engine.ts) the domains read through. */
export interface TelemetryReads {
  metrics: MetricsStore;
  forecastHistory: ForecastHistoryReader;
  traces: TracesStore;
  logs: LogsStore;
  agentRuns: AgentRunsStore;
  llmCalls: LlmCallsStore;
  memory: MemoryOperationsReader;
  releases: RunReleaseReader;
}

const later = (a: number | undefined, b: number | undefined): number | undefined => (a === undefined ? b : b === undefined ? a : Math.max(a, b));

/**
 * After every run that started at the cut-off or later (a scan position in (start, trace id) order): no trace id
 * sorts after '~' (they are lower-case hex), so nothing that started at `cut - 1` is after it.
 */
const AFTER_EVERY_ID = '~';

export function retainedReads(ports: TelemetryReads, cutoffs: RetentionCutoffs): TelemetryReads {
  const spans = (projectId: string) => cutoffs.cutoffUs(projectId, 'SIGNAL_SPANS');
  const logs = (projectId: string) => cutoffs.cutoffUs(projectId, 'SIGNAL_LOGS');
  const metricsMs = async (projectId: string) => {
    const us = await cutoffs.cutoffUs(projectId, 'SIGNAL_METRICS');
    return us === undefined ? undefined : cutoffMs(us);
  };
  const m = ports.metrics;
  const t = ports.traces;
  const l = ports.logs;
  const a = ports.agentRuns;
  const c = ports.llmCalls;

  /** A metrics window starting no earlier than the cut-off; null when nothing of it is visible. */
  const metricWindow = (w: TimeWindow, cut: number | undefined): TimeWindow | null => {
    const startMs = later(w.startMs, cut);
    return startMs !== undefined && w.endMs !== undefined && startMs > w.endMs ? null : { ...w, startMs };
  };
  const logFilter = (f: LogFilter, cut: number | undefined): LogFilter => (cut === undefined ? f : { ...f, notBeforeUs: later(f.notBeforeUs, cut) });

  const metrics: MetricsStore = {
    async names(projectId, window, limit) {
      const w = metricWindow(window, await metricsMs(projectId));
      return w ? m.names(projectId, w, limit) : { names: [], totalCount: 0 };
    },
    async labels(projectId, metricName, window) {
      const w = metricWindow(window, await metricsMs(projectId));
      return w ? m.labels(projectId, metricName, w) : [];
    },
    async tombstone(projectId, metricName) {
      const [tomb, cut] = await Promise.all([m.tombstone(projectId, metricName), metricsMs(projectId)]);
      // A point at or before a tombstone is hidden; one before the cut-off is too.
      return cut === undefined ? tomb : Math.max(tomb ?? Number.NEGATIVE_INFINITY, cut - 1);
    },
    async aggregate(q) {
      const cut = await metricsMs(q.projectId);
      const startMs = Math.max(q.startMs, cut ?? q.startMs);
      return startMs > q.endMs ? { kind: 'rows', rows: [] } : m.aggregate({ ...q, startMs });
    },
    describe: (projectId, metricName) => m.describe(projectId, metricName),
    async histogramAggregateSamples(q, onSample) {
      const cut = await metricsMs(q.projectId);
      const startMs = Math.max(q.startMs, cut ?? q.startMs);
      return startMs > q.endMs ? 'ok' : m.histogramAggregateSamples({ ...q, startMs }, onSample);
    },
    async histogramSamples(q, onSample) {
      const cut = await metricsMs(q.projectId);
      const startMs = Math.max(q.startMs, cut ?? q.startMs);
      if (startMs <= q.endMs) await m.histogramSamples({ ...q, startMs }, onSample);
    },
    deleteMetric: (projectId, metricName, atMs) => m.deleteMetric(projectId, metricName, atMs),
  };

  const forecastHistory: ForecastHistoryReader = async (q) => {
    const cut = await metricsMs(q.projectId);
    const startMs = Math.max(q.startMs, cut ?? q.startMs);
    return startMs > q.endMs ? [] : ports.forecastHistory({ ...q, startMs });
  };

  const traces: TracesStore = {
    async search(q) {
      const fromUs = Math.max(q.fromUs, (await spans(q.projectId)) ?? q.fromUs);
      return fromUs > q.toUs ? [] : t.search({ ...q, fromUs });
    },
    async size(projectId, traceId) {
      const [size, cut] = await Promise.all([t.size(projectId, traceId), spans(projectId)]);
      // Every span ended, so started, before the cut-off: nothing of the trace is visible.
      return cut !== undefined && size.spans > 0 && size.endUs < cut ? { spans: 0, events: 0, endUs: 0 } : size;
    },
    async spans(projectId, traceId) {
      const [rows, cut] = await Promise.all([t.spans(projectId, traceId), spans(projectId)]);
      return cut === undefined ? rows : rows.filter((s) => s.startUs >= cut);
    },
    async events(projectId, traceId) {
      const [rows, cut] = await Promise.all([t.events(projectId, traceId), spans(projectId)]);
      return cut === undefined ? rows : rows.filter((e) => e.tsUs >= cut);
    },
    deleteTrace: (projectId, traceId, atUs) => t.deleteTrace(projectId, traceId, atUs),
    async services(q) {
      const [s, lg] = await Promise.all([q.spans ? spans(q.projectId) : undefined, q.logs ? logs(q.projectId) : undefined]);
      if (s === undefined && lg === undefined) return t.services(q);
      return t.services({ ...q, notBeforeUs: { spans: later(q.notBeforeUs?.spans, s), logs: later(q.notBeforeUs?.logs, lg) } });
    },
  };

  const logsStore: LogsStore = {
    async search(q) {
      return l.search({ ...q, filter: logFilter(q.filter, await logs(q.projectId)) });
    },
    async get(projectId, logId) {
      const [row, cut] = await Promise.all([l.get(projectId, logId), logs(projectId)]);
      return row && cut !== undefined && row.tsUs < cut ? null : row;
    },
    async neighbours(projectId, serviceName, at, side, n) {
      const [rows, cut] = await Promise.all([l.neighbours(projectId, serviceName, at, side, n), logs(projectId)]);
      // Nearest first: on the earlier side, what is left out is the tail of the list.
      return cut === undefined ? rows : rows.filter((r) => r.tsUs >= cut);
    },
    async aggregate(q) {
      return l.aggregate({ ...q, filter: logFilter(q.filter, await logs(q.projectId)) });
    },
    async fields(q) {
      return l.fields({ ...q, filter: logFilter(q.filter, await logs(q.projectId)) });
    },
    async bodies(q) {
      return l.bodies({ ...q, filter: logFilter(q.filter, await logs(q.projectId)) });
    },
    delete: (q) => l.delete(q),
    maxIngested: (projectId) => l.maxIngested(projectId),
    idsIngestedBetween: (projectId, afterUs, upToUs) => l.idsIngestedBetween(projectId, afterUs, upToUs),
    async tail(q) {
      return l.tail({ ...q, filter: logFilter(q.filter, await logs(q.projectId)) });
    },
  };

  const agentRuns: AgentRunsStore = {
    async runs(filter, opts) {
      const cut = await spans(filter.projectId);
      if (cut === undefined) return a.runs(filter, opts);
      // A lookup by id (the run read, a turn's runs) keeps the store's index path and drops an older run here.
      if (filter.traceIds && opts.limit === undefined && !opts.after) return (await a.runs(filter, opts)).filter((r) => r.startUs >= cut);
      const sinceUs = Math.max(filter.sinceUs ?? cut, cut);
      if (filter.untilUs !== undefined && sinceUs > filter.untilUs) return [];
      return a.runs({ ...filter, sinceUs } satisfies RunFilter, opts);
    },
    async runStarts(projectId, opts) {
      const cut = await spans(projectId);
      const after = cut !== undefined && opts.after.startUs < cut ? { startUs: cut - 1, traceId: AFTER_EVERY_ID } : opts.after;
      return a.runStarts(projectId, { ...opts, after });
    },
    modelUsage: (projectId, traceIds) => a.modelUsage(projectId, traceIds),
    async sessionUsage(projectId, sessionKeys, notBeforeUs) {
      return a.sessionUsage(projectId, sessionKeys, later(notBeforeUs, await spans(projectId)));
    },
    async sessionUsageFingerprints(projectId, sessionKeys, notBeforeUs) {
      return a.sessionUsageFingerprints(projectId, sessionKeys, later(notBeforeUs, await spans(projectId)));
    },
    async steps(projectId, traceId) {
      const [rows, cut] = await Promise.all([a.steps(projectId, traceId), spans(projectId)]);
      return cut === undefined ? rows : rows.filter((s) => s.startUs >= cut);
    },
    async sessions(filter, opts) {
      const cut = await spans(filter.projectId);
      return a.sessions(cut === undefined ? filter : { ...filter, notBeforeUs: later(filter.notBeforeUs, cut) }, opts);
    },
    async turns(projectId, sessionKey, opts) {
      const cut = await spans(projectId);
      return a.turns(projectId, sessionKey, cut === undefined ? opts : { ...opts, notBeforeUs: later(opts.notBeforeUs, cut) });
    },
    async events(filter, opts) {
      const cut = await spans(filter.projectId);
      if (cut === undefined) return a.events(filter, opts);
      const sinceUs = Math.max(filter.sinceUs ?? cut, cut);
      return filter.untilUs !== undefined && sinceUs > filter.untilUs ? [] : a.events({ ...filter, sinceUs }, opts);
    },
    identityKeys: (projectId, opts) => a.identityKeys(projectId, opts),
    sightings: (projectId, keys) => a.sightings(projectId, keys),
    sightingEnvironments: (projectId, keys, perKey) => a.sightingEnvironments(projectId, keys, perKey),
    async runHealth(projectId, keys, sinceUs) {
      return a.runHealth(projectId, keys, Math.max(sinceUs, (await spans(projectId)) ?? sinceUs));
    },
  };

  const clampCalls = async (f: LlmCallFilter): Promise<LlmCallFilter | null> => {
    const sinceUs = Math.max(f.sinceUs, (await spans(f.projectId)) ?? f.sinceUs);
    return sinceUs > f.untilUs ? null : { ...f, sinceUs };
  };
  const llmCalls: LlmCallsStore = {
    async calls(filter, opts) {
      const f = await clampCalls(filter);
      return f ? c.calls(f, opts) : [];
    },
    async usage(filter) {
      const f = await clampCalls(filter);
      return f ? c.usage(f) : [];
    },
  };

  const memory: MemoryOperationsReader = {
    async operations(projectId, itemKey, limit, notBeforeUs) {
      return ports.memory.operations(projectId, itemKey, limit, later(notBeforeUs, await spans(projectId)));
    },
    async recordingAgent(projectId, itemKey, notBeforeUs) {
      return ports.memory.recordingAgent(projectId, itemKey, later(notBeforeUs, await spans(projectId)));
    },
  };

  // The release of a run is read for a run already read (and so visible).
  return { metrics, forecastHistory, traces, logs: logsStore, agentRuns, llmCalls, memory, releases: ports.releases };
}
