/** The embedded telemetry engine: every port of engine.ts over one DuckDB store (open.ts). */
import type { TelemetryEngine } from '../engine.js';
import { DuckDbAgentRunsQuery } from './agent-runs-query.js';
import { DuckDbExpiry } from './expiry.js';
import { ContentEraser } from './content-eraser.js';
import { readForecastHistory } from './forecast-history.js';
import { DuckDbLlmCallsQuery } from './llm-calls-query.js';
import { DuckDbLogsQuery } from './logs-query.js';
import { LogsWriter } from './logs-writer.js';
import { DuckDbMemoryQuery } from './memory-query.js';
import { DuckDbMetricsQuery } from './metrics-query.js';
import { MetricsWriter } from './metrics-writer.js';
import { openTelemetryDb, type TelemetryDb } from './open.js';
import { deleteProjectTelemetry } from './project-data.js';
import { DuckDbReleaseQuery } from './release-query.js';
import { SpansWriter } from './spans-writer.js';
import { DuckDbTracesQuery } from './traces-query.js';

export class DuckDbTelemetry implements TelemetryEngine {
  readonly kind = 'duckdb' as const;
  readonly metrics: DuckDbMetricsQuery;
  readonly forecastHistory: TelemetryEngine['forecastHistory'];
  readonly traces: DuckDbTracesQuery;
  readonly logs: DuckDbLogsQuery;
  readonly agentRuns: DuckDbAgentRunsQuery;
  readonly llmCalls: DuckDbLlmCallsQuery;
  readonly memory: DuckDbMemoryQuery;
  readonly releases: DuckDbReleaseQuery;
  readonly contentEraser: ContentEraser;
  readonly expiry: DuckDbExpiry;
  readonly metricsWriter: MetricsWriter;
  readonly spansWriter: SpansWriter;
  readonly logsWriter: LogsWriter;
  private closing: Promise<void> | undefined;

  /** `db`: the DuckDB store itself (tests and one-time tools reach it here; domains never do). */
  constructor(readonly db: TelemetryDb) {
    this.metrics = new DuckDbMetricsQuery(db);
    this.forecastHistory = (q) => readForecastHistory(db, q);
    this.traces = new DuckDbTracesQuery(db);
    this.logs = new DuckDbLogsQuery(db);
    this.agentRuns = new DuckDbAgentRunsQuery(db);
    this.llmCalls = new DuckDbLlmCallsQuery(db);
    this.memory = new DuckDbMemoryQuery(db);
    this.releases = new DuckDbReleaseQuery(db);
    this.contentEraser = new ContentEraser(db);
    this.expiry = new DuckDbExpiry(db);
    this.metricsWriter = new MetricsWriter(db);
    this.spansWriter = new SpansWriter(db);
    this.logsWriter = new LogsWriter(db);
  }

  static async open(opts: Parameters<typeof openTelemetryDb>[0]): Promise<DuckDbTelemetry> {
    return new DuckDbTelemetry(await openTelemetryDb(opts));
  }

  async deleteProject(projectId: string): Promise<void> {
    await deleteProjectTelemetry(this.db, projectId);
    this.metricsWriter.forgetSeries(projectId);
  }

  ping(): Promise<void> {
    return this.db.ping();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([this.metricsWriter.stop(), this.spansWriter.stop(), this.logsWriter.stop()]);
      await this.db.close();
    })();
    return this.closing;
  }
}
