/** Removes every telemetry row of a deleted project (reads already refuse the project; this frees the space). */
import type { TelemetryDb } from './open.js';
import { traceDeleteGate } from './spans-writer.js';
import { summaryUpkeep } from './summaries-writer.js';

const TABLES = [
  'metric_points',
  'metric_histograms',
  'metric_series',
  'metric_tombstones',
  'metric_metadata',
  'spans',
  'span_events',
  'agent_sightings',
  'agent_sighting_environments',
  'trace_tombstones',
  'logs',
  'trace_summaries',
  'run_summaries',
  'session_summaries',
];

export async function deleteProjectTelemetry(db: TelemetryDb, projectId: string): Promise<void> {
  // Under the trace-delete gate, as every summary change is, so the summaries' memory forgets the project
  // with no span commit in between.
  await db.read((c) =>
    traceDeleteGate(db).run(async () => {
      for (const table of TABLES) {
        const stmt = await c.prepare(`DELETE FROM ${table} WHERE project_id = $1`);
        stmt.bindVarchar(1, projectId);
        await stmt.run();
      }
      summaryUpkeep(db).forgetProject(projectId);
    }),
  );
}
