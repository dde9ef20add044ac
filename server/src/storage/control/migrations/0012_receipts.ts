/**
 * Migration 0012_receipts (append only: never edit once shipped): the receipt chain, folded receipts,
 * ingest request ids, and the columns reported entries carry. Entries stored before it (containment
 * approvals) are linked into their project's chain in the order they were recorded, and folded.
 */
import type { Kysely, Migration } from 'kysely';
import { link } from '../../../domains/receipts/chain.js';
import { receiptRecord } from '../../../domains/receipts/fold.js';
import { ACTIONS_CHAIN_ID } from '../../../domains/receipts/model.js';
import type { EntryRecord } from '../../../domains/receipts/store.js';
import { nanoTimestamp } from '../../../domains/signing/byte-contract.js';
import { entryRow, receiptRow, toEntry } from '../receipts-store.js';
import type { ReceiptEntriesTable } from '../schema.js';

const NEW_ENTRY_COLUMNS = [
  'chain_id',
  'prev_entry_sha256',
  'entry_sha256',
  'canonical',
  'reported_by',
  'run_id',
  'trace_id',
  'span_id',
  'tool',
  'purpose',
  'authority_edge_id',
  'entry_id',
] as const;

export const migration: Migration = {
  async up(db: Kysely<any>) {
    for (const c of NEW_ENTRY_COLUMNS) await db.schema.alterTable('receipt_entries').addColumn(c, 'text').execute();
    await db.schema.alterTable('receipt_entries').addColumn('chain_seq', 'integer').execute();

    await db.schema
      .createTable('receipt_chains')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('chain_id', 'text', (c) => c.notNull())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('size', 'integer', (c) => c.notNull())
      .addColumn('last_entry_sha256', 'text', (c) => c.notNull())
      .addColumn('opened_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('receipt_chains_pk', ['project_id', 'chain_id'])
      .execute();
    await db.schema
      .createTable('action_receipts')
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('action_id', 'text', (c) => c.notNull())
      .addColumn('chain_id', 'text', (c) => c.notNull())
      .addColumn('authority', 'text', (c) => c.notNull())
      .addColumn('final_state', 'text', (c) => c.notNull())
      .addColumn('remediation', 'text')
      .addColumn('requester_principal', 'text')
      .addColumn('conflicting_requester_principals', 'text', (c) => c.notNull())
      .addColumn('effect_class', 'text', (c) => c.notNull())
      .addColumn('destructive', 'integer', (c) => c.notNull())
      .addColumn('approver_principal', 'text')
      .addColumn('approved_at', 'text')
      .addColumn('policy_id', 'text')
      .addColumn('policy_version', 'text')
      .addColumn('conflicting_policies', 'text', (c) => c.notNull())
      .addColumn('malformed_policy_records', 'text', (c) => c.notNull())
      .addColumn('normalizer_version', 'integer', (c) => c.notNull())
      .addColumn('occurred_at', 'text', (c) => c.notNull())
      .addColumn('run_id', 'text')
      .addColumn('entry_count', 'integer', (c) => c.notNull())
      .addColumn('last_chain_seq', 'integer', (c) => c.notNull())
      .addColumn('updated_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('action_receipts_pk', ['project_id', 'action_id'])
      .execute();
    await db.schema.createIndex('action_receipts_list').on('action_receipts').columns(['project_id', 'occurred_at', 'action_id']).execute();
    await db.schema.createIndex('action_receipts_run').on('action_receipts').columns(['project_id', 'run_id']).execute();
    await db.schema.createIndex('action_receipts_chain').on('action_receipts').columns(['project_id', 'chain_id', 'last_chain_seq']).execute();
    await db.schema
      .createTable('receipt_ingest_requests')
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('request_id', 'text', (c) => c.notNull())
      .addColumn('principal', 'text', (c) => c.notNull())
      .addColumn('response', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('receipt_ingest_requests_pk', ['org_id', 'request_id'])
      .execute();
    await db.schema.createIndex('authority_edges_list').on('authority_edges').columns(['org_id', 'project_id', 'created_at']).execute();
    await db.schema.createIndex('authority_edges_match').on('authority_edges').columns(['project_id', 'principal', 'tool', 'purpose']).execute();

    await upgradeStoredEntries(db);
    await db.schema.createIndex('receipt_entries_chain').on('receipt_entries').columns(['project_id', 'chain_id', 'chain_seq']).unique().execute();
    await db.schema.createIndex('receipt_entries_client_id').on('receipt_entries').columns(['project_id', 'action_id', 'entry_id']).unique().execute();
  },
};

/**
 * Entries stored before the chain existed (exported for its test): renames the approval's state as the
 * receipt vocabulary spells it, links them in recorded order (then action and seq), and folds their actions.
 */
export async function upgradeStoredEntries(db: Kysely<any>) {
  await db.updateTable('receipt_entries').set({ state: 'RECEIPT_STATE_AUTHORIZED' }).where('state', '=', 'AUTHORIZED').execute();
  const rows = await db.selectFrom('receipt_entries').selectAll().where('chain_seq', 'is', null).orderBy('project_id').orderBy('recorded_at').orderBy('action_id').orderBy('seq').execute();
  const byProject = new Map<string, EntryRecord[]>();
  for (const r of rows) {
    const e = toEntry({ ...(r as ReceiptEntriesTable), chain_id: ACTIONS_CHAIN_ID, chain_seq: 0, prev_entry_sha256: '', entry_sha256: '', canonical: '' });
    // Times in the chain's form: UTC with nine fractional digits.
    e.occurredAt = nanoTimestamp(e.occurredAt);
    e.recordedAt = nanoTimestamp(e.recordedAt);
    byProject.set(e.projectId, [...(byProject.get(e.projectId) ?? []), e]);
  }
  for (const [projectId, entries] of byProject) {
    let prev = '';
    const linked = entries.map((e, i) => {
      const l = link(e, i, prev);
      prev = l.entrySha256;
      return l;
    });
    for (const l of linked) {
      const { chain_id, chain_seq, prev_entry_sha256, entry_sha256, canonical, occurred_at, recorded_at } = entryRow(l);
      await db.updateTable('receipt_entries').set({ chain_id, chain_seq, prev_entry_sha256, entry_sha256, canonical, occurred_at, recorded_at }).where('id', '=', l.id).execute();
    }
    const last = linked[linked.length - 1];
    await db
      .insertInto('receipt_chains')
      .values({ project_id: projectId, chain_id: ACTIONS_CHAIN_ID, org_id: last.orgId, size: linked.length, last_entry_sha256: prev, opened_at: linked[0].recordedAt })
      .execute();
    const byAction = new Map<string, EntryRecord[]>();
    for (const l of linked) byAction.set(l.actionId, [...(byAction.get(l.actionId) ?? []), l]);
    for (const list of byAction.values()) await db.insertInto('action_receipts').values(receiptRow(receiptRecord(list, last.recordedAt))).execute();
  }
}
