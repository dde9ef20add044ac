/** The job runner's store: one table, `jobs` (0007_jobs). One code path for SQLite and PostgreSQL. */
import { sql } from 'kysely';
import type { JobStore, OnLiveDuplicate } from '../../jobs/store.js';
import { LIVE_STATUSES, type JobFence, type JobRecord, type JobStatus, type NewJob } from '../../jobs/types.js';
import type { ControlDb } from './open.js';
import type { JobsTable } from './schema.js';

/**
 * The predicate of the partial unique index jobs_live_key, written as in the migration: both engines
 * match an ON CONFLICT target to a partial index only when the predicate is spelled out (no parameters).
 */
const LIVE_PREDICATE = sql<boolean>`status in ('pending', 'running')`;

const toRecord = (r: JobsTable): JobRecord => ({
  id: r.id,
  kind: r.kind,
  key: r.dedup_key,
  payload: JSON.parse(r.payload),
  status: r.status as JobStatus,
  runAt: r.run_at,
  attempts: Number(r.attempts),
  maxAttempts: Number(r.max_attempts),
  everySeconds: r.every_seconds === null ? null : Number(r.every_seconds),
  rerunRequested: Number(r.rerun_requested) === 1,
  lockedBy: r.locked_by,
  lockedUntil: r.locked_until,
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  finishedAt: r.finished_at,
});

export class KyselyJobStore implements JobStore {
  constructor(
    private readonly db: ControlDb,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  /** Runs `fn` in a transaction, or in the one this store is already bound to. */
  private unit<T>(fn: (db: ControlDb) => Promise<T>): Promise<T> {
    return this.db.isTransaction ? fn(this.db) : this.db.transaction().execute(fn);
  }

  async insert(job: NewJob, onLive: OnLiveDuplicate): Promise<{ id: string; created: boolean }> {
    for (;;) {
      const inserted = await this.db
        .insertInto('jobs')
        .values({
          id: job.id,
          kind: job.kind,
          dedup_key: job.key,
          payload: job.payload,
          status: 'pending',
          run_at: job.runAt,
          attempts: 0,
          max_attempts: job.maxAttempts,
          every_seconds: job.everySeconds,
          rerun_requested: 0,
          locked_by: null,
          locked_until: null,
          last_error: null,
          created_at: job.createdAt,
          updated_at: job.createdAt,
          finished_at: null,
        })
        // The conflict target is the partial unique index jobs_live_key (one live job per kind and key).
        .onConflict((oc) => oc.columns(['kind', 'dedup_key']).where(LIVE_PREDICATE).doNothing())
        .returning('id')
        .execute();
      if (inserted.length === 1) return { id: job.id, created: true };
      const live = await this.db
        .selectFrom('jobs')
        .selectAll()
        .where('kind', '=', job.kind)
        .where('dedup_key', '=', job.key)
        .where('status', 'in', LIVE_STATUSES)
        .executeTakeFirst();
      // It ended between the insert and the select: try again.
      if (!live) continue;
      const same = this.db.updateTable('jobs').where('id', '=', live.id).where('status', '=', live.status);
      if (onLive === 'enqueue' && live.status === 'pending' && job.runAt < live.run_at)
        await same.set({ run_at: job.runAt, updated_at: job.createdAt }).execute();
      else if (onLive === 'enqueue' && live.status === 'running')
        await same.set({ rerun_requested: 1, updated_at: job.createdAt }).execute();
      else if (onLive === 'schedule')
        await same.set({ every_seconds: job.everySeconds, payload: job.payload, max_attempts: job.maxAttempts, updated_at: job.createdAt }).execute();
      return { id: live.id, created: false };
    }
  }

  async claim(opts: { kinds: readonly string[]; now: string; lockedBy: string; lockedUntil: string }) {
    if (opts.kinds.length === 0) return undefined;
    return this.unit(async (db) => {
      let pick = db
        .selectFrom('jobs')
        .select(['id', 'status', 'locked_by', 'locked_until'])
        .where('kind', 'in', opts.kinds)
        .where((eb) =>
          eb.or([
            eb.and([eb('status', '=', 'pending'), eb('run_at', '<=', opts.now)]),
            eb.and([eb('status', '=', 'running'), eb('locked_until', '<=', opts.now)]),
          ]),
        )
        .orderBy('run_at', 'asc')
        .orderBy('created_at', 'asc')
        .orderBy('id', 'asc')
        .limit(1);
      // Another node's claim holds its row locked until it commits: skip it and take the next one.
      // SQLite has one writer, and the guarded update below re-checks the row either way.
      if (this.dialect === 'postgres') pick = pick.forUpdate().skipLocked();
      const found = await pick.executeTakeFirst();
      if (!found) return undefined;
      const expired = found.status === 'running';
      const claimed = await db
        .updateTable('jobs')
        .set((eb) => ({
          status: 'running',
          locked_by: opts.lockedBy,
          locked_until: opts.lockedUntil,
          attempts: eb('attempts', '+', 1),
          updated_at: opts.now,
          ...(expired ? { last_error: `the lease of ${found.locked_by} ended at ${found.locked_until} before the job did` } : {}),
        }))
        .where('id', '=', found.id)
        .where('status', '=', found.status)
        .where((eb) => (expired ? eb('locked_until', '=', found.locked_until) : eb('run_at', '<=', opts.now)))
        .returningAll()
        .executeTakeFirst();
      return claimed && toRecord(claimed);
    });
  }

  private fenced(fence: JobFence) {
    return this.db
      .updateTable('jobs')
      .where('id', '=', fence.id)
      .where('status', '=', 'running')
      .where('locked_by', '=', fence.lockedBy)
      .where('attempts', '=', fence.attempts);
  }

  async extendLease(fence: JobFence, lockedUntil: string, at: string) {
    const r = await this.fenced(fence).set({ locked_until: lockedUntil, updated_at: at }).executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async retry(fence: JobFence, runAt: string, error: string, at: string) {
    const r = await this.fenced(fence)
      .set({ status: 'pending', run_at: runAt, last_error: error, locked_by: null, locked_until: null, updated_at: at })
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async finish(fence: JobFence, status: 'done' | 'failed', at: string, error: string | null) {
    const r = await this.fenced(fence)
      .set((eb) => ({
        status,
        last_error: error ?? eb.ref('last_error'),
        locked_by: null,
        locked_until: null,
        updated_at: at,
        finished_at: at,
      }))
      .returningAll()
      .executeTakeFirst();
    return r && toRecord(r);
  }

  async release(fence: JobFence, at: string) {
    const r = await this.fenced(fence)
      .set((eb) => ({ status: 'pending', attempts: eb('attempts', '-', 1), locked_by: null, locked_until: null, updated_at: at }))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async find(id: string) {
    const r = await this.db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return r && toRecord(r);
  }

  async list(opts: { kind?: string; statuses?: readonly JobStatus[]; limit: number }) {
    let sel = this.db.selectFrom('jobs').selectAll();
    if (opts.kind !== undefined) sel = sel.where('kind', '=', opts.kind);
    if (opts.statuses?.length) sel = sel.where('status', 'in', opts.statuses);
    const rows = await sel.orderBy('run_at', 'asc').orderBy('created_at', 'asc').orderBy('id', 'asc').limit(opts.limit).execute();
    return rows.map(toRecord);
  }

  async purgeFinished(doneBefore: string, failedBefore: string) {
    const r = await this.db
      .deleteFrom('jobs')
      .where((eb) =>
        eb.or([
          eb.and([eb('status', '=', 'done'), eb('finished_at', '<', doneBefore)]),
          eb.and([eb('status', '=', 'failed'), eb('finished_at', '<', failedBefore)]),
        ]),
      )
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
