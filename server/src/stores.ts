/** Opens both stores from the configuration. */
import type { Config } from './config.js';
import { openControlStore } from './storage/control/open.js';
import { controlStore, type ControlStore } from './storage/control/stores.js';
import { openTelemetryDb, type TelemetryDb } from './storage/telemetry/duckdb/open.js';

export async function openStores(config: Config, log?: (line: string) => void): Promise<{ control: ControlStore; telemetry: TelemetryDb }> {
  const { db, dialect } = await openControlStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const control = controlStore(db, dialect);
  try {
    const telemetry = await openTelemetryDb({ dataDir: config.dataDir, readers: config.duckdb.readers, threads: config.duckdb.threads, memoryLimit: config.duckdb.memoryLimit, log });
    return { control, telemetry };
  } catch (e) {
    await control.close();
    throw e;
  }
}
