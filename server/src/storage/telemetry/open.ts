/** Opens the telemetry engine the configuration names (docs/scale-out.md). */
import type { Config } from '../../config.js';
import { DuckDbTelemetry } from './duckdb/engine.js';
import type { TelemetryEngine } from './engine.js';

export async function openTelemetry(config: Config, log?: (line: string) => void): Promise<TelemetryEngine> {
  return DuckDbTelemetry.open({ dataDir: config.dataDir, readers: config.duckdb.readers, threads: config.duckdb.threads, memoryLimit: config.duckdb.memoryLimit, log });
}
