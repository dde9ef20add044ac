/** Opens the telemetry engine the configuration names (docs/scale-out.md): ClickHouse when SVC_CLICKHOUSE_URL is set, else the embedded DuckDB store. */
import type { Config } from '../../config.js';
import { ClickHouseTelemetry } from './clickhouse/engine.js';
import { DuckDbTelemetry } from './duckdb/engine.js';
import type { TelemetryEngine } from './engine.js';

export async function openTelemetry(config: Config, log?: (line: string) => void): Promise<TelemetryEngine> {
  if (config.clickhouse) return ClickHouseTelemetry.open(config.clickhouse, { log });
  return DuckDbTelemetry.open({ dataDir: config.dataDir, readers: config.duckdb.readers, threads: config.duckdb.threads, memoryLimit: config.duckdb.memoryLimit, log });
}
