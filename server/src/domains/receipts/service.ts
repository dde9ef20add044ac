/**
 * Action receipts (docs/receipts.md): every entry, mediated or reported, is checked against the fold's
 * rules, linked into the project's chain `actions` and folded into its action's receipt, all in one
 * transaction; an AUTHORIZED entry also exercises its authority edge.
 *
 * - Mediated entries (`appendMediated`): written by the platform inside the transaction of the decision
 *   they record (containment approval; later erasure and the MCP gateway), always under a policy of the
 *   mediated table.
 * - Reported entries (`ingestReported`): declared by an agent with an ingest key; the authority is
 *   REPORTED and the reporting credential is recorded. All or nothing: one refused entry refuses the
 *   batch, naming its index. A `request_id` answers a retry with the first answer (same principal) or 409;
 *   an `entry_id` makes one entry idempotent within its action.
 */
import { conflict, invalidRequest, notFound, tooLarge } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore, ControlStores } from '../../storage/control/stores.js';
import { principalRef } from '../assets/signals.js';
import type { AuthorityEdgeService } from '../authority-edges/service.js';
import type { ProjectRecord } from '../projects/store.js';
import { nanoTimestamp } from '../signing/byte-contract.js';
import { link } from './chain.js';
import { checkAppend, ReceiptRuleError, receiptRecord } from './fold.js';
import { ACTIONS_CHAIN_ID, type EffectClass, MAX_ENTRIES_PER_ACTION, MEDIATED_POLICIES, type MediatedPolicyId, type ReceiptState } from './model.js';
import type { EntryRecord, IngestRequestRecord, ReceiptFilter, ReceiptRecord } from './store.js';

/** What the caller of an append decides; the chain, positions and digests are the service's. */
type Draft = Omit<EntryRecord, 'id' | 'seq' | 'recordedAt' | 'chainId' | 'chainSeq' | 'prevEntrySha256' | 'entrySha256' | 'canonical'>;

export interface AppendedEntry {
  index: number;
  action_id: string;
  seq: number;
  chain_seq: number;
  entry_sha256: string;
  /** An entry_id already stored with the same content: nothing was appended. */
  duplicate: boolean;
}

export interface MediatedEntry {
  state: ReceiptState;
  requesterPrincipal: string | null;
  approverPrincipal?: string | null;
  effectClass: EffectClass;
  destructive: boolean;
  /** When it happened (RFC 3339 or ISO text). */
  occurredAt: string;
  runId?: string;
  traceId?: string;
  spanId?: string;
  /** Tool and purpose of an AUTHORIZED entry name the authority edge it exercises. */
  tool?: string;
  purpose?: string;
}

export interface MediatedInput {
  orgId: string;
  projectId: string;
  actionId: string;
  policy: { id: MediatedPolicyId; version: string };
  /** What the action is about (a containment's target kind and target). */
  subject?: { kind: string; id: string };
  /** Recorded on an authority edge this action first evidences (e.g. `quarantine`). */
  source: string;
  entries: MediatedEntry[];
}

/** One entry of a reported batch, as the API takes it. */
export interface ReportedEntryInput {
  action_id: string;
  entry_id?: string;
  state: string;
  occurred_at: string;
  requester_principal?: string;
  effect_class: EffectClass;
  destructive?: boolean;
  policy_id?: string;
  policy_version?: string;
  run_id?: string;
  trace_id?: string;
  span_id?: string;
  tool?: string;
  purpose?: string;
  authority_edge_id?: string;
}

export interface IngestAnswer {
  project_id: string;
  request_id?: string;
  accepted: number;
  duplicates: number;
  entries: AppendedEntry[];
}

/** The credential that reported: the API key, else the connection or person behind the credential. */
function credentialRef(p: Principal): string {
  return p.keyId ? `api_key:${p.keyId}` : principalRef(p);
}

const group = (entries: EntryRecord[]) => {
  const m = new Map<string, EntryRecord[]>();
  for (const e of entries) m.set(e.actionId, [...(m.get(e.actionId) ?? []), e]);
  return m;
};

const CLIENT_FIELDS = ['state', 'authority', 'requesterPrincipal', 'effectClass', 'destructive', 'policyId', 'policyVersion', 'occurredAt', 'runId', 'traceId', 'spanId', 'tool', 'purpose', 'authorityEdgeId'] as const;
const sameContent = (a: Draft, b: Draft) => CLIENT_FIELDS.every((k) => a[k] === b[k]);

/** Ends the transaction of a batch whose request id another transaction took meanwhile. */
class RequestTaken extends Error {}

/** How many receipts one run lists in its graph (more is refused, as the graph's step ceiling). */
export const MAX_RUN_RECEIPTS = 1000;

export class ReceiptService {
  constructor(
    private readonly control: ControlStore,
    private readonly edges: AuthorityEdgeService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** Mediated entries of one action, inside the caller's transaction (the decision and its receipt commit together). */
  async appendMediated(tx: ControlStores, m: MediatedInput): Promise<AppendedEntry[]> {
    if (MEDIATED_POLICIES[m.policy.id] !== m.policy.version) throw new Error(`mediated policy ${m.policy.id}@${m.policy.version} is not in the policy table`);
    const drafts: Draft[] = m.entries.map((e) => ({
      orgId: m.orgId,
      projectId: m.projectId,
      actionId: m.actionId,
      state: e.state,
      authority: 'RECEIPT_AUTHORITY_MEDIATED',
      requesterPrincipal: e.requesterPrincipal,
      approverPrincipal: e.approverPrincipal ?? null,
      reportedBy: null,
      effectClass: e.effectClass,
      destructive: e.destructive,
      policyId: m.policy.id,
      policyVersion: m.policy.version,
      occurredAt: nanoTimestamp(e.occurredAt),
      subjectKind: m.subject?.kind ?? '',
      subjectId: m.subject?.id ?? '',
      runId: e.runId ?? null,
      traceId: e.traceId ?? null,
      spanId: e.spanId ?? null,
      tool: e.tool ?? null,
      purpose: e.purpose ?? null,
      authorityEdgeId: null,
      entryId: null,
    }));
    return this.append(tx, m.orgId, m.projectId, drafts, m.source);
  }

  /** A batch of reported entries (all or nothing); see the module comment for retries. */
  async ingestReported(p: Principal, project: ProjectRecord, body: { request_id?: string; entries: ReportedEntryInput[] }): Promise<IngestAnswer> {
    const requester = principalRef(p);
    const requestId = body.request_id;
    if (requestId !== undefined) {
      const first = await this.control.receipts.findRequest(p.orgId, requestId);
      if (first) return replay(first, requester);
    }
    const reportedBy = credentialRef(p);
    const drafts = body.entries.map((e, i): Draft => {
      let occurredAt: string;
      try {
        occurredAt = nanoTimestamp(e.occurred_at);
      } catch {
        throw invalidRequest(`entries[${i}].occurred_at must be an RFC 3339 timestamp with a time zone`, { index: i, field: 'occurred_at' });
      }
      return {
        orgId: p.orgId,
        projectId: project.id,
        actionId: e.action_id,
        state: e.state,
        authority: 'RECEIPT_AUTHORITY_REPORTED',
        requesterPrincipal: e.requester_principal ?? null,
        approverPrincipal: null,
        reportedBy,
        effectClass: e.effect_class,
        destructive: e.destructive ?? false,
        policyId: e.policy_id ?? null,
        policyVersion: e.policy_version ?? null,
        occurredAt,
        subjectKind: '',
        subjectId: '',
        runId: e.run_id?.toLowerCase() ?? null,
        traceId: e.trace_id?.toLowerCase() ?? null,
        spanId: e.span_id?.toLowerCase() ?? null,
        tool: e.tool ?? null,
        purpose: e.purpose ?? null,
        authorityEdgeId: e.authority_edge_id ?? null,
        entryId: e.entry_id ?? null,
      };
    });
    try {
      return await this.control.transaction(async (tx) => {
        const entries = await this.append(tx, p.orgId, project.id, drafts, 'receipt');
        const answer: IngestAnswer = {
          project_id: project.id,
          ...(requestId !== undefined ? { request_id: requestId } : {}),
          accepted: entries.filter((e) => !e.duplicate).length,
          duplicates: entries.filter((e) => e.duplicate).length,
          entries,
        };
        if (requestId !== undefined) {
          const stored = { orgId: p.orgId, requestId, principal: requester, response: JSON.stringify(answer), createdAt: this.clock.now().toISOString() };
          if (!(await tx.receipts.insertRequest(stored))) throw new RequestTaken();
        }
        return answer;
      });
    } catch (e) {
      // A concurrent batch with the same request id committed first: nothing of this one stays.
      if (e instanceof RequestTaken) return replay((await this.control.receipts.findRequest(p.orgId, requestId!))!, requester);
      throw e;
    }
  }

  /**
   * Checks, links and folds, under the chain head's lock: each entry against the action's entries so
   * far (stored and earlier in the batch). Returns one result per draft, in order.
   */
  private async append(tx: ControlStores, orgId: string, projectId: string, drafts: Draft[], source: string): Promise<AppendedEntry[]> {
    const at = nanoTimestamp(this.clock.now());
    let head = await tx.receipts.lockChain(orgId, projectId, ACTIONS_CHAIN_ID, at);
    const byAction = group(await tx.receipts.entriesOf(projectId, [...new Set(drafts.map((d) => d.actionId))]));
    const fresh: EntryRecord[] = [];
    const results: AppendedEntry[] = [];
    for (const [index, d] of drafts.entries()) {
      const so = byAction.get(d.actionId) ?? [];
      const result = (e: EntryRecord, duplicate: boolean) => results.push({ index, action_id: e.actionId, seq: e.seq, chain_seq: e.chainSeq, entry_sha256: e.entrySha256, duplicate });
      const same = d.entryId !== null ? so.find((e) => e.entryId === d.entryId) : undefined;
      if (same) {
        if (fresh.includes(same)) throw invalidRequest(`entries[${index}].entry_id repeats an entry_id of this batch in action ${d.actionId}`, { index, field: 'entry_id' });
        if (!sameContent(same, d)) throw conflict(`entries[${index}]: entry_id ${d.entryId} of action ${d.actionId} is already stored with other content`);
        result(same, true);
        continue;
      }
      try {
        checkAppend(so, d);
      } catch (err) {
        if (err instanceof ReceiptRuleError) throw invalidRequest(`entries[${index}].${err.field}: ${err.message}`, { index, field: err.field });
        throw err;
      }
      if (so.length >= MAX_ENTRIES_PER_ACTION)
        throw invalidRequest(`entries[${index}]: action ${d.actionId} has ${MAX_ENTRIES_PER_ACTION} entries, the most one action holds`, { index, field: 'action_id' });
      if (d.authorityEdgeId !== null && !(await this.edges.ofProject(tx, projectId, d.authorityEdgeId)))
        throw invalidRequest(`entries[${index}].authority_edge_id names no authority edge of this project`, { index, field: 'authority_edge_id' });
      const seq = (so[so.length - 1]?.seq ?? 0) + 1;
      const e = link({ ...d, id: this.ids.uuid(), seq, recordedAt: at, chainId: ACTIONS_CHAIN_ID }, head.size, head.lastEntrySha256);
      head = { size: head.size + 1, lastEntrySha256: e.entrySha256 };
      byAction.set(d.actionId, [...so, e]);
      fresh.push(e);
      result(e, false);
    }
    if (fresh.length === 0) return results;
    await tx.receipts.insertEntries(fresh);
    await tx.receipts.setChainHead(projectId, ACTIONS_CHAIN_ID, head);
    for (const actionId of new Set(fresh.map((e) => e.actionId))) await tx.receipts.putReceipt(receiptRecord(byAction.get(actionId)!, at));
    for (const e of fresh)
      if (e.state === 'RECEIPT_STATE_AUTHORIZED')
        await this.edges.exercise(tx, {
          orgId,
          projectId,
          edgeId: e.authorityEdgeId,
          principal: e.approverPrincipal ?? e.requesterPrincipal ?? e.reportedBy ?? '',
          tool: e.tool,
          purpose: e.purpose,
          actionId: e.actionId,
          sourceKind: source,
          sourceId: e.actionId,
          at,
        });
    return results;
  }

  list(f: ReceiptFilter, opts: { after?: { occurredAt: string; actionId: string }; limit: number }) {
    return this.control.receipts.listReceipts(f, opts);
  }

  /** The receipt holding the chain's newest entry among those matching (platform order, not client time). */
  latestInChain(f: ReceiptFilter) {
    return this.control.receipts.latestInChain(f);
  }

  async get(projectId: string, actionId: string): Promise<{ receipt: ReceiptRecord; entries: EntryRecord[] }> {
    const receipt = await this.control.receipts.findReceipt(projectId, actionId);
    if (!receipt) throw notFound('action receipt');
    return { receipt, entries: await this.control.receipts.entriesOf(projectId, [actionId]) };
  }

  /** The receipts of one agent run (newest first); more than MAX_RUN_RECEIPTS is refused, never cut. */
  async ofRun(projectId: string, runId: string): Promise<ReceiptRecord[]> {
    const rows = await this.control.receipts.listReceipts({ projectId, runId: runId.toLowerCase() }, { limit: MAX_RUN_RECEIPTS });
    if (rows.length > MAX_RUN_RECEIPTS)
      throw tooLarge(`this run has more than ${MAX_RUN_RECEIPTS} action receipts; list them with GET /action-receipts?run_id=`, { limit: MAX_RUN_RECEIPTS });
    return rows;
  }
}

/** The first answer to a request id, to the principal that sent it; anyone else learns nothing of it. */
function replay(first: IngestRequestRecord, principal: string): IngestAnswer {
  if (first.principal !== principal) throw conflict('request_id is already used');
  return JSON.parse(first.response) as IngestAnswer;
}
