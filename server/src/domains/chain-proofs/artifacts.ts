/**
 * The two signed artifacts over a receipt chain (docs/receipt-chains.md, docs/signatures.md):
 *
 * - the checkpoint (`svc.receipt-checkpoint.v1`, domain `svc.receipt-checkpoint.signature.v1`): the last
 *   covered entry's seq and digest, exactly the members the byte contract lists;
 * - our signed tree head (`svc.receipt-tree-head.v1`, domain `svc.receipt-tree-head.signature.v1`): the
 *   RFC 6962 tree size and root over the chain, so anyone holding one can check later trees extend it.
 *
 * Both are RFC 8785 canonical JSON with every member present; the key id and algorithm are signed too.
 */
import { canonicalJson, SIGNING_DOMAINS } from '../signing/byte-contract.js';
import { SIGNATURE_ALG } from '../signing/signer.js';
import type { ArtifactKind } from './store.js';

export const CHECKPOINT_SCHEMA = 'svc.receipt-checkpoint.v1';
export const TREE_HEAD_SCHEMA = 'svc.receipt-tree-head.v1';

export const ARTIFACT = {
  checkpoint: { schema: CHECKPOINT_SCHEMA, domain: SIGNING_DOMAINS.checkpoint, digestField: 'checkpoint_sha256' },
  tree_head: { schema: TREE_HEAD_SCHEMA, domain: SIGNING_DOMAINS.treeHead, digestField: 'tree_head_sha256' },
} as const satisfies Record<ArtifactKind, { schema: string; domain: string; digestField: string }>;

/**
 * The scope inside the signed bytes. A project's chain spans all its environments, so `environment` is
 * the empty string (the byte contract's rule for an empty optional identifier).
 */
export interface ArtifactScope {
  environment: string;
  org_id: string;
  project_id: string;
}

export interface CheckpointMembers {
  chain_id: string;
  entry_sha256: string;
  generated_at: string;
  schema: typeof CHECKPOINT_SCHEMA;
  scope: ArtifactScope;
  seq: number;
  signature_alg: string;
  signing_key_id: string;
}

export interface TreeHeadMembers {
  chain_id: string;
  generated_at: string;
  root_sha256: string;
  schema: typeof TREE_HEAD_SCHEMA;
  scope: ArtifactScope;
  signature_alg: string;
  signing_key_id: string;
  tree_size: number;
}

interface Common {
  chainId: string;
  generatedAt: string;
  scope: ArtifactScope;
  kid: string;
}

export function checkpointMembers(c: Common & { seq: number; entrySha256: string }): CheckpointMembers {
  return {
    chain_id: c.chainId,
    entry_sha256: c.entrySha256,
    generated_at: c.generatedAt,
    schema: CHECKPOINT_SCHEMA,
    scope: c.scope,
    seq: c.seq,
    signature_alg: SIGNATURE_ALG,
    signing_key_id: c.kid,
  };
}

export function treeHeadMembers(c: Common & { treeSize: number; rootSha256: string }): TreeHeadMembers {
  return {
    chain_id: c.chainId,
    generated_at: c.generatedAt,
    root_sha256: c.rootSha256,
    schema: TREE_HEAD_SCHEMA,
    scope: c.scope,
    signature_alg: SIGNATURE_ALG,
    signing_key_id: c.kid,
    tree_size: c.treeSize,
  };
}

/** The signed bytes of an artifact's members. */
export const canonicalForm = (members: CheckpointMembers | TreeHeadMembers): string => canonicalJson(members);
