/** The scale-out telemetry engine: every port of engine.ts over ClickHouse (db.ts; docs/scale-out.md). */
import type { ClickHouseSettings } from '../../../config.js';
import type { TelemetryEngine } from '../engine.js';
import { ChAgentRunsQuery } from './agent-runs-query.js';
import { ChContentEraser } from './content-eraser.js';
import { openChTelemetryDb, type ChTelemetryDb } from './db.js';
import { ChExpiry } from './expiry.js';
import { chForecastHistory } from './forecast-history.js';
import { ChLlmCallsQuery } from './llm-calls-query.js';
import { ChLogsQuery } from './logs-query.js';
import { ChLogsWriter } from './logs-writer.js';
import { ChMemoryQuery } from './memory-query.js';
import { ChMetricsQuery } from './metrics-query.js';
import { ChMetricsWriter } from './metrics-writer.js';
import { deleteChProjectTelemetry } from './project-data.js';
import { ChReleaseQuery } from './release-query.js';
import { ChSpansWriter } from './spans-writer.js';
import { ChTracesQuery } from './traces-query.js';

export class ClickHouseTelemetry implements TelemetryEngine {
  readonly kind = 'clickhouse' as const;
  readonly metrics: ChMetricsQuery;
  readonly forecastHistory: TelemetryEngine['forecastHistory'];
  readonly traces: ChTracesQuery;
  readonly logs: ChLogsQuery;
  readonly agentRuns: ChAgentRunsQuery;
  readonly llmCalls: ChLlmCallsQuery;
  readonly memory: ChMemoryQuery;
  readonly releases: ChReleaseQuery;
  readonly contentEraser: ChContentEraser;
  readonly expiry: ChExpiry;
  readonly metricsWriter: ChMetricsWriter;
  readonly spansWriter: ChSpansWriter;
  readonly logsWriter: ChLogsWriter;
  private closing: Promise<void> | undefined;

  /** `ch`: the ClickHouse store itself (tests and one-time tools reach it here; domains never do). */
  constructor(readonly ch: ChTelemetryDb) {
    this.metrics = new ChMetricsQuery(ch);
    this.forecastHistory = chForecastHistory(ch);
    this.traces = new ChTracesQuery(ch);
    this.logs = new ChLogsQuery(ch);
    this.agentRuns = new ChAgentRunsQuery(ch);
    this.llmCalls = new ChLlmCallsQuery(ch);
    this.memory = new ChMemoryQuery(ch);
    this.releases = new ChReleaseQuery(ch);
    this.contentEraser = new ChContentEraser(ch);
    this.expiry = new ChExpiry(ch);
    this.metricsWriter = new ChMetricsWriter(ch);
    this.spansWriter = new ChSpansWriter(ch);
    this.logsWriter = new ChLogsWriter(ch);
  }

  static async open(settings: ClickHouseSettings, opts: { log?: (line: string) => void } = {}): Promise<ClickHouseTelemetry> {
    return new ClickHouseTelemetry(await openChTelemetryDb(settings, opts));
  }

  async deleteProject(projectId: string): Promise<void> {
    await deleteChProjectTelemetry(this.ch, projectId);
    this.metricsWriter.forgetSeries(projectId);
  }

  ping(): Promise<void> {
    return this.ch.client.ping();
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      await Promise.all([this.metricsWriter.stop(), this.spansWriter.stop(), this.logsWriter.stop()]);
      await this.ch.close();
    })();
    return this.closing;
  }
}
