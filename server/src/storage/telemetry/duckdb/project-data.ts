/** Removes every telemetry row of a deleted project (reads already refuse the project; this frees the space). */
import type { TelemetryDb } from './open.js';

const TABLES = ['metric_points', 'metric_histograms', 'metric_series', 'metric_tombstones', 'metric_metadata', 'spans', 'span_events', 'agent_sightings', 'agent_sighting_environments', 'trace_tombstones', 'logs'];

export async function deleteProjectTelemetry(db: TelemetryDb, projectId: string): Promise<void> {
  await db.read(async (c) => {
    for (const table of TABLES) {
      const stmt = await c.prepare(`DELETE FROM ${table} WHERE project_id = $1`);
      stmt.bindVarchar(1, projectId);
      await stmt.run();
    }
  });
}
