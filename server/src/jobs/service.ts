/**
 * `ctx.jobs`: what other services use to register job kinds and enqueue or schedule work, and what
 * main.ts starts and the app's close stops. See docs/jobs.md.
 */
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { IdGenerator } from '../lib/clock.js';
import type { JobClock } from './clock.js';
import { assertKind, JobRegistry, MAX_EVERY_SECONDS } from './registry.js';
import { JobRunner } from './runner.js';
import type { JobSettings } from './settings.js';
import type { JobStores, JobUnit } from './store.js';
import type { EnqueueOptions, JobHandler, JobLogger, JobRecord, JobStatus, RegisterOptions, ScheduleOptions } from './types.js';

/** A payload is small data that names the work, not the work's data (64 KiB of JSON at most). */
export const MAX_PAYLOAD_BYTES = 64 * 1024;
export const MAX_KEY_LENGTH = 200;
/** The runner's own housekeeping: finished jobs are deleted after these many days. */
export const PURGE_KIND = 'jobs.purge';
export const KEEP_DONE_DAYS = 7;
export const KEEP_FAILED_DAYS = 30;

export function defaultRunnerId(): string {
  return `${os.hostname().slice(0, 100)}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

function payloadText(payload: unknown): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(payload ?? null);
  } catch (err) {
    throw new Error(`job payload must be JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (text === undefined) throw new Error('job payload must be JSON');
  if (Buffer.byteLength(text) > MAX_PAYLOAD_BYTES) throw new Error(`job payload is over ${MAX_PAYLOAD_BYTES} bytes of JSON: store the data and pass its id`);
  return text;
}

function dueTime(d: Date | undefined, now: Date, name: string): string {
  const t = d ?? now;
  if (!(t instanceof Date) || Number.isNaN(t.getTime())) throw new Error(`${name} must be a valid Date`);
  return t.toISOString();
}

function checkKey(key: string | undefined): string | null {
  if (key === undefined) return null;
  if (typeof key !== 'string' || key.length === 0 || key.length > MAX_KEY_LENGTH || /[\u0000-\u001f\u007f]/.test(key))
    throw new Error(`job key must be 1 to ${MAX_KEY_LENGTH} characters without control characters`);
  return key;
}

export class JobService {
  private readonly registry = new JobRegistry();
  readonly runner: JobRunner;

  constructor(
    private readonly store: JobUnit,
    private readonly clock: JobClock,
    private readonly ids: IdGenerator,
    readonly settings: JobSettings,
    runnerId: string = defaultRunnerId(),
  ) {
    this.runner = new JobRunner(store, this.registry, clock, ids, settings, runnerId);
    this.register(PURGE_KIND, async ({ now }) => void (await this.purge(now())), { everySeconds: 3600 });
  }

  /** Registers a kind's handler (once per kind, before the runner starts). Handlers must be idempotent. */
  register<P = unknown>(kind: string, handler: JobHandler<P>, opts: RegisterOptions = {}): void {
    this.registry.register(kind, handler, opts);
  }

  /**
   * Enqueues a job of a registered kind. With a key, a pending or running job of the same kind and
   * key stands instead (`created: false`): a pending one becomes due at the earlier time, a running
   * one runs once more after it ends. `tx` writes the job in the caller's transaction.
   */
  async enqueue(kind: string, payload: unknown, opts: EnqueueOptions & { tx?: JobStores } = {}): Promise<{ id: string; created: boolean }> {
    const reg = this.registry.require(kind);
    const now = this.clock.now();
    const runAt = dueTime(opts.runAt, now, 'runAt');
    const maxAttempts = opts.maxAttempts ?? this.runner.maxAttempts(reg);
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 100) throw new Error('maxAttempts must be an integer between 1 and 100');
    const r = await (opts.tx ?? this.store).jobs.insert(
      { id: this.ids.uuid(), kind, key: checkKey(opts.key), payload: payloadText(payload), runAt, maxAttempts, everySeconds: null, createdAt: now.toISOString() },
      'enqueue',
    );
    if (runAt <= now.toISOString() && !opts.tx) this.runner.wake();
    return r;
  }

  /**
   * Schedules a recurring job of a registered kind, due every `everySeconds` after each occurrence
   * ends. Idempotent per (kind, key): a second call keeps the one schedule and updates its interval
   * and payload. Kinds registered with `everySeconds` are scheduled by the runner itself.
   */
  async schedule(kind: string, everySeconds: number, opts: ScheduleOptions & { tx?: JobStores } = {}): Promise<{ id: string; created: boolean }> {
    const reg = this.registry.require(kind);
    if (!Number.isInteger(everySeconds) || everySeconds < 1 || everySeconds > MAX_EVERY_SECONDS)
      throw new Error(`everySeconds must be an integer between 1 and ${MAX_EVERY_SECONDS}`);
    const now = this.clock.now();
    return (opts.tx ?? this.store).jobs.insert(
      {
        id: this.ids.uuid(),
        kind,
        key: checkKey(opts.key ?? kind),
        payload: payloadText(opts.payload),
        runAt: dueTime(opts.firstRunAt, now, 'firstRunAt'),
        maxAttempts: this.runner.maxAttempts(reg),
        everySeconds,
        createdAt: now.toISOString(),
      },
      'schedule',
    );
  }

  find(id: string): Promise<JobRecord | undefined> {
    return this.store.jobs.find(id);
  }

  list(opts: { kind?: string; statuses?: readonly JobStatus[]; limit?: number } = {}): Promise<JobRecord[]> {
    if (opts.kind !== undefined) assertKind(opts.kind);
    return this.store.jobs.list({ ...opts, limit: Math.min(Math.max(opts.limit ?? 100, 1), 1000) });
  }

  /** Starts the poll loop (main.ts); a no-op with SVC_JOBS_ENABLED=false. */
  start(log?: JobLogger): void {
    this.runner.start(log);
  }

  /** Stops the loop gracefully (the app's onClose). */
  stop(): Promise<void> {
    return this.runner.stop();
  }

  /** Runs every due job now, one after the other (tests, and features' tests, use it with a test clock). */
  runDue(limit?: number): Promise<number> {
    return this.runner.runDue(limit);
  }

  private purge(now: Date): Promise<number> {
    const day = 86_400_000;
    return this.store.jobs.purgeFinished(new Date(now.getTime() - KEEP_DONE_DAYS * day).toISOString(), new Date(now.getTime() - KEEP_FAILED_DAYS * day).toISOString());
  }
}
