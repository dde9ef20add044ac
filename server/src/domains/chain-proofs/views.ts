/** The API views of signed chain artifacts: the signed members (read back from the canonical form), the canonical form, its digest and the signature. */
import type { Static } from '@sinclair/typebox';
import type { ChainEntry } from '../receipts/chain-source.js';
import { ARTIFACT } from './artifacts.js';
import type { CheckpointView, TreeHeadView } from './schemas.js';
import type { ChainArtifactRecord } from './store.js';

export type ArtifactView = Static<typeof CheckpointView> | Static<typeof TreeHeadView>;

/** The members are read from the stored canonical form, so the view shows exactly what was signed. */
export function artifactView<V extends ArtifactView = ArtifactView>(r: ChainArtifactRecord): V {
  const members = JSON.parse(r.canonicalForm) as Record<string, unknown>;
  return { id: r.id, ...members, canonical_form: r.canonicalForm, [ARTIFACT[r.kind].digestField]: r.sha256, signature: r.signature } as V;
}

export const entryView = (e: ChainEntry) => ({
  seq: e.seq,
  canonical_form: e.canonical,
  entry_sha256: e.entrySha256,
  prev_entry_sha256: e.prevEntrySha256,
  authority: e.authority,
});
