/**
 * Offline verification of a signed artifact file (a bill of materials or a receipt-chain checkpoint, as
 * the service returns them) against a JWK Set file: the artifact kind comes from `schema` inside the
 * canonical form, which names the signing domain and the recorded digest member. No import from the
 * service (see ed25519.ts).
 */
import { type JwkSet, type SignatureFault, verifyArtifactSignature } from './ed25519.js';

/** Artifact schemas, their signing domains and the member that records the digest beside the canonical form. */
export const ARTIFACT_KINDS: Record<string, { kind: string; domain: string; digestField: string }> = {
  'svc.abom.v1': { kind: 'abom', domain: 'svc.abom.signature.v1', digestField: 'manifest_sha256' },
  'svc.receipt-checkpoint.v1': { kind: 'receipt_checkpoint', domain: 'svc.receipt-checkpoint.signature.v1', digestField: 'checkpoint_sha256' },
  'svc.receipt-tree-head.v1': { kind: 'receipt_tree_head', domain: 'svc.receipt-tree-head.signature.v1', digestField: 'tree_head_sha256' },
};

export type ArtifactFault = SignatureFault | 'not_an_artifact' | 'unknown_schema' | 'unsupported_algorithm';

export type ArtifactVerdict =
  | { valid: true; kind: string; schema: string; signing_key_id: string }
  | { valid: false; fault: ArtifactFault; kind?: string; schema?: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A JWK Set document: `{keys: [...]}`; undefined when it is not one. */
export function readJwks(doc: unknown): JwkSet | undefined {
  return isObject(doc) && Array.isArray(doc.keys) ? (doc as unknown as JwkSet) : undefined;
}

export function verifyArtifact(doc: unknown, jwks: JwkSet): ArtifactVerdict {
  if (!isObject(doc) || typeof doc.canonical_form !== 'string' || typeof doc.signature !== 'string') return { valid: false, fault: 'not_an_artifact' };
  let inner: unknown;
  try {
    inner = JSON.parse(doc.canonical_form);
  } catch {
    return { valid: false, fault: 'canonical_form_unreadable' };
  }
  if (!isObject(inner) || typeof inner.schema !== 'string') return { valid: false, fault: 'canonical_form_unreadable' };
  const schema = inner.schema;
  const k = ARTIFACT_KINDS[schema];
  if (!k) return { valid: false, fault: 'unknown_schema', schema };
  if (inner.signature_alg !== 'EdDSA') return { valid: false, fault: 'unsupported_algorithm', kind: k.kind, schema };
  const digest = doc[k.digestField];
  if (typeof digest !== 'string') return { valid: false, fault: 'digest_malformed', kind: k.kind, schema };
  const v = verifyArtifactSignature(doc.canonical_form, digest, doc.signature, k.domain, jwks);
  return v.ok ? { valid: true, kind: k.kind, schema, signing_key_id: v.kid } : { valid: false, fault: v.fault, kind: k.kind, schema };
}
