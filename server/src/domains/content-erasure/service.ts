/**
 * Erasure of recorded content (docs/content-policy.md "Erasure"): on demand for one subject, and on
 * the job runner for every retention window. Each erasure is an action with a mediated receipt:
 * `RECEIPT_STATE_INTENDED` and `RECEIPT_STATE_AUTHORIZED` are written (with the erasure row) before the
 * telemetry store is touched, then `RECEIPT_STATE_EXECUTED`, or `RECEIPT_STATE_EFFECT_UNKNOWN` when the
 * erasure failed part way (the row says `failed`; erasing again is safe). Policies:
 * `content:subject_erasure@v1` and `content:retention_window@v1`.
 */
import { conflict, invalidRequest, notFound, unavailable } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import { principalRef } from '../assets/signals.js';
import { CONTENT_CLASSES, type ContentClass } from '../content/content-keys.js';
import type { ProjectService } from '../projects/service.js';
import type { MediatedReceipts } from '../quarantines/service.js';
import type { MediatedPolicyId } from '../receipts/model.js';
import type { ErasureCounts, ErasureRecord, ErasureSubjectKind, TelemetryContentEraser } from './store.js';

/** The principal the scheduled erasure acts as. */
export const RETENTION_PRINCIPAL = 'platform:content_retention';

export interface RetentionWindows {
  retentionWindows(projectId: string): Promise<{ contentClass: ContentClass; retentionDays: number }[]>;
}

export interface SubjectErasureInput {
  subject_kind: ErasureSubjectKind;
  subject_id: string;
  content_classes?: ContentClass[];
  reason: string;
  request_id?: string;
}

const DAY_MS = 86_400_000;

export class ContentErasureService {
  constructor(
    private readonly control: ControlStore,
    private readonly projects: ProjectService,
    private readonly eraser: TelemetryContentEraser,
    private readonly windows: RetentionWindows,
    private readonly receipts: MediatedReceipts,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /**
   * Erases the content of one subject now. A `request_id` makes a retry safe: the same principal gets the
   * first erasure back (`created: false`), another principal 409 revealing nothing of it.
   */
  async eraseSubject(caller: Principal, projectId: string, input: SubjectErasureInput): Promise<{ record: ErasureRecord; created: boolean }> {
    const project = await this.projects.get(caller, projectId);
    const classes = input.content_classes ?? [...CONTENT_CLASSES];
    if (classes.length === 0) throw invalidRequest('content_classes is empty: name at least one class, or leave it out to erase every class');
    if (new Set(classes).size !== classes.length) throw invalidRequest('content_classes names a class twice');
    const by = principalRef(caller);
    if (input.request_id !== undefined) {
      const prior = await this.control.erasures.findByRequest(project.orgId, input.request_id);
      if (prior) return this.replay(prior, by, project.id);
    }
    const record = this.newRecord({
      orgId: project.orgId,
      projectId: project.id,
      kind: 'subject',
      subjectKind: input.subject_kind,
      subjectId: input.subject_id,
      contentClasses: sortClasses(classes),
      beforeAt: null,
      reason: input.reason,
      requestedBy: by,
      requestId: input.request_id ?? null,
    });
    if (!(await this.begin(record, 'content:subject_erasure'))) {
      // Another request with this request id won the race.
      const prior = await this.control.erasures.findByRequest(project.orgId, input.request_id!);
      if (prior) return this.replay(prior, by, project.id);
      throw conflict('request_id is already used');
    }
    return { record: await this.run(record, 'content:subject_erasure', { subject: { kind: input.subject_kind, id: input.subject_id } }), created: true };
  }

  private replay(prior: ErasureRecord, by: string, projectId: string) {
    if (prior.requestedBy !== by || prior.projectId !== projectId) throw conflict('request_id is already used by another request');
    return { record: prior, created: false };
  }

  /**
   * The scheduled erasure: for every live project with retention windows, erases the content of each
   * class older than its window. An erasure (and its receipt) is recorded only where content may be
   * there to erase, so an idle hour writes nothing. Returns the erasures it recorded.
   */
  async sweepRetention(now: Date = this.clock.now()): Promise<ErasureRecord[]> {
    const done: ErasureRecord[] = [];
    for (const p of await this.control.assets.liveProjects()) {
      const byDays = new Map<number, ContentClass[]>();
      for (const w of await this.windows.retentionWindows(p.id)) byDays.set(w.retentionDays, [...(byDays.get(w.retentionDays) ?? []), w.contentClass]);
      for (const [days, classes] of byDays) {
        const before = new Date(now.getTime() - days * DAY_MS);
        const scope = { projectId: p.id, classes, beforeUs: before.getTime() * 1000 };
        if (!(await this.eraser.mayHaveContent(scope))) continue;
        const record = this.newRecord({
          orgId: p.orgId,
          projectId: p.id,
          kind: 'retention',
          subjectKind: null,
          subjectId: null,
          contentClasses: sortClasses(classes),
          beforeAt: before.toISOString(),
          reason: `retention window of ${days} days`,
          requestedBy: RETENTION_PRINCIPAL,
          requestId: null,
        });
        await this.begin(record, 'content:retention_window');
        done.push(await this.run(record, 'content:retention_window', {}));
      }
    }
    return done;
  }

  async get(caller: Principal, projectId: string, id: string): Promise<ErasureRecord> {
    const project = await this.projects.get(caller, projectId);
    const r = await this.control.erasures.find(id);
    if (!r || r.projectId !== project.id) throw notFound('content erasure');
    return r;
  }

  async list(caller: Principal, projectId: string, opts: Parameters<ControlStore['erasures']['list']>[1]) {
    const project = await this.projects.get(caller, projectId);
    return this.control.erasures.list(project.id, opts);
  }

  private newRecord(r: Omit<ErasureRecord, 'id' | 'status' | 'counts' | 'detailCode' | 'createdAt' | 'completedAt'>): ErasureRecord {
    return { ...r, id: this.ids.uuid(), status: 'running', counts: null, detailCode: null, createdAt: this.clock.now().toISOString(), completedAt: null };
  }

  /** Writes the erasure row and the INTENDED and AUTHORIZED entries in one transaction; false when the request id is taken. */
  private begin(r: ErasureRecord, policy: MediatedPolicyId): Promise<boolean> {
    const purpose = policy === 'content:subject_erasure' ? 'subject_erasure' : 'retention_window';
    return this.control.transaction(async (tx) => {
      if (!(await tx.erasures.insert(r))) return false;
      await this.receipts.appendMediated(tx, {
        ...this.action(r, policy),
        entries: [
          { state: 'RECEIPT_STATE_INTENDED', requesterPrincipal: r.requestedBy, effectClass: 'EFFECT_CLASS_INTERNAL', destructive: true, occurredAt: r.createdAt },
          {
            state: 'RECEIPT_STATE_AUTHORIZED',
            requesterPrincipal: r.requestedBy,
            // The platform decides under the policy: the requester's governance:write, or the stored window.
            approverPrincipal: r.requestedBy,
            effectClass: 'EFFECT_CLASS_INTERNAL',
            destructive: true,
            occurredAt: r.createdAt,
            tool: 'content_erasure',
            purpose,
          },
        ],
      });
      return true;
    });
  }

  private action(r: ErasureRecord, policy: MediatedPolicyId) {
    return {
      orgId: r.orgId,
      projectId: r.projectId,
      actionId: r.id,
      policy: { id: policy, version: 'v1' },
      subject: r.subjectKind ? { kind: r.subjectKind, id: r.subjectId ?? '' } : { kind: 'retention', id: r.contentClasses.join(',') },
      source: 'content_erasure',
    };
  }

  private async run(r: ErasureRecord, policy: MediatedPolicyId, scope: { subject?: { kind: ErasureSubjectKind; id: string } }): Promise<ErasureRecord> {
    let counts: ErasureCounts | null = null;
    let fault: unknown;
    try {
      counts = await this.eraser.erase({
        projectId: r.projectId,
        classes: r.contentClasses,
        beforeUs: r.beforeAt ? Date.parse(r.beforeAt) * 1000 : undefined,
        subject: scope.subject,
      });
    } catch (e) {
      fault = e;
    }
    const at = this.clock.now().toISOString();
    const end = { status: fault ? ('failed' as const) : ('completed' as const), counts, detailCode: fault ? 'telemetry_unwritable' : null, completedAt: at };
    await this.control.transaction(async (tx) => {
      await tx.erasures.finish(r.id, end);
      await this.receipts.appendMediated(tx, {
        ...this.action(r, policy),
        entries: [
          {
            state: fault ? 'RECEIPT_STATE_EFFECT_UNKNOWN' : 'RECEIPT_STATE_EXECUTED',
            requesterPrincipal: r.requestedBy,
            effectClass: 'EFFECT_CLASS_INTERNAL',
            destructive: true,
            occurredAt: at,
          },
        ],
      });
    });
    if (fault) throw unavailable(`the erasure ${r.id} could not be completed (the telemetry store did not answer); send it again`, 5, fault);
    return { ...r, ...end };
  }
}

const sortClasses = (cs: readonly ContentClass[]) => CONTENT_CLASSES.filter((c) => cs.includes(c));
