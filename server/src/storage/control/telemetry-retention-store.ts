/** Telemetry retention windows in the control store (both dialects; docs/retention.md). */
import { sql } from 'kysely';
import { isRetainedSignal } from '../../domains/telemetry-retention/model.js';
import type { Actor, ProjectWindow, RetentionWindowRecord, TelemetryRetentionStore } from '../../domains/telemetry-retention/store.js';
import type { ControlDb } from './open.js';
import type { TelemetryRetentionTable } from './schema.js';

/** A stored row as a window; a signal this version does not know (a newer node's, during an upgrade) is skipped. */
const toRecord = (r: TelemetryRetentionTable): RetentionWindowRecord | undefined =>
  isRetainedSignal(r.signal)
    ? { signal: r.signal, retentionDays: Number(r.retention_days), updatedBy: { userId: r.updated_by_user_id, apiKeyId: r.updated_by_api_key_id }, updatedAt: r.updated_at }
    : undefined;

export class KyselyTelemetryRetentionStore implements TelemetryRetentionStore {
  constructor(
    private readonly db: ControlDb,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  async windows(projectId: string): Promise<RetentionWindowRecord[]> {
    const rows = await this.db.selectFrom('telemetry_retention').selectAll().where('project_id', '=', projectId).orderBy('signal').execute();
    return rows.map(toRecord).filter((w): w is RetentionWindowRecord => w !== undefined);
  }

  async replace(projectId: string, orgId: string, windows: { signal: string; retentionDays: number }[], by: Actor, at: string): Promise<RetentionWindowRecord[]> {
    // One replacement of a project at a time: PostgreSQL holds this lock to the end of the caller's
    // transaction (SQLite has one writer), so concurrent ones land whole, each after the one it replaced.
    if (this.dialect === 'postgres') await sql`SELECT pg_advisory_xact_lock(hashtext(${`telemetry_retention:${projectId}`}))`.execute(this.db);
    const before = await this.windows(projectId);
    await this.db.deleteFrom('telemetry_retention').where('project_id', '=', projectId).execute();
    if (windows.length > 0)
      await this.db
        .insertInto('telemetry_retention')
        .values(
          windows.map((w) => ({
            project_id: projectId,
            signal: w.signal,
            org_id: orgId,
            retention_days: w.retentionDays,
            updated_by_user_id: by.userId,
            updated_by_api_key_id: by.apiKeyId,
            updated_at: at,
          })),
        )
        .execute();
    return before;
  }

  async live(): Promise<ProjectWindow[]> {
    const rows = await this.db
      .selectFrom('telemetry_retention as r')
      .innerJoin('projects as p', 'p.id', 'r.project_id')
      .select(['r.project_id', 'r.org_id', 'r.signal', 'r.retention_days'])
      .where('p.deleted_at', 'is', null)
      .orderBy('r.project_id')
      .orderBy('r.signal')
      .execute();
    return rows.flatMap((r) =>
      isRetainedSignal(r.signal) ? [{ projectId: r.project_id, orgId: r.org_id, signal: r.signal, retentionDays: Number(r.retention_days) }] : [],
    );
  }

  async forgetProject(projectId: string): Promise<void> {
    await this.db.deleteFrom('telemetry_retention').where('project_id', '=', projectId).execute();
  }
}
