/**
 * Telemetry retention per project and signal (docs/retention.md): the windows resource, the cut-off every
 * telemetry read applies (reads.ts), and the sweep that deletes what is older (the `retention.sweep` job).
 * No HTTP, no SQL.
 *
 * Decisions:
 * - Scopes are those of project settings: `projects:read` to read the windows, `projects:write` to replace
 *   them. A window deletes data, so a PUT that brings deletion of a signal forward (a window where there was
 *   none, or a shorter one) also needs that signal's delete scope (`metrics:delete`, `traces:delete`,
 *   `logs:delete`); lengthening or removing a window deletes nothing and needs none. A project-scoped
 *   credential reaches its own project only (another project's id is 404, as a missing one).
 * - A PUT replaces the whole set; a signal not listed has no window (kept, as without this feature). Who
 *   changed it comes from the credential: the windows carry `updated_by`, and the change is audited in the
 *   same transaction (resource `projects`, action `retention`, the windows before and after).
 * - A change applies at once on the node that wrote it and within a second on the others (the change feed,
 *   `telemetry_retention.changed`); each node keeps a project's windows for at most
 *   SVC_RETENTION_TTL_SECONDS (0 to 30, default 30) as the backstop, and nothing while it cannot hear changes.
 * - The cut-off is read from the clock at each read: `now - days`. Shortening a window hides at once what is
 *   older; lengthening it shows again only what the sweep has not deleted yet, and never hides anything.
 */
import { notFound, permissionDenied } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import type { AuditService } from '../audit/service.js';
import type { ProjectService } from '../projects/service.js';
import { bySignal, cutoffUs, DELETE_SCOPE, parseWindows, RETAINED_SIGNALS, type RetainedSignal } from './model.js';
import type { ExpiryCounts, RetentionWindowRecord, TelemetryExpiry } from './store.js';

export const RETENTION_READ = 'projects:read';
export const RETENTION_WRITE = 'projects:write';
/** A change applies everywhere within this many seconds in any case (the cache TTL's ceiling and default). */
export const MAX_RETENTION_TTL_SECONDS = 30;
/** Cached projects per process (the cache is emptied when full). */
const MAX_CACHED = 10_000;

/** The cut-offs a read applies: per retained signal, µs since the epoch; undefined when the signal has no window. */
export interface RetentionCutoffs {
  cutoffUs(projectId: string, signal: RetainedSignal): Promise<number | undefined>;
}

/** One project's sweep: per signal with a window, its cut-off and the rows removed. */
export interface SweepOutcome {
  projectId: string;
  signal: RetainedSignal;
  beforeUs: number;
  removed: ExpiryCounts;
}

interface Cached {
  days: Partial<Record<RetainedSignal, number>>;
  at: number;
}

const actorOf = (caller: Principal) => ({ userId: caller.userId, apiKeyId: caller.keyId });
const plain = (ws: { signal: RetainedSignal; retentionDays: number }[]) => ws.map((w) => ({ signal: w.signal, retention_days: w.retentionDays }));

export class TelemetryRetentionService implements RetentionCutoffs {
  private readonly cache = new Map<string, Cached>();
  private readonly ttlMs: number;
  /** Moves on every invalidation: a read that began before one does not put what it read in the cache. */
  private generation = 0;
  private cacheAllowed: () => boolean = () => true;

  constructor(
    private readonly control: ControlStore,
    private readonly projects: ProjectService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    ttlSeconds = MAX_RETENTION_TTL_SECONDS,
  ) {
    this.ttlMs = Math.min(Math.max(ttlSeconds, 0), MAX_RETENTION_TTL_SECONDS) * 1000;
  }

  // ---- the cut-off of every read

  /** The project's windows in force (cached up to the TTL). A store that cannot be read fails the read: nothing is shown past a window. */
  private async daysOf(projectId: string): Promise<Partial<Record<RetainedSignal, number>>> {
    const now = this.clock.now().getTime();
    const cacheable = this.ttlMs > 0 && this.cacheAllowed();
    if (!cacheable && this.cache.size > 0) this.cache.clear();
    const hit = cacheable ? this.cache.get(projectId) : undefined;
    if (hit && now - hit.at < this.ttlMs && now >= hit.at) return hit.days;
    const generation = this.generation;
    const days: Partial<Record<RetainedSignal, number>> = {};
    for (const w of await this.control.telemetryRetention.windows(projectId)) days[w.signal] = w.retentionDays;
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    if (cacheable && generation === this.generation) this.cache.set(projectId, { days, at: now });
    return days;
  }

  /** The cut-off of the signal's window now (µs): what started before it is older than the window. Undefined: kept. */
  async cutoffUs(projectId: string, signal: RetainedSignal): Promise<number | undefined> {
    const days = (await this.daysOf(projectId))[signal];
    return days === undefined ? undefined : cutoffUs(this.clock.now().getTime() * 1000, days);
  }

  /** Drops the cached windows of a project (the writing node at once; other nodes when they hear of the change). */
  invalidate(projectId: string): void {
    this.cache.delete(projectId);
    this.generation++;
  }

  /** Drops every cached project (changes of other nodes may have been missed). */
  invalidateAll(): void {
    this.cache.clear();
    this.generation++;
  }

  /** Windows are cached only while `live()` holds: while this node may miss other nodes' changes, every read asks the store. */
  cacheOnlyWhile(live: () => boolean): void {
    this.cacheAllowed = live;
  }

  // ---- the resource

  async get(caller: Principal, projectId: string): Promise<{ projectId: string; windows: RetentionWindowRecord[] }> {
    const p = await this.projects.get(caller, projectId);
    return { projectId: p.id, windows: (await this.control.telemetryRetention.windows(p.id)).sort(bySignal) };
  }

  async put(caller: Principal, projectId: string, input: readonly { signal: unknown; retention_days: unknown }[]) {
    const p = await this.projects.get(caller, projectId);
    const windows = parseWindows(input);
    const at = this.clock.now().toISOString();
    await this.control.transaction(async (tx) => {
      // The project may have been deleted since it was read: its windows would outlive it.
      if (!(await tx.projects.find(p.orgId, p.id))) throw notFound('project');
      const before = await tx.telemetryRetention.replace(p.id, p.orgId, windows, actorOf(caller), at);
      // Checked against what this write replaces (under the replacement's lock); refused, it rolls back.
      const missing = deletionScopesMissing(caller, before, windows);
      if (missing.length)
        throw permissionDenied(
          `this change brings deletion of ${missing.map((m) => m.signal).join(', ')} forward (a new or shorter window deletes data): it needs scope ${missing.map((m) => m.scope).join(' and ')}`,
        );
      await this.audit.record(tx, caller, caller.orgId, {
        projectId: p.id,
        // The names the request audit gives this route (its refusals are recorded there: `denied`).
        resource: 'projects',
        action: 'retention',
        result: 'success',
        targetId: p.id,
        metadata: { windows: plain(windows.sort(bySignal)), previous_windows: plain(before.sort(bySignal)) },
      });
      // Every node drops its cached windows when this commits (docs/several-nodes.md).
      await tx.changes.publish({ topic: 'telemetry_retention.changed', projectId: p.id });
    });
    this.invalidate(p.id);
    return { projectId: p.id, windows: (await this.control.telemetryRetention.windows(p.id)).sort(bySignal) };
  }

  /** A deleted project's windows go with it (its telemetry is deleted anyway). */
  async forgetProject(projectId: string): Promise<void> {
    this.invalidate(projectId);
    await this.control.telemetryRetention.forgetProject(projectId);
  }

  // ---- the sweep (job `retention.sweep`, hourly)

  /**
   * Deletes, for every live project and every signal with a window, what is older than the window at `now`.
   * Idempotent and resumable: a run that stops part way (an error, a lost lease) leaves rows every read already
   * hides, and the next run deletes them. A project whose expiry fails does not stop the others; the first
   * failure is thrown at the end, so the job records it and runs again.
   */
  async sweep(now: Date, expiry: TelemetryExpiry, abort?: AbortSignal): Promise<SweepOutcome[]> {
    const nowUs = now.getTime() * 1000;
    const out: SweepOutcome[] = [];
    let failure: unknown;
    const windows = (await this.control.telemetryRetention.live()).sort((a, b) => (a.projectId < b.projectId ? -1 : a.projectId > b.projectId ? 1 : bySignal(a, b)));
    for (const w of windows) {
      if (abort?.aborted) break;
      const beforeUs = cutoffUs(nowUs, w.retentionDays);
      try {
        out.push({ projectId: w.projectId, signal: w.signal, beforeUs, removed: await expiry.expire(w.projectId, w.signal, beforeUs, abort) });
      } catch (e) {
        failure ??= e;
      }
    }
    if (failure !== undefined) throw failure;
    return out;
  }
}

/** The signals this write brings deletion of forward (a new window, or a shorter one) whose delete scope the caller lacks. */
function deletionScopesMissing(caller: Principal, before: { signal: RetainedSignal; retentionDays: number }[], after: { signal: RetainedSignal; retentionDays: number }[]) {
  const had = new Map(before.map((w) => [w.signal, w.retentionDays]));
  return RETAINED_SIGNALS.flatMap((signal) => {
    const now = after.find((w) => w.signal === signal)?.retentionDays;
    const was = had.get(signal);
    const forward = now !== undefined && (was === undefined || now < was);
    return forward && !caller.scopes.has(DELETE_SCOPE[signal]) ? [{ signal, scope: DELETE_SCOPE[signal] }] : [];
  });
}
