/** Kysely adapter of signed receipt-chain artifacts and Merkle leaf hashes (both dialects). */
import type { ArtifactKind, ArtifactListQuery, ChainArtifactRecord, ChainArtifactStore, LeafRecord } from '../../domains/chain-proofs/store.js';
import type { ControlDb } from './open.js';
import type { ChainArtifactsTable } from './schema.js';

const toRecord = (r: ChainArtifactsTable): ChainArtifactRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  chainId: r.chain_id,
  kind: r.kind as ArtifactKind,
  position: Number(r.position),
  canonicalForm: r.canonical_form,
  sha256: r.sha256,
  signature: r.signature,
  signingKeyId: r.signing_key_id,
  generatedAt: r.generated_at,
  createdAt: r.created_at,
  createdBy: { userId: r.created_by_user_id, apiKeyId: r.created_by_api_key_id },
});

/** Rows per insert statement (SQLite binds at most 32766 variables; five per row). */
const BATCH = 500;

export class KyselyChainArtifactStore implements ChainArtifactStore {
  constructor(private readonly db: ControlDb) {}

  async insert(r: ChainArtifactRecord) {
    await this.db
      .insertInto('chain_artifacts')
      .values({
        id: r.id,
        org_id: r.orgId,
        project_id: r.projectId,
        chain_id: r.chainId,
        kind: r.kind,
        position: r.position,
        canonical_form: r.canonicalForm,
        sha256: r.sha256,
        signature: r.signature,
        signing_key_id: r.signingKeyId,
        generated_at: r.generatedAt,
        created_at: r.createdAt,
        created_by_user_id: r.createdBy.userId,
        created_by_api_key_id: r.createdBy.apiKeyId,
      })
      .execute();
  }

  async find(projectId: string, chainId: string, kind: ArtifactKind, id: string) {
    const r = await this.db
      .selectFrom('chain_artifacts')
      .selectAll()
      .where('id', '=', id)
      .where('project_id', '=', projectId)
      .where('chain_id', '=', chainId)
      .where('kind', '=', kind)
      .executeTakeFirst();
    return r && toRecord(r);
  }

  async list(q: ArtifactListQuery) {
    let query = this.db
      .selectFrom('chain_artifacts')
      .selectAll()
      .where('project_id', '=', q.projectId)
      .where('chain_id', '=', q.chainId)
      .where('kind', '=', q.kind);
    if (q.after) {
      const { createdAt, id } = q.after;
      query = query.where((eb) => eb.or([eb('created_at', '<', createdAt), eb.and([eb('created_at', '=', createdAt), eb('id', '<', id)])]));
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(q.limit + 1).execute();
    return rows.map(toRecord);
  }

  async lastLeaf(projectId: string, chainId: string) {
    const r = await this.db
      .selectFrom('chain_leaf_hashes')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('chain_id', '=', chainId)
      .orderBy('seq', 'desc')
      .limit(1)
      .executeTakeFirst();
    // Leaves are stored from seq 0 without gaps, so the last seq tells the count.
    if (!r) return { count: 0, last: undefined };
    const last = { seq: Number(r.seq), entrySha256: r.entry_sha256, leafHash: r.leaf_hash };
    return { count: last.seq + 1, last };
  }

  async appendLeaves(projectId: string, chainId: string, leaves: LeafRecord[]) {
    for (let i = 0; i < leaves.length; i += BATCH) {
      const values = leaves
        .slice(i, i + BATCH)
        .map((l) => ({ project_id: projectId, chain_id: chainId, seq: l.seq, entry_sha256: l.entrySha256, leaf_hash: l.leafHash }));
      await this.db
        .insertInto('chain_leaf_hashes')
        .values(values)
        .onConflict((oc) => oc.columns(['project_id', 'chain_id', 'seq']).doNothing())
        .execute();
    }
  }

  async leafHashes(projectId: string, chainId: string, toSeq: number) {
    const rows = await this.db
      .selectFrom('chain_leaf_hashes')
      .select('leaf_hash')
      .where('project_id', '=', projectId)
      .where('chain_id', '=', chainId)
      .where('seq', '<', toSeq)
      .orderBy('seq', 'asc')
      .execute();
    return rows.map((r) => r.leaf_hash);
  }
}
