/** Schemas of receipt-chain checkpoints, signed tree heads, Merkle proofs and the entry export (docs/receipt-chains.md). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery } from '../../http/pagination.js';
import { ProjectSelectorQuery } from '../../http/schemas.js';
import { CHECKPOINT_SCHEMA, TREE_HEAD_SCHEMA } from './artifacts.js';
import { ARTIFACT_LIMIT, ENTRY_LIMIT } from './service.js';

const MAX_INDEX = Number.MAX_SAFE_INTEGER;
const Hex = (description: string) => Type.String({ pattern: '^[0-9a-f]{64}$', description });
const Count = (description: string, minimum = 0) => Type.Integer({ minimum, maximum: MAX_INDEX, description });

export const ChainParams = Type.Object(
  { chainId: Type.String({ minLength: 1, maxLength: 200, description: "the chain id; a project's chain of action receipts is `actions`" }) },
  { additionalProperties: false },
);
export const ArtifactParams = Type.Object(
  { ...ChainParams.properties, id: Type.String({ minLength: 1, maxLength: 200, description: 'the checkpoint or tree head id' }) },
  { additionalProperties: false },
);

export const ArtifactListQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    cursor: PageQuery.cursor,
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: `default ${ARTIFACT_LIMIT.default}, at most ${ARTIFACT_LIMIT.max}; 0 is refused` })),
  },
  { additionalProperties: false },
);

export const InclusionQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    seq: Count('the entry (leaf index, from 0)'),
    tree_size: Count('the size of the tree the entry is proved in: above seq, at most the chain size', 1),
  },
  { additionalProperties: false },
);

export const ConsistencyQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    first: Count('the earlier tree size (at least 1)', 1),
    second: Count('the later tree size: at least first, at most the chain size', 1),
  },
  { additionalProperties: false },
);

export const EntriesQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    from_seq: Type.Optional(Count('the first entry to return (default 0); at most the chain size')),
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: `default ${ENTRY_LIMIT.default}, at most ${ENTRY_LIMIT.max}; 0 is refused` })),
  },
  { additionalProperties: false },
);

const Scope = Type.Object(
  { environment: Type.String({ description: "empty: a project's chain spans all its environments" }), org_id: Type.String(), project_id: Type.String() },
  { additionalProperties: false },
);

const Signed = {
  id: Type.String(),
  canonical_form: Type.String({ description: 'the exact signed bytes (RFC 8785 JSON, UTF-8); verify against this string, not a re-serialization' }),
  signature: Type.String({ description: 'unpadded base64url Ed25519 signature (64 bytes) over ASCII(domain) || 0x00 || SHA-256(canonical_form)' }),
  signature_alg: Type.String({ description: '`EdDSA`' }),
  signing_key_id: Type.String({ description: 'the `kid` of the key in /.well-known/svc-signing-keys.json' }),
  generated_at: Type.String({ description: 'UTC RFC 3339 with nine fractional digits' }),
  chain_id: Type.String(),
  scope: Scope,
};

export const CheckpointView = Type.Object(
  {
    ...Signed,
    schema: Type.Literal(CHECKPOINT_SCHEMA),
    seq: Count('the last covered entry (42 entries checkpoint at 41)'),
    entry_sha256: Hex('digest of the last covered entry'),
    checkpoint_sha256: Hex('SHA-256 of canonical_form'),
  },
  { description: 'a signed receipt-chain checkpoint (signing domain svc.receipt-checkpoint.signature.v1)' },
);

export const TreeHeadView = Type.Object(
  {
    ...Signed,
    schema: Type.Literal(TREE_HEAD_SCHEMA),
    tree_size: Count('number of chain entries in the tree'),
    root_sha256: Hex('RFC 6962 Merkle tree hash over the first tree_size entries (leaf = the entry canonical bytes)'),
    tree_head_sha256: Hex('SHA-256 of canonical_form'),
  },
  { description: 'a signed RFC 6962 tree head of a receipt chain (signing domain svc.receipt-tree-head.signature.v1)' },
);

export const CheckpointList = Type.Object({ checkpoints: Type.Array(CheckpointView), next_cursor: NextCursorField });
export const TreeHeadList = Type.Object({ tree_heads: Type.Array(TreeHeadView), next_cursor: NextCursorField });

export const InclusionProofView = Type.Object({
  chain_id: Type.String(),
  seq: Count('the proved entry'),
  tree_size: Count('the tree it is proved in'),
  entry_sha256: Hex('digest of the entry'),
  leaf_hash: Hex('SHA-256(0x00 || the entry canonical bytes)'),
  audit_path: Type.Array(Hex('node hash'), { description: 'RFC 6962 PATH, leaf side first' }),
  root_sha256: Hex('the tree hash of the first tree_size entries; compare with a signed tree head of that size'),
});

export const ConsistencyProofView = Type.Object({
  chain_id: Type.String(),
  first: Count('earlier tree size'),
  second: Count('later tree size'),
  first_root_sha256: Hex('tree hash of the first `first` entries'),
  second_root_sha256: Hex('tree hash of the first `second` entries'),
  proof: Type.Array(Hex('node hash'), { description: 'RFC 6962 PROOF(first, D[second]); empty when first equals second' }),
});

export const EntryView = Type.Object({
  seq: Count('position in the chain, from 0'),
  canonical_form: Type.String({ description: 'the entry bytes that are hashed (RFC 8785 JSON), including prev_entry_sha256' }),
  entry_sha256: Hex('SHA-256 of canonical_form'),
  prev_entry_sha256: Type.String({ description: "the previous entry's digest ('' for seq 0)" }),
  authority: Type.String({ description: 'RECEIPT_AUTHORITY_MEDIATED or RECEIPT_AUTHORITY_REPORTED' }),
});

export const EntriesView = Type.Object({
  chain_id: Type.String(),
  entry_count: Count('entries in the chain now'),
  entries: Type.Array(EntryView),
  next_from_seq: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'send as from_seq to continue; null at the end' }),
});
