/** Everything a request may need, built once per process (or once per test file). */
import type { Config } from './config.js';
import { ApiKeyService } from './domains/api-keys/service.js';
import { AuditService } from './domains/audit/service.js';
import { MetricsService } from './domains/metrics/service.js';
import { ProjectService } from './domains/projects/service.js';
import { randomIds, systemClock, type Clock, type IdGenerator } from './lib/clock.js';
import type { ControlStore } from './storage/control/stores.js';
import { DuckDbMetricsQuery } from './storage/telemetry/duckdb/metrics-query.js';
import { MetricsWriter } from './storage/telemetry/duckdb/metrics-writer.js';
import type { TelemetryDb } from './storage/telemetry/duckdb/open.js';
import { deleteProjectTelemetry } from './storage/telemetry/duckdb/project-data.js';

export interface AppContext {
  config: Config;
  clock: Clock;
  ids: IdGenerator;
  control: ControlStore;
  telemetry: TelemetryDb;
  audit: AuditService;
  apiKeys: ApiKeyService;
  projects: ProjectService;
  metrics: MetricsService;
  /** Group-commit writer of ingested metric rows (OTLP); stop() it before closing the telemetry store. */
  metricsWriter: MetricsWriter;
}

export function buildContext(opts: {
  config: Config;
  control: ControlStore;
  telemetry: TelemetryDb;
  clock?: Clock;
  ids?: IdGenerator;
}): AppContext {
  const clock = opts.clock ?? systemClock;
  const ids = opts.ids ?? randomIds;
  const audit = new AuditService(clock, ids);
  const projects = new ProjectService(opts.control, clock, ids);
  projects.onDelete((p) => deleteProjectTelemetry(opts.telemetry, p.id));
  const metricsWriter = new MetricsWriter(opts.telemetry);
  projects.onDelete(async (p) => metricsWriter.forgetSeries(p.id));
  return {
    config: opts.config,
    clock,
    ids,
    control: opts.control,
    telemetry: opts.telemetry,
    audit,
    apiKeys: new ApiKeyService(opts.control, audit, clock, ids),
    projects,
    metrics: new MetricsService(new DuckDbMetricsQuery(opts.telemetry), clock),
    metricsWriter,
  };
}
