/** Opens both stores from the configuration. */
import type { Config } from './config.js';
import { openControlStore } from './storage/control/open.js';
import { controlStore, type ControlStore } from './storage/control/stores.js';
import type { TelemetryEngine } from './storage/telemetry/engine.js';
import { openTelemetry } from './storage/telemetry/open.js';

export async function openStores(config: Config, log?: (line: string) => void): Promise<{ control: ControlStore; telemetry: TelemetryEngine }> {
  const { db, dialect } = await openControlStore({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  const control = controlStore(db, dialect);
  try {
    const telemetry = await openTelemetry(config, log);
    return { control, telemetry };
  } catch (e) {
    await control.close();
    throw e;
  }
}
