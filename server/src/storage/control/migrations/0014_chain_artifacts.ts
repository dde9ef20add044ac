/** Migration 0014_chain_artifacts (append only: never edit once shipped): signed receipt-chain checkpoints and tree heads, and the chain's Merkle leaf hashes. */
import type { Kysely, Migration } from 'kysely';

export const migration: Migration = {
  async up(db: Kysely<any>) {
    // Signed artifacts over a receipt chain: `kind` checkpoint (position = seq of the last covered
    // entry) or tree_head (position = tree size). The canonical form is kept exactly as signed.
    await db.schema
      .createTable('chain_artifacts')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('org_id', 'text', (c) => c.notNull())
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('chain_id', 'text', (c) => c.notNull())
      .addColumn('kind', 'text', (c) => c.notNull())
      .addColumn('position', 'bigint', (c) => c.notNull())
      .addColumn('canonical_form', 'text', (c) => c.notNull())
      .addColumn('sha256', 'text', (c) => c.notNull())
      .addColumn('signature', 'text', (c) => c.notNull())
      .addColumn('signing_key_id', 'text', (c) => c.notNull())
      .addColumn('generated_at', 'text', (c) => c.notNull())
      .addColumn('created_at', 'text', (c) => c.notNull())
      .addColumn('created_by_user_id', 'text')
      .addColumn('created_by_api_key_id', 'text')
      .execute();
    await db.schema.createIndex('chain_artifacts_list').on('chain_artifacts').columns(['project_id', 'chain_id', 'kind', 'created_at', 'id']).execute();
    // The RFC 6962 leaf hash of each chain entry (hex), with the entry's digest to notice a rewrite
    // under the cache. Append only; proofs read these instead of rehashing the canonical bytes.
    await db.schema
      .createTable('chain_leaf_hashes')
      .addColumn('project_id', 'text', (c) => c.notNull())
      .addColumn('chain_id', 'text', (c) => c.notNull())
      .addColumn('seq', 'bigint', (c) => c.notNull())
      .addColumn('entry_sha256', 'text', (c) => c.notNull())
      .addColumn('leaf_hash', 'text', (c) => c.notNull())
      .addPrimaryKeyConstraint('chain_leaf_hashes_pk', ['project_id', 'chain_id', 'seq'])
      .execute();
  },
};
