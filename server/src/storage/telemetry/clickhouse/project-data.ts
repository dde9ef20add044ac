/**
 * Removes every telemetry row of a deleted project from the ClickHouse tables (reads already refuse the project;
 * this frees the space): a lightweight DELETE per table of the schema (schema.ts `TABLES`: spans, events, logs,
 * metrics, sightings, tombstones and the summaries), to the table itself or, in cluster mode, to every shard's
 * local table (`db.deleteTarget`). Every table is ordered by project first, so each delete marks one range of
 * rows. A repeated call finds nothing left to delete.
 */
import type { ChTelemetryDb } from './db.js';
import { TABLES } from './schema.js';

export async function deleteChProjectTelemetry(db: ChTelemetryDb, projectId: string): Promise<void> {
  for (const table of TABLES) {
    await db.client.command(`DELETE FROM ${db.deleteTarget(table.name)} WHERE project_id = {p:String}`, { p: projectId });
  }
}
