/** Everything a request may need, built once per process (or once per test file). */
import type { Config } from './config.js';
import { ApiKeyService } from './domains/api-keys/service.js';
import { AuditService } from './domains/audit/service.js';
import { ProjectService } from './domains/projects/service.js';
import { randomIds, systemClock, type Clock, type IdGenerator } from './lib/clock.js';
import type { ControlStore } from './storage/control/stores.js';
import type { TelemetryDb } from './storage/telemetry/duckdb/open.js';

export interface AppContext {
  config: Config;
  clock: Clock;
  ids: IdGenerator;
  control: ControlStore;
  telemetry: TelemetryDb;
  audit: AuditService;
  apiKeys: ApiKeyService;
  projects: ProjectService;
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
  return {
    config: opts.config,
    clock,
    ids,
    control: opts.control,
    telemetry: opts.telemetry,
    audit,
    apiKeys: new ApiKeyService(opts.control, audit, clock, ids),
    projects: new ProjectService(opts.control, clock, ids),
  };
}
