/**
 * The rules of content policies (docs/content-policy.md): the grid, retention windows, the decisions
 * every boundary asks for, and the refusal audit. No HTTP, no SQL.
 *
 * Decisions:
 * - Privacy by default: a project without a policy (or whose policy cannot be read) has every cell
 *   `deny`, `store` included. A failing read never allows.
 * - Rule 5 (a change applies everywhere within 30 s): each process caches a project's grid for at most
 *   SVC_CONTENT_POLICY_TTL_SECONDS (default and ceiling 30); the process that wrote drops its cached
 *   copy at once and announces the change (`onPolicyChanged`), and every other node sharing one PostgreSQL
 *   drops its copy when it hears it (cluster/apply-changes.ts), within a second. The TTL is the backstop; while
 *   a node cannot hear changes (`cacheOnlyWhile`), it caches nothing.
 * - One policy lookup per request: ingest and read routes take one `ContentAccess` per request.
 * - The refusal audit is aggregated in memory per (project, minute, class, boundary, decider, decision)
 *   and written every few seconds (and before it is read), never one write per refused value.
 */
import { conflict, invalidRequest } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock } from '../../lib/clock.js';
import type { ProjectService } from '../projects/service.js';
import { CONTENT_READ_SCOPE, gridAccess, type ContentAccess, type ContentReadPolicy } from './access.js';
import { checkRetentionDays, CONTENT_CLASSES, gridOf, MAX_POLICY_TTL_SECONDS, type Boundary, type ContentClass, type Decider, type Decision, type Grid, type RuleInput } from './model.js';
import type { ContentPolicyStore, ListedPolicy, PolicyRecord, RefusalCount, RefusalQuery, RetentionWindow } from './store.js';

export const GOVERNANCE_READ = 'governance:read';
export const GOVERNANCE_WRITE = 'governance:write';

/** How often buffered refusal counts are written. */
const REFUSAL_FLUSH_MS = 5000;
/** Cached grids per process (a project's entry is dropped when it expires or the cache is full). */
const MAX_CACHED = 10_000;

export interface Decided {
  decision: Decision;
  decided_by: Decider;
}

interface Cached {
  grid: Grid | null;
  at: number;
}

export class ContentPolicyService implements ContentReadPolicy {
  private readonly cache = new Map<string, Cached>();
  private pending = new Map<string, RefusalCount>();
  private timer: NodeJS.Timeout | undefined;
  private readonly ttlMs: number;
  /** Moves on every invalidation: a read that began before one does not put what it read in the cache. */
  private generation = 0;
  private cacheAllowed: () => boolean = () => true;
  private readonly changeHooks: ((projectId: string) => Promise<void>)[] = [];

  constructor(
    private readonly store: ContentPolicyStore,
    private readonly projects: ProjectService,
    private readonly clock: Clock,
    ttlSeconds = MAX_POLICY_TTL_SECONDS,
    private readonly onError: (e: unknown) => void = () => {},
  ) {
    this.ttlMs = Math.min(Math.max(ttlSeconds, 0), MAX_POLICY_TTL_SECONDS) * 1000;
  }

  // ---- decisions

  /** The grid in force (cached up to the TTL); null with `no_policy` or `policy_unreadable`. */
  private async gridOf(projectId: string): Promise<{ grid: Grid | null; decider: Decider }> {
    const now = this.clock.now().getTime();
    const cacheable = this.ttlMs > 0 && this.cacheAllowed();
    // Not cacheable now (changes of other nodes may be missed): what was kept before is not trusted later either.
    if (!cacheable && this.cache.size > 0) this.cache.clear();
    const hit = cacheable ? this.cache.get(projectId) : undefined;
    if (hit && now - hit.at < this.ttlMs && now >= hit.at) return { grid: hit.grid, decider: hit.grid ? 'policy' : 'no_policy' };
    const generation = this.generation;
    let record: PolicyRecord | undefined;
    try {
      record = await this.store.find(projectId);
    } catch (e) {
      this.onError(e);
      return { grid: null, decider: 'policy_unreadable' };
    }
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    if (cacheable && generation === this.generation) this.cache.set(projectId, { grid: record?.grid ?? null, at: now });
    return { grid: record?.grid ?? null, decider: record ? 'policy' : 'no_policy' };
  }

  /** Drops the cached grid of a project (the writing process applies its change at once; other nodes when they hear of it). */
  invalidate(projectId: string): void {
    this.cache.delete(projectId);
    this.generation++;
  }

  /** Drops every cached grid (changes of other nodes may have been missed). */
  invalidateAll(): void {
    this.cache.clear();
    this.generation++;
  }

  /** Grids are cached only while `live()` holds: while this node may miss other nodes' changes, every request reads the policy. */
  cacheOnlyWhile(live: () => boolean): void {
    this.cacheAllowed = live;
  }

  /** Called with the project id after each committed policy change (the change feed announces it to the other nodes). */
  onPolicyChanged(hook: (projectId: string) => Promise<void>): void {
    this.changeHooks.push(hook);
  }

  /**
   * The decision for one class at one boundary, and who made it: the policy, the absence of one
   * (`deny`), or a policy that could not be read (`deny`). For export and judge transfer; a refusal is
   * counted in the audit.
   */
  async decide(projectId: string, contentClass: ContentClass, boundary: Boundary): Promise<Decided> {
    const { grid, decider } = await this.gridOf(projectId);
    const decision: Decision = grid === null ? 'deny' : grid[contentClass][boundary];
    if (decision !== 'allow') this.countRefusal(projectId, boundary, decider, contentClass, decision, 1);
    return { decision, decided_by: decider };
  }

  /** What ingest may store of a project's content (one lookup per request). */
  async storeAccess(projectId: string): Promise<ContentAccess> {
    const { grid, decider } = await this.gridOf(projectId);
    return gridAccess('store', grid, decider, this.sinkOf(projectId));
  }

  /**
   * What a reader is served: content only with `agents:content:read` AND a read cell that allows it
   * (`allow_metadata`: existence and size). Without the scope every class is withheld and the policy is
   * not consulted.
   */
  async readAccess(caller: Principal, projectId: string): Promise<ContentAccess> {
    if (!caller.scopes.has(CONTENT_READ_SCOPE)) return gridAccess('read', null, 'credential_scope', this.sinkOf(projectId));
    const { grid, decider } = await this.gridOf(projectId);
    return gridAccess('read', grid, decider, this.sinkOf(projectId));
  }

  /** The stored retention windows of a project (for the scheduled erasure); a class without one keeps its content. */
  async retentionWindows(projectId: string): Promise<{ contentClass: ContentClass; retentionDays: number }[]> {
    return (await this.store.retention(projectId)).map((w) => ({ contentClass: w.contentClass, retentionDays: w.retentionDays }));
  }

  // ---- the policy resource

  async get(caller: Principal, projectId: string): Promise<{ projectId: string; policy: PolicyRecord | null }> {
    const p = await this.projects.get(caller, projectId);
    return { projectId: p.id, policy: (await this.store.find(p.id)) ?? null };
  }

  async put(caller: Principal, projectId: string, body: { expected_version?: number; rules: RuleInput[] }): Promise<PolicyRecord> {
    const p = await this.projects.get(caller, projectId);
    const grid = gridOf(body.rules);
    const r = await this.store.put({
      projectId: p.id,
      orgId: p.orgId,
      grid,
      by: { userId: caller.userId, apiKeyId: caller.keyId },
      at: this.clock.now().toISOString(),
      expectedVersion: body.expected_version,
    });
    this.invalidate(p.id);
    if (r.ok) for (const hook of this.changeHooks) await hook(p.id).catch(this.onError);
    if (!r.ok) throw conflict(`expected_version ${body.expected_version} does not match the policy's version ${r.currentVersion}; read it again and resend`);
    return r.record;
  }

  async list(caller: Principal, opts: { after?: { updatedAt: string; projectId: string }; limit: number }): Promise<ListedPolicy[]> {
    return this.store.list(caller.orgId, { ...opts, onlyProjectId: caller.projectId ?? undefined });
  }

  async retention(caller: Principal, projectId: string): Promise<{ projectId: string; windows: RetentionWindow[] }> {
    const p = await this.projects.get(caller, projectId);
    return { projectId: p.id, windows: await this.store.retention(p.id) };
  }

  async putRetention(caller: Principal, projectId: string, windows: { content_class: string; retention_days: number }[]) {
    const p = await this.projects.get(caller, projectId);
    const seen = new Set<string>();
    const parsed = windows.map((w, i) => {
      if (!(CONTENT_CLASSES as readonly string[]).includes(w.content_class))
        throw invalidRequest(`windows[${i}].content_class "${String(w.content_class).slice(0, 64)}" is not recognized; one of: ${CONTENT_CLASSES.join(', ')}`);
      if (seen.has(w.content_class)) throw invalidRequest(`windows[${i}]: content class ${w.content_class} is listed twice; send one window per class`);
      seen.add(w.content_class);
      checkRetentionDays(`windows[${i}].retention_days`, w.retention_days);
      return { contentClass: w.content_class as ContentClass, retentionDays: w.retention_days };
    });
    await this.store.putRetention(p.id, p.orgId, parsed, { userId: caller.userId, apiKeyId: caller.keyId }, this.clock.now().toISOString());
    return { projectId: p.id, windows: await this.store.retention(p.id) };
  }

  // ---- the refusal audit

  private minute(): string {
    const ms = this.clock.now().getTime();
    return new Date(ms - (((ms % 60_000) + 60_000) % 60_000)).toISOString();
  }

  private sinkOf(projectId: string) {
    return (boundary: Boundary, decider: Decider, cls: ContentClass, decision: Exclude<Decision, 'allow'>, n: number) =>
      this.countRefusal(projectId, boundary, decider, cls, decision, n);
  }

  private countRefusal(projectId: string, boundary: Boundary, decider: Decider, contentClass: ContentClass, decision: Exclude<Decision, 'allow'>, n: number) {
    const minute = this.minute();
    const key = `${projectId}|${minute}|${contentClass}|${boundary}|${decider}|${decision}`;
    const row = this.pending.get(key);
    if (row) row.count += n;
    else this.pending.set(key, { projectId, minute, contentClass, boundary, decider, decision, count: n });
    this.timer ??= setTimeout(() => {
      this.timer = undefined;
      this.flush().catch(this.onError);
    }, REFUSAL_FLUSH_MS).unref();
  }

  /** Writes the buffered refusal counts (kept for the next flush when the write fails). */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const rows = [...this.pending.values()];
    this.pending = new Map();
    try {
      await this.store.addRefusals(rows);
    } catch (e) {
      for (const r of rows) {
        const key = `${r.projectId}|${r.minute}|${r.contentClass}|${r.boundary}|${r.decider}|${r.decision}`;
        const cur = this.pending.get(key);
        if (cur) cur.count += r.count;
        else this.pending.set(key, r);
      }
      throw e;
    }
  }

  async refusals(caller: Principal, projectId: string, q: Omit<RefusalQuery, 'projectId'>): Promise<RefusalCount[]> {
    const p = await this.projects.get(caller, projectId);
    await this.flush();
    return this.store.refusals({ ...q, projectId: p.id });
  }

  /** Stops the flush timer and writes what is buffered (app close). */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.flush().catch(this.onError);
  }

  /** A deleted project's policy, windows, audit and cached grid go with it. */
  async forgetProject(projectId: string): Promise<void> {
    this.invalidate(projectId);
    for (const [k, r] of this.pending) if (r.projectId === projectId) this.pending.delete(k);
    await this.store.forgetProject(projectId);
  }
}
