/**
 * Review signals and their notification outbox (docs/governance.md).
 *
 * Signals are deduplicated by (project, dedup key): a repeat raise refreshes `last_seen_at` without a
 * second notification, and a closed signal is never reopened. Every open and close is written to the
 * outbox in the transaction of the change that caused it. The asset service raises and clears the
 * inventory kinds through `raise` and `clearOfAsset`; containment raises the killed-credential kind.
 */
import { invalidRequest, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore, ControlStores } from '../../storage/control/stores.js';
import {
  ACTIVE_STATUSES,
  type AssetRecord,
  type OutboxEvent,
  type SignalFilter,
  type SignalKind,
  type SignalPosition,
  type SignalRecord,
  type SignalSeverity,
} from './store.js';

/** Days an asset may sit in the inventory before UNREVIEWED_ASSET / UNOWNED_ASSET are raised (SVC_ASSET_REVIEW_WINDOW_DAYS). */
export const DEFAULT_REVIEW_WINDOW_DAYS = 7;

/** Severity of each kind (the spec leaves them to us; docs/governance.md explains the choice). */
export const SEVERITY_OF: Record<SignalKind, SignalSeverity> = {
  REVIEW_SIGNAL_KIND_SHADOW_ASSET: 'REVIEW_SIGNAL_SEVERITY_HIGH',
  REVIEW_SIGNAL_KIND_ABOM_DRIFT: 'REVIEW_SIGNAL_SEVERITY_HIGH',
  REVIEW_SIGNAL_KIND_CONFIG_UNREGISTERED: 'REVIEW_SIGNAL_SEVERITY_MEDIUM',
  REVIEW_SIGNAL_KIND_KILLED_ASSET_CREDENTIAL: 'REVIEW_SIGNAL_SEVERITY_CRITICAL',
  REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM: 'REVIEW_SIGNAL_SEVERITY_HIGH',
  REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET: 'REVIEW_SIGNAL_SEVERITY_MEDIUM',
  REVIEW_SIGNAL_KIND_UNOWNED_ASSET: 'REVIEW_SIGNAL_SEVERITY_LOW',
  REVIEW_SIGNAL_KIND_REVOKED_AUTHORITY_EXERCISED: 'REVIEW_SIGNAL_SEVERITY_CRITICAL',
};

/** Who acted, as a bounded identifier: the person behind the credential, else the API key. */
export function principalRef(p: Principal): string {
  if (p.userId) return `user:${p.userId}`;
  if (p.keyId) return `api_key:${p.keyId}`;
  return p.connectionId ? `oauth:${p.connectionId}` : `org:${p.orgId}`;
}

export class SignalService {
  private lastSeq = 0;

  constructor(
    private readonly control: ControlStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    readonly reviewWindowDays = DEFAULT_REVIEW_WINDOW_DAYS,
  ) {}

  private now() {
    return this.clock.now().toISOString();
  }

  /** A shadow key sighted again: its active SHADOW_ASSET signal's last_seen_at moves forward to `seenAt` (never back; no second notification). */
  async touchShadow(projectId: string, observationKey: string, seenAt: string): Promise<void> {
    const s = await this.control.reviewSignals.findByDedup(projectId, shadowKey(observationKey));
    if (s && ACTIVE_STATUSES.includes(s.status) && s.lastSeenAt < seenAt) await this.control.reviewSignals.touch(s.id, seenAt);
  }

  // ---- killed-credential signals (raised by the containment part)

  /**
   * REVIEW_SIGNAL_KIND_KILLED_ASSET_CREDENTIAL: telemetry from `apiKeyId` resolves to an agent under the
   * active kill `quarantineId`, but the key was outside the set the approval reached. One signal per
   * (kill, key): a repeat refreshes it.
   */
  async raiseKilledCredential(i: { orgId: string; projectId: string; quarantineId: string; apiKeyId: string; assetId: string | null }): Promise<void> {
    const kind: SignalKind = 'REVIEW_SIGNAL_KIND_KILLED_ASSET_CREDENTIAL';
    await this.control.transaction((tx) =>
      this.raise(tx, {
        orgId: i.orgId,
        projectId: i.projectId,
        kind,
        dedupKey: `${kind}:${i.quarantineId}:${i.apiKeyId}`,
        subjectRef: i.apiKeyId,
        detailCode: 'key_outside_approved_set',
        assetId: i.assetId,
        evidenceRef: i.quarantineId,
        seenAt: this.now(),
      }),
    );
  }

  /**
   * Clears the active killed-credential signals of a project whose containment is no longer active or
   * whose key is revoked (`stillHeld` answers for one signal); each clear is notified once.
   */
  async clearKilledCredentials(projectId: string, stillHeld: (s: { quarantineId: string; apiKeyId: string }) => Promise<'held' | 'containment_lifted' | 'key_revoked'>, by = 'platform') {
    const kind: SignalKind = 'REVIEW_SIGNAL_KIND_KILLED_ASSET_CREDENTIAL';
    let cleared = 0;
    for (;;) {
      const page = await this.control.reviewSignals.list({ projectId, kinds: [kind], statuses: [...ACTIVE_STATUSES] }, { limit: 200 });
      let changed = 0;
      for (const s of page) {
        const verdict = await stillHeld({ quarantineId: s.evidenceRef ?? '', apiKeyId: s.subjectRef });
        if (verdict === 'held') continue;
        const at = this.now();
        const next: SignalRecord = { ...s, status: 'REVIEW_SIGNAL_STATUS_RESOLVED', resolvedBy: by, resolvedAt: at, resolutionCode: verdict };
        await this.control.transaction(async (tx) => {
          if (await tx.reviewSignals.transition(next, ACTIVE_STATUSES)) {
            await this.notify(tx, next, 'resolved', at);
            changed++;
          }
        });
      }
      cleared += changed;
      if (changed === 0 || page.length <= 200) return cleared;
    }
  }

  // ---- review window sweep

  /**
   * Raises UNREVIEWED_ASSET for every asset older than the review window with no approval decision, and
   * UNOWNED_ASSET for every one with neither owner; a repeat sweep refreshes `last_seen_at`. Returns how
   * many signals it opened.
   */
  async sweepReviewWindow(now: Date = this.clock.now()): Promise<{ opened: number; refreshed: number }> {
    const cutoff = new Date(now.getTime() - this.reviewWindowDays * 86_400_000).toISOString();
    const at = now.toISOString();
    let opened = 0;
    let refreshed = 0;
    let afterId: string | undefined;
    for (;;) {
      const page = await this.control.assets.pastWindow(cutoff, { afterId, limit: 200 });
      for (const a of page.slice(0, 200)) {
        const raises: RaiseInput[] = [];
        if (a.approvalState === 'APPROVAL_STATE_UNREVIEWED')
          raises.push({ ...assetSignal(a, 'REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET', a.reviewedAt ?? ''), detailCode: 'review_window_elapsed', seenAt: at });
        if (a.ownerTeam === null && a.ownerPrincipal === null)
          raises.push({ ...assetSignal(a, 'REVIEW_SIGNAL_KIND_UNOWNED_ASSET', a.ownershipSetAt ?? ''), detailCode: 'no_owner', seenAt: at });
        for (const r of raises) {
          const outcome = await this.control.transaction((tx) => this.raise(tx, r));
          if (outcome === 'opened') opened++;
          if (outcome === 'refreshed') refreshed++;
        }
      }
      if (page.length <= 200) break;
      afterId = page[199].id;
    }
    return { opened, refreshed };
  }

  // ---- signals

  /**
   * Opens the signal of this dedup key, or refreshes its `last_seen_at` when it is still active. A closed
   * signal stays closed. Only an open writes to the outbox.
   */
  async raise(tx: ControlStores, r: RaiseInput): Promise<'opened' | 'refreshed' | 'closed'> {
    const signal: SignalRecord = {
      id: this.ids.uuid(),
      orgId: r.orgId,
      projectId: r.projectId,
      dedupKey: r.dedupKey,
      kind: r.kind,
      status: 'REVIEW_SIGNAL_STATUS_OPEN',
      severity: SEVERITY_OF[r.kind],
      subjectRef: r.subjectRef,
      detailCode: r.detailCode,
      assetId: r.assetId,
      evidenceRef: r.evidenceRef ?? null,
      openedAt: r.seenAt,
      lastSeenAt: r.seenAt,
      acknowledgedBy: null,
      acknowledgedAt: null,
      resolvedBy: null,
      resolvedAt: null,
      resolutionCode: null,
      resolutionReason: null,
    };
    if (await tx.reviewSignals.insertIfNew(signal)) {
      await this.notify(tx, signal, 'opened', this.now());
      return 'opened';
    }
    const existing = await tx.reviewSignals.findByDedup(r.projectId, r.dedupKey);
    if (existing && ACTIVE_STATUSES.includes(existing.status)) {
      await tx.reviewSignals.touch(existing.id, r.seenAt);
      return 'refreshed';
    }
    return 'closed';
  }

  /** Auto-clear: resolves the active signals of these kinds about the asset, each notified once. */
  async clearOfAsset(tx: ControlStores, assetId: string, kinds: SignalKind[], code: string, by: string, at: string) {
    for (const s of await tx.reviewSignals.activeOfAsset(assetId, kinds)) await this.resolve(tx, s, code, by, at);
  }

  /** Auto-clear of the one signal of a dedup key (a memory item labelled trusted again, a drift matched by a registered configuration); true when it was active and is now resolved (notified once). */
  async clearByDedup(tx: ControlStores, projectId: string, dedupKey: string, code: string, by: string, at: string): Promise<boolean> {
    const s = await tx.reviewSignals.findByDedup(projectId, dedupKey);
    return s !== undefined && ACTIVE_STATUSES.includes(s.status) && (await this.resolve(tx, s, code, by, at));
  }

  private async resolve(tx: ControlStores, s: SignalRecord, code: string, by: string, at: string): Promise<boolean> {
    const next: SignalRecord = { ...s, status: 'REVIEW_SIGNAL_STATUS_RESOLVED', resolvedBy: by, resolvedAt: at, resolutionCode: code };
    if (!(await tx.reviewSignals.transition(next, ACTIVE_STATUSES))) return false;
    await this.notify(tx, next, 'resolved', at);
    return true;
  }

  private async notify(tx: ControlStores, s: SignalRecord, event: OutboxEvent, at: string) {
    this.lastSeq = Math.max(this.lastSeq + 1, this.clock.now().getTime() * 1000);
    await tx.outbox.append({
      id: this.ids.uuid(),
      seq: this.lastSeq,
      orgId: s.orgId,
      projectId: s.projectId,
      source: 'review_signals',
      event,
      signalId: s.id,
      kind: s.kind,
      severity: s.severity,
      subjectRef: s.subjectRef,
      assetId: s.assetId,
      occurredAt: at,
      payload: s,
      deliveredAt: null,
    });
  }

  listSignals(filter: SignalFilter, opts: { after?: SignalPosition; limit: number }) {
    return this.control.reviewSignals.list(filter, opts);
  }

  /** A signal the credential may see (404 otherwise, as for a missing one). */
  async getSignal(caller: Principal, id: string): Promise<SignalRecord> {
    const s = await this.control.reviewSignals.find(id);
    if (!s || s.orgId !== caller.orgId || (caller.projectId !== null && caller.projectId !== s.projectId)) throw notFound('review signal');
    return s;
  }

  /** OPEN -> ACKNOWLEDGED: someone is looking at it; it still auto-clears and is still refreshed. */
  async acknowledge(caller: Principal, id: string): Promise<SignalRecord> {
    const s = await this.getSignal(caller, id);
    if (s.status === 'REVIEW_SIGNAL_STATUS_ACKNOWLEDGED') return s;
    if (s.status !== 'REVIEW_SIGNAL_STATUS_OPEN') throw invalidRequest(`only an open signal can be acknowledged; this one is ${s.status}`);
    const next: SignalRecord = { ...s, status: 'REVIEW_SIGNAL_STATUS_ACKNOWLEDGED', acknowledgedBy: principalRef(caller), acknowledgedAt: this.now() };
    if (!(await this.control.reviewSignals.transition(next, ['REVIEW_SIGNAL_STATUS_OPEN']))) return this.getSignal(caller, id);
    return next;
  }

  /** OPEN or ACKNOWLEDGED -> DISMISSED with a reason: closed for good (a later sighting does not reopen it); notified. */
  async dismiss(caller: Principal, id: string, reason: string): Promise<SignalRecord> {
    const s = await this.getSignal(caller, id);
    if (!ACTIVE_STATUSES.includes(s.status)) throw invalidRequest(`only an open or acknowledged signal can be dismissed; this one is ${s.status}`);
    const at = this.now();
    const next: SignalRecord = { ...s, status: 'REVIEW_SIGNAL_STATUS_DISMISSED', resolvedBy: principalRef(caller), resolvedAt: at, resolutionCode: 'dismissed', resolutionReason: reason };
    return this.control.transaction(async (tx) => {
      if (!(await tx.reviewSignals.transition(next, ACTIVE_STATUSES)))
        throw invalidRequest('the signal was closed meanwhile');
      await this.notify(tx, next, 'dismissed', at);
      return next;
    });
  }

  outbox(projectId: string, opts: { after?: { seq: number; id: string }; limit: number }) {
    return this.control.outbox.list(projectId, opts);
  }
}

export interface RaiseInput {
  orgId: string;
  projectId: string;
  kind: SignalKind;
  dedupKey: string;
  subjectRef: string;
  detailCode: string;
  assetId: string | null;
  evidenceRef?: string;
  seenAt: string;
}

export const shadowKey = (observationKey: string) => `REVIEW_SIGNAL_KIND_SHADOW_ASSET:${observationKey}`;

/**
 * An asset signal whose dedup key names the episode: after a decision is taken back (a review back to
 * UNREVIEWED, both owners cleared) a later sweep opens a new signal instead of reopening the closed one.
 */
function assetSignal(a: AssetRecord, kind: SignalKind, episode: string) {
  return { orgId: a.orgId, projectId: a.projectId, kind, dedupKey: `${kind}:${a.id}:${episode}`, subjectRef: a.id, assetId: a.id };
}

