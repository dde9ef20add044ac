/**
 * The telemetry port: every store the domains read and write telemetry through, as one object per
 * engine. `duckdb/` is the embedded default; a scale-out engine implements the same object. No domain
 * imports an engine: buildContext (context.ts) takes a TelemetryEngine and hands each domain its port.
 */
import type { AgentRunsStore } from '../../domains/agent-runs/store.js';
import type { TelemetryContentEraser } from '../../domains/content-erasure/store.js';
import type { RunReleaseReader } from '../../domains/evaluations/scoring/facts.js';
import type { LlmCallsStore } from '../../domains/llm/calls-store.js';
import type { LogsSink } from '../../domains/logs/rows.js';
import type { LogsStore } from '../../domains/logs/store.js';
import type { MemoryOperationsReader } from '../../domains/memory/store.js';
import type { MetricsSink } from '../../domains/metrics/rows.js';
import type { ForecastHistoryReader, MetricsStore } from '../../domains/metrics/store.js';
import type { SpansSink } from '../../domains/traces/rows.js';
import type { TelemetryExpiry } from '../../domains/telemetry-retention/store.js';
import type { TracesStore } from '../../domains/traces/store.js';

export type TelemetryEngineKind = 'duckdb' | 'clickhouse';

export interface TelemetryEngine {
  readonly kind: TelemetryEngineKind;
  readonly metrics: MetricsStore;
  readonly forecastHistory: ForecastHistoryReader;
  readonly traces: TracesStore;
  readonly logs: LogsStore;
  /** Agent runs, sessions, turns, events, steps, sightings (and run health, run starts). */
  readonly agentRuns: AgentRunsStore;
  readonly llmCalls: LlmCallsStore;
  readonly memory: MemoryOperationsReader;
  readonly releases: RunReleaseReader;
  readonly contentEraser: TelemetryContentEraser;
  /** Deletes a project's rows older than its retention window, per signal (the retention sweep; docs/retention.md). */
  readonly expiry: TelemetryExpiry;
  /** Ingest: a request is answered 2xx only after its write resolved. Stop them (stopWriters) before close. */
  readonly metricsWriter: MetricsSink;
  readonly spansWriter: SpansSink;
  readonly logsWriter: LogsSink;
  /** Removes every telemetry row of a deleted project (reads already refuse the project; this frees the space). */
  deleteProject(projectId: string): Promise<void>;
  ping(): Promise<void>;
  /** Stops the writers (refusing new writes, storing what is queued), then closes the store. Idempotent. */
  close(): Promise<void>;
}
