/** Action receipts over Kysely (SQLite and PostgreSQL): entries (chain links), folded receipts, chain heads, ingest request ids. */
import type { ChainHead, EntryRecord, IngestRequestRecord, ReceiptFilter, ReceiptRecord, ReceiptStore } from '../../domains/receipts/store.js';
import type { ControlDb } from './open.js';
import type { ActionReceiptsTable, ReceiptEntriesTable } from './schema.js';

/** chain_seq is a 32-bit integer column in PostgreSQL: a wider bound is the same as this one. */
const MAX_INT32 = 2_147_483_647;

const list = (text: string): string[] => JSON.parse(text) as string[];

export const toEntry = (r: ReceiptEntriesTable): EntryRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  actionId: r.action_id,
  seq: Number(r.seq),
  state: r.state,
  authority: r.authority as EntryRecord['authority'],
  requesterPrincipal: r.requester_principal,
  approverPrincipal: r.approver_principal,
  reportedBy: r.reported_by,
  effectClass: r.effect_class as EntryRecord['effectClass'],
  destructive: Number(r.destructive) === 1,
  policyId: r.policy_id,
  policyVersion: r.policy_version,
  occurredAt: r.occurred_at,
  recordedAt: r.recorded_at,
  subjectKind: r.subject_kind,
  subjectId: r.subject_id,
  runId: r.run_id,
  traceId: r.trace_id,
  spanId: r.span_id,
  tool: r.tool,
  purpose: r.purpose,
  authorityEdgeId: r.authority_edge_id,
  entryId: r.entry_id,
  chainId: r.chain_id,
  chainSeq: Number(r.chain_seq),
  prevEntrySha256: r.prev_entry_sha256,
  entrySha256: r.entry_sha256,
  canonical: r.canonical,
});

export const entryRow = (e: EntryRecord): ReceiptEntriesTable => ({
  id: e.id,
  org_id: e.orgId,
  project_id: e.projectId,
  action_id: e.actionId,
  seq: e.seq,
  state: e.state,
  authority: e.authority,
  requester_principal: e.requesterPrincipal,
  approver_principal: e.approverPrincipal,
  reported_by: e.reportedBy,
  effect_class: e.effectClass,
  destructive: e.destructive ? 1 : 0,
  policy_id: e.policyId,
  policy_version: e.policyVersion,
  occurred_at: e.occurredAt,
  recorded_at: e.recordedAt,
  subject_kind: e.subjectKind,
  subject_id: e.subjectId,
  run_id: e.runId,
  trace_id: e.traceId,
  span_id: e.spanId,
  tool: e.tool,
  purpose: e.purpose,
  authority_edge_id: e.authorityEdgeId,
  entry_id: e.entryId,
  chain_id: e.chainId,
  chain_seq: e.chainSeq,
  prev_entry_sha256: e.prevEntrySha256,
  entry_sha256: e.entrySha256,
  canonical: e.canonical,
});

export const receiptRow = (r: ReceiptRecord): ActionReceiptsTable => ({
  org_id: r.orgId,
  project_id: r.projectId,
  action_id: r.actionId,
  chain_id: r.chainId,
  authority: r.authority,
  final_state: r.finalState,
  remediation: r.remediation,
  requester_principal: r.requesterPrincipal,
  conflicting_requester_principals: JSON.stringify(r.conflictingRequesterPrincipals),
  effect_class: r.effectClass,
  destructive: r.destructive ? 1 : 0,
  approver_principal: r.approverPrincipal,
  approved_at: r.approvedAt,
  policy_id: r.policyId,
  policy_version: r.policyVersion,
  conflicting_policies: JSON.stringify(r.conflictingPolicies),
  malformed_policy_records: JSON.stringify(r.malformedPolicyRecords),
  normalizer_version: r.normalizerVersion,
  occurred_at: r.occurredAt,
  run_id: r.runId,
  entry_count: r.entryCount,
  last_chain_seq: r.lastChainSeq,
  updated_at: r.updatedAt,
});

const toReceipt = (r: ActionReceiptsTable): ReceiptRecord => ({
  orgId: r.org_id,
  projectId: r.project_id,
  actionId: r.action_id,
  chainId: r.chain_id,
  authority: r.authority as ReceiptRecord['authority'],
  finalState: r.final_state,
  remediation: r.remediation,
  requesterPrincipal: r.requester_principal,
  conflictingRequesterPrincipals: list(r.conflicting_requester_principals),
  effectClass: r.effect_class as ReceiptRecord['effectClass'],
  destructive: Number(r.destructive) === 1,
  approverPrincipal: r.approver_principal,
  approvedAt: r.approved_at,
  policyId: r.policy_id,
  policyVersion: r.policy_version,
  conflictingPolicies: list(r.conflicting_policies),
  malformedPolicyRecords: list(r.malformed_policy_records),
  normalizerVersion: Number(r.normalizer_version),
  occurredAt: r.occurred_at,
  runId: r.run_id,
  entryCount: Number(r.entry_count),
  lastChainSeq: Number(r.last_chain_seq),
  updatedAt: r.updated_at,
});

export class KyselyReceiptStore implements ReceiptStore {
  constructor(
    private readonly db: ControlDb,
    private readonly dialect: 'sqlite' | 'postgres',
  ) {}

  async lockChain(orgId: string, projectId: string, chainId: string, at: string): Promise<ChainHead> {
    await this.db
      .insertInto('receipt_chains')
      .values({ project_id: projectId, chain_id: chainId, org_id: orgId, size: 0, last_entry_sha256: '', opened_at: at })
      .onConflict((oc) => oc.columns(['project_id', 'chain_id']).doNothing())
      .execute();
    // PostgreSQL: the row lock is held to the end of the transaction, so appends to one chain take turns.
    // SQLite: one connection, and a transaction holds it to the end.
    let q = this.db.selectFrom('receipt_chains').select(['size', 'last_entry_sha256']).where('project_id', '=', projectId).where('chain_id', '=', chainId);
    if (this.dialect === 'postgres') q = q.forUpdate();
    const r = await q.executeTakeFirstOrThrow();
    return { size: Number(r.size), lastEntrySha256: r.last_entry_sha256 };
  }

  async setChainHead(projectId: string, chainId: string, head: ChainHead) {
    await this.db
      .updateTable('receipt_chains')
      .set({ size: head.size, last_entry_sha256: head.lastEntrySha256 })
      .where('project_id', '=', projectId)
      .where('chain_id', '=', chainId)
      .execute();
  }

  async chainHead(projectId: string, chainId: string) {
    const r = await this.db.selectFrom('receipt_chains').select(['size', 'last_entry_sha256']).where('project_id', '=', projectId).where('chain_id', '=', chainId).executeTakeFirst();
    return r && { size: Number(r.size), lastEntrySha256: r.last_entry_sha256 };
  }

  async chainEntries(projectId: string, chainId: string, fromSeq: number, toSeq: number, limit?: number) {
    let q = this.db
      .selectFrom('receipt_entries')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('chain_id', '=', chainId)
      .where('chain_seq', '>=', fromSeq)
      .where('chain_seq', '<', Math.min(toSeq, MAX_INT32))
      .orderBy('chain_seq');
    if (limit !== undefined) q = q.limit(limit);
    return (await q.execute()).map(toEntry);
  }

  async insertEntries(entries: EntryRecord[]) {
    // In slices: SQLite binds at most 32766 parameters in one statement (30 columns a row).
    for (let i = 0; i < entries.length; i += 200) await this.db.insertInto('receipt_entries').values(entries.slice(i, i + 200).map(entryRow)).execute();
  }

  async entriesOf(projectId: string, actionIds: string[]) {
    if (actionIds.length === 0) return [];
    const rows = await this.db
      .selectFrom('receipt_entries')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('action_id', 'in', actionIds)
      .orderBy('action_id')
      .orderBy('seq')
      .execute();
    return rows.map(toEntry);
  }

  async putReceipt(r: ReceiptRecord) {
    const { org_id, project_id, action_id, ...rest } = receiptRow(r);
    await this.db
      .insertInto('action_receipts')
      .values({ org_id, project_id, action_id, ...rest })
      .onConflict((oc) => oc.columns(['project_id', 'action_id']).doUpdateSet(rest))
      .execute();
  }

  async findReceipt(projectId: string, actionId: string) {
    const r = await this.db.selectFrom('action_receipts').selectAll().where('project_id', '=', projectId).where('action_id', '=', actionId).executeTakeFirst();
    return r && toReceipt(r);
  }

  private filtered(f: ReceiptFilter) {
    let q = this.db.selectFrom('action_receipts').selectAll().where('project_id', '=', f.projectId);
    if (f.authorities?.length) q = q.where('authority', 'in', f.authorities);
    if (f.finalStates?.length) q = q.where('final_state', 'in', f.finalStates);
    if (f.normalizerVersions?.length) q = q.where('normalizer_version', 'in', f.normalizerVersions);
    if (f.chainId !== undefined) q = q.where('chain_id', '=', f.chainId);
    if (f.actionId !== undefined) q = q.where('action_id', '=', f.actionId);
    if (f.runId !== undefined) q = q.where('run_id', '=', f.runId);
    return q;
  }

  async listReceipts(f: ReceiptFilter, opts: { after?: { occurredAt: string; actionId: string }; limit: number }) {
    let q = this.filtered(f);
    const a = opts.after;
    if (a) q = q.where((eb) => eb.or([eb('occurred_at', '<', a.occurredAt), eb.and([eb('occurred_at', '=', a.occurredAt), eb('action_id', '<', a.actionId)])]));
    const rows = await q.orderBy('occurred_at', 'desc').orderBy('action_id', 'desc').limit(opts.limit + 1).execute();
    return rows.map(toReceipt);
  }

  async latestInChain(f: ReceiptFilter) {
    const r = await this.filtered(f).orderBy('last_chain_seq', 'desc').limit(1).executeTakeFirst();
    return r && toReceipt(r);
  }

  async findRequest(orgId: string, requestId: string) {
    const r = await this.db.selectFrom('receipt_ingest_requests').selectAll().where('org_id', '=', orgId).where('request_id', '=', requestId).executeTakeFirst();
    return r && { orgId: r.org_id, requestId: r.request_id, principal: r.principal, response: r.response, createdAt: r.created_at };
  }

  async insertRequest(r: IngestRequestRecord) {
    // A concurrent holder of the id makes this wait for its transaction, then insert nothing.
    const res = await this.db
      .insertInto('receipt_ingest_requests')
      .values({ org_id: r.orgId, request_id: r.requestId, principal: r.principal, response: r.response, created_at: r.createdAt })
      .onConflict((oc) => oc.columns(['org_id', 'request_id']).doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) === 1;
  }
}
