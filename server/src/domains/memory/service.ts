/**
 * Memory labels and propagation (docs/memory.md).
 *
 * - A label is a person's or an API key's judgement of one memory item of a project (its key is the
 *   `svc.memory.item.id` recorded on memory steps). Every write appends a revision (1, 2, ...); history is
 *   never replaced. A label revokes and blocks nothing, and an item may be labelled before it is recorded.
 * - `quarantined` opens one POISONED_MEMORY_ITEM review signal per episode (a repeat refreshes it),
 *   `trusted` resolves it and ends the episode (a later `quarantined` opens a new signal), `suspect`
 *   leaves it as it is. The signal moves in the transaction of the label write.
 * - Propagation lists the recorded operations on the item, oldest first, each with the label in force
 *   at its time.
 */
import { invalidRequest, notFound, permissionDenied, unavailable } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import type { SignalService } from '../assets/signals.js';
import type { SignalKind } from '../assets/store.js';
import type { ProjectRecord } from '../projects/store.js';
import type {
  MemoryLabelFilter,
  MemoryLabelPosition,
  MemoryLabelRecord,
  MemoryOperationRow,
  MemoryOperationsReader,
  MemoryTrustLabel,
} from './store.js';

/** Longest item key accepted (characters, after URL decoding). */
export const MAX_ITEM_KEY = 256;
/** Longest label reason (characters). */
export const MAX_REASON = 1024;
export const LABEL_PAGE = { default: 100, max: 200 };
export const PROPAGATION_LIMIT = { default: 200, max: 500 };

const KIND: SignalKind = 'REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM';
const TRUSTED: MemoryTrustLabel = 'MEMORY_TRUST_LABEL_TRUSTED';
const QUARANTINED: MemoryTrustLabel = 'MEMORY_TRUST_LABEL_QUARANTINED';

/**
 * The dedup key of the item's poisoned-memory signal in one episode: the episode is named by the revision
 * of the newest `trusted` label before it (0: none yet), so a `quarantined` after `trusted` opens a new
 * signal and the resolved one stays resolved.
 */
export const poisonedKey = (itemKey: string, trustedRevision: number) => `${KIND}:${trustedRevision}:${itemKey}`;

/**
 * Who labels: the person behind the credential, else the API key. A credential with neither identity (an
 * agent connection acting for no person, or the platform itself) may not record a judgement.
 */
export function labellerOf(p: Principal): string {
  if (p.userId) return `user:${p.userId}`;
  if (p.kind === 'api_key' && p.keyId) return `api_key:${p.keyId}`;
  throw permissionDenied(
    'a memory label records the judgement of a person or an API key, and this credential carries neither identity (an agent connection acting for no person, or the platform itself): label with a signed-in person or an API key',
  );
}

/** An item key as the routes take it: 1 to MAX_ITEM_KEY characters, no NUL. */
export function checkItemKey(key: string, field = 'item key'): string {
  if (key.length === 0) throw invalidRequest(`${field} must not be empty`);
  if (key.length > MAX_ITEM_KEY) throw invalidRequest(`${field} is at most ${MAX_ITEM_KEY} characters`);
  if (key.includes('\u0000')) throw invalidRequest(`${field} must not contain the NUL character`);
  return key;
}

export interface LabelInput {
  label: MemoryTrustLabel;
  reason: string;
}

/** One entry of an item's propagation, with the label in force at its time. */
export interface PropagationEntry {
  op: MemoryOperationRow;
  inForce: MemoryLabelRecord | undefined;
}

export interface Propagation {
  entries: PropagationEntry[];
  distinctSessions: number;
  current: MemoryLabelRecord | undefined;
  truncated: boolean;
}

const micros = (iso: string) => Date.parse(iso) * 1000;

export class MemoryLabelService {
  constructor(
    private readonly control: ControlStore,
    private readonly telemetry: MemoryOperationsReader,
    private readonly signals: SignalService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** Appends a revision of the item's label and moves its review signal, in one transaction. */
  async label(caller: Principal, project: ProjectRecord, itemKey: string, input: LabelInput): Promise<MemoryLabelRecord> {
    const by = labellerOf(caller);
    checkItemKey(itemKey);
    if (input.reason.trim() === '') throw invalidRequest('reason must not be blank');
    if (input.reason.includes('\u0000')) throw invalidRequest('reason must not contain the NUL character');
    const assetId = input.label === QUARANTINED ? await this.recordingAsset(project.id, itemKey) : null;
    const id = this.ids.uuid();
    return this.control.transaction(async (tx) => {
      const claim = await tx.memoryLabels.claim(project.orgId, project.id, itemKey);
      // labeled_at strictly increases with the revision, so "the label at a time" has one answer.
      const previous = claim.previousLabeledAt === null ? -Infinity : Date.parse(claim.previousLabeledAt) + 1;
      const at = new Date(Math.max(this.clock.now().getTime(), previous)).toISOString();
      const dedupKey = poisonedKey(itemKey, claim.trustedRevision);
      let opened = false;
      let resolved = false;
      if (input.label === QUARANTINED) {
        const outcome = await this.signals.raise(tx, {
          orgId: project.orgId,
          projectId: project.id,
          kind: KIND,
          dedupKey,
          subjectRef: itemKey,
          detailCode: 'labeled_quarantined',
          assetId,
          evidenceRef: id,
          seenAt: at,
        });
        opened = outcome === 'opened';
      } else if (input.label === TRUSTED) {
        resolved = await this.signals.clearByDedup(tx, project.id, dedupKey, 'labeled_trusted', by, at);
      }
      const record: MemoryLabelRecord = {
        id,
        orgId: project.orgId,
        projectId: project.id,
        itemKey,
        revision: claim.revision,
        label: input.label,
        reason: input.reason,
        labeledBy: by,
        labeledAt: at,
        signalOpened: opened,
        signalResolved: resolved,
      };
      await tx.memoryLabels.append(record);
      return record;
    });
  }

  /**
   * The asset of the agent that recorded the item, when known. A label never waits on telemetry: when the
   * telemetry store cannot answer, the signal names no asset.
   */
  private async recordingAsset(projectId: string, itemKey: string): Promise<string | null> {
    try {
      const agent = await this.telemetry.recordingAgent(projectId, itemKey);
      if (agent === null) return null;
      return (await this.control.assets.assetsOfKeys(projectId, [agent])).get(agent) ?? null;
    } catch {
      return null;
    }
  }

  /** The current label (highest revision); 404 when nobody labelled the item. */
  async current(projectId: string, itemKey: string): Promise<MemoryLabelRecord> {
    checkItemKey(itemKey);
    const r = await this.control.memoryLabels.current(projectId, itemKey);
    if (!r) throw notFound('memory item label');
    return r;
  }

  list(filter: MemoryLabelFilter, opts: { after?: MemoryLabelPosition; limit: number }) {
    return this.control.memoryLabels.list(filter, opts);
  }

  /**
   * The recorded operations on the item, oldest first, at most `limit` (more sets `truncated`), each with
   * the label in force at its time. 404 when the item was never recorded and never labelled; 503 when the
   * labels or the recorded operations cannot be read (never a partial or empty answer).
   */
  async propagation(projectId: string, itemKey: string, limit: number): Promise<Propagation> {
    checkItemKey(itemKey);
    let history: MemoryLabelRecord[];
    try {
      history = await this.control.memoryLabels.history(projectId, itemKey);
    } catch (e) {
      throw unavailable('the labels of the memory item could not be read; propagation is not answered without them', 1, e);
    }
    let ops: Awaited<ReturnType<MemoryOperationsReader['operations']>>;
    try {
      ops = await this.telemetry.operations(projectId, itemKey, limit);
    } catch (e) {
      throw unavailable('the recorded memory operations could not be read', 1, e);
    }
    if (history.length === 0 && ops.rows.length === 0) throw notFound('memory item');
    const rows = ops.rows.slice(0, limit);
    // Both lists are in time order: the label in force moves forward with the entries.
    let i = -1;
    const entries = rows.map((op) => {
      while (i + 1 < history.length && micros(history[i + 1].labeledAt) <= op.startUs) i++;
      return { op, inForce: i >= 0 ? history[i] : undefined };
    });
    return { entries, distinctSessions: ops.distinctSessions, current: history[history.length - 1], truncated: ops.rows.length > limit };
  }
}
