/**
 * Offline checks of a receipt chain and of what was signed over it (docs/receipt-chains.md), with no
 * server and no import from the service's code:
 *
 * - an exported chain: each entry's digest is the SHA-256 of its canonical bytes, seq counts from 0,
 *   and each entry names the previous entry's digest (inside its canonical bytes too);
 * - a kept checkpoint against the chain: the chain still reaches its `seq` (else it was cut) and has the
 *   same digest there (else it was rewritten);
 * - a kept signed tree head against the chain: the RFC 6962 root over the first `tree_size` entries;
 * - two tree heads and a consistency proof, or a tree head and an inclusion proof.
 *
 * Signatures are checked only when a JWK Set is given. Members are always read from `canonical_form`
 * (the signed bytes), never from the JSON around it.
 */
import { createHash } from 'node:crypto';
import { type Jwks, verifyArtifactSignature } from './ed25519.js';
import { leafHash, treeRoot, verifyConsistency, verifyInclusion } from './merkle.js';

export const CHECKPOINT = { schema: 'svc.receipt-checkpoint.v1', domain: 'svc.receipt-checkpoint.signature.v1', digest: 'checkpoint_sha256' } as const;
export const TREE_HEAD = { schema: 'svc.receipt-tree-head.v1', domain: 'svc.receipt-tree-head.signature.v1', digest: 'tree_head_sha256' } as const;
export const EXPORT_SCHEMA = 'svc.receipt-chain-export.v1';

export interface ExportedEntry {
  seq: number;
  canonical_form: string;
  entry_sha256: string;
  prev_entry_sha256: string;
  authority?: string;
}

export interface ChainExport {
  schema?: string;
  chain_id: string;
  project_id?: string;
  entries: ExportedEntry[];
}

/** One check's outcome: `fault` is a short lowercase code when it failed. */
export interface Finding {
  check: string;
  ok: boolean;
  fault?: string;
  message: string;
}

export interface ChainResult {
  valid: boolean;
  entry_count: number;
  first_invalid_seq: number | null;
  last_entry_sha256: string;
  detail: string;
}

const sha256hex = (s: string) => createHash('sha256').update(Buffer.from(s, 'utf8')).digest('hex');
const HEX64 = /^[0-9a-f]{64}$/;
const ok = (check: string, message: string): Finding => ({ check, ok: true, message });
const bad = (check: string, fault: string, message: string): Finding => ({ check, ok: false, fault, message });

/** Reads a parsed export file; a message saying what is wrong otherwise. */
export function asChainExport(v: unknown): ChainExport | string {
  if (!v || typeof v !== 'object') return 'the chain file is not a JSON object';
  const c = v as Partial<ChainExport>;
  if (typeof c.chain_id !== 'string') return 'the chain file has no chain_id';
  if (!Array.isArray(c.entries)) return 'the chain file has no entries array';
  for (const [i, e] of c.entries.entries()) {
    if (!e || typeof e !== 'object' || typeof e.canonical_form !== 'string' || typeof e.entry_sha256 !== 'string' || typeof e.prev_entry_sha256 !== 'string' || !Number.isSafeInteger(e.seq))
      return `entry ${i} of the chain file lacks seq, canonical_form, entry_sha256 or prev_entry_sha256`;
  }
  return c as ChainExport;
}

/** Recomputes every digest and link of the exported entries (the same faults the service's verify names). */
export function verifyChainEntries(entries: readonly ExportedEntry[]): ChainResult {
  let prev = '';
  for (const [i, e] of entries.entries()) {
    const fault = entryFault(e, i, prev);
    if (fault) return { valid: false, entry_count: entries.length, first_invalid_seq: i, last_entry_sha256: entries.at(-1)?.entry_sha256 ?? '', detail: fault };
    prev = e.entry_sha256;
  }
  return { valid: true, entry_count: entries.length, first_invalid_seq: null, last_entry_sha256: prev, detail: '' };
}

function entryFault(e: ExportedEntry, seq: number, prev: string): string | null {
  if (e.seq !== seq) return 'sequence_gap';
  if (sha256hex(e.canonical_form) !== e.entry_sha256) return 'digest_mismatch';
  let inner: unknown;
  try {
    inner = (JSON.parse(e.canonical_form) as { prev_entry_sha256?: unknown }).prev_entry_sha256;
  } catch {
    return 'canonical_form_unreadable';
  }
  if (e.prev_entry_sha256 !== prev || inner !== prev) return 'broken_link';
  return null;
}

type Kind = typeof CHECKPOINT | typeof TREE_HEAD;

interface Signed {
  canonical_form?: unknown;
  signature?: unknown;
  [digest: string]: unknown;
}

/**
 * The signed members of an artifact file, after its signature check (when keys are given). Returns the
 * findings so far and the members, or undefined members when the artifact cannot be read.
 */
function readArtifact(kind: Kind, label: string, file: unknown, jwks: Jwks | undefined): { findings: Finding[]; members?: Record<string, unknown> } {
  const a = (file ?? {}) as Signed;
  if (typeof a.canonical_form !== 'string') return { findings: [bad(label, 'canonical_form_unreadable', `${label} has no canonical_form`)] };
  let members: Record<string, unknown>;
  try {
    members = JSON.parse(a.canonical_form) as Record<string, unknown>;
  } catch {
    return { findings: [bad(label, 'canonical_form_unreadable', `${label} canonical_form is not JSON`)] };
  }
  if (!members || typeof members !== 'object' || members.schema !== kind.schema)
    return { findings: [bad(label, 'wrong_schema', `${label} is not a ${kind.schema} artifact`)] };
  const findings: Finding[] = [];
  if (jwks) {
    const s = verifyArtifactSignature(a.canonical_form, String(a[kind.digest] ?? ''), String(a.signature ?? ''), kind.domain, jwks);
    findings.push(s.ok ? ok(`${label} signature`, `signed by key ${s.kid}`) : bad(`${label} signature`, s.fault, `${label} signature does not verify: ${s.fault.replace(/_/g, ' ')}`));
  } else if (sha256hex(a.canonical_form) !== a[kind.digest]) {
    findings.push(bad(`${label} digest`, 'digest_mismatch', `${kind.digest} is not the digest of canonical_form`));
  } else {
    findings.push(ok(`${label} signature`, 'not checked: no key set given (--keys)'));
  }
  return { findings, members };
}

/** A kept checkpoint against an exported chain: the chain must still reach `seq` with the same digest there. */
export function checkCheckpoint(file: unknown, chain: ChainExport, jwks?: Jwks, label = 'checkpoint'): Finding[] {
  const { findings, members } = readArtifact(CHECKPOINT, label, file, jwks);
  if (!members) return findings;
  const { seq, entry_sha256: digest, chain_id: chainId } = members;
  if (chainId !== chain.chain_id) return [...findings, bad(label, 'wrong_chain', `${label} is of chain "${String(chainId)}", not "${chain.chain_id}"`)];
  if (!Number.isSafeInteger(seq) || (seq as number) < 0 || typeof digest !== 'string') return [...findings, bad(label, 'canonical_form_unreadable', `${label} has no usable seq or entry_sha256`)];
  const at = seq as number;
  if (at >= chain.entries.length)
    return [...findings, bad(label, 'chain_truncated', `the chain has ${chain.entries.length} entries but ${label} covers seq ${at}: entries were removed from its end`)];
  if (chain.entries[at].entry_sha256 !== digest)
    return [...findings, bad(label, 'chain_rewritten', `entry ${at} has another digest than ${label} recorded: the chain was rewritten`)];
  return [...findings, ok(label, `the chain still holds entry ${at} as checkpointed`)];
}

/** A kept signed tree head against an exported chain: the RFC 6962 root over its first `tree_size` entries. */
export function checkTreeHead(file: unknown, chain: ChainExport, jwks?: Jwks, label = 'tree head'): Finding[] {
  const { findings, members } = readArtifact(TREE_HEAD, label, file, jwks);
  if (!members) return findings;
  const { tree_size: size, root_sha256: root, chain_id: chainId } = members;
  if (chainId !== chain.chain_id) return [...findings, bad(label, 'wrong_chain', `${label} is of chain "${String(chainId)}", not "${chain.chain_id}"`)];
  if (!Number.isSafeInteger(size) || (size as number) < 0 || typeof root !== 'string' || !HEX64.test(root))
    return [...findings, bad(label, 'canonical_form_unreadable', `${label} has no usable tree_size or root_sha256`)];
  const n = size as number;
  if (n > chain.entries.length)
    return [...findings, bad(label, 'chain_truncated', `the chain has ${chain.entries.length} entries but ${label} covers ${n}: entries were removed from its end`)];
  const got = treeRoot(chain.entries.slice(0, n).map((e) => leafHash(e.canonical_form))).toString('hex');
  if (got !== root) return [...findings, bad(label, 'chain_rewritten', `the root over the first ${n} entries is not the signed root: the chain was rewritten`)];
  return [...findings, ok(label, `the first ${n} entries hash to the signed root`)];
}

interface ConsistencyFile {
  first?: unknown;
  second?: unknown;
  proof?: unknown;
}

const hashes = (v: unknown): Buffer[] | undefined =>
  Array.isArray(v) && v.every((h) => typeof h === 'string' && HEX64.test(h)) ? v.map((h: string) => Buffer.from(h, 'hex')) : undefined;

/** An older and a newer signed tree head, and the consistency proof between their sizes (RFC 9162 2.1.4.2). */
export function checkConsistency(older: unknown, newer: unknown, proofFile: unknown, jwks?: Jwks): Finding[] {
  const a = readArtifact(TREE_HEAD, 'older tree head', older, jwks);
  const b = readArtifact(TREE_HEAD, 'newer tree head', newer, jwks);
  const findings = [...a.findings, ...b.findings];
  if (!a.members || !b.members) return findings;
  const p = (proofFile ?? {}) as ConsistencyFile;
  const proof = hashes(p.proof);
  const [m, n] = [a.members.tree_size, b.members.tree_size];
  if (a.members.chain_id !== b.members.chain_id) return [...findings, bad('consistency', 'wrong_chain', 'the two tree heads are of different chains')];
  if (!proof || p.first !== m || p.second !== n)
    return [...findings, bad('consistency', 'proof_unreadable', `the proof is not a consistency proof between sizes ${String(m)} and ${String(n)}`)];
  const good = verifyConsistency(m as number, n as number, hexOf(a.members.root_sha256), hexOf(b.members.root_sha256), proof);
  return [
    ...findings,
    good
      ? ok('consistency', `the tree of ${String(m)} entries is a prefix of the tree of ${String(n)}`)
      : bad('consistency', 'inconsistent', `the tree of ${String(m)} entries is not a prefix of the tree of ${String(n)}: entries were removed or rewritten`),
  ];
}

interface InclusionFile {
  seq?: unknown;
  tree_size?: unknown;
  leaf_hash?: unknown;
  audit_path?: unknown;
  root_sha256?: unknown;
}

/**
 * An inclusion proof (RFC 9162 2.1.3.2), against a signed tree head of the same size when given (else
 * against the root the proof names, which proves nothing signed). With `canonical`, the leaf hash is
 * recomputed from the entry's own bytes.
 */
export function checkInclusion(proofFile: unknown, treeHead?: unknown, jwks?: Jwks, canonical?: string): Finding[] {
  const p = (proofFile ?? {}) as InclusionFile;
  const path = hashes(p.audit_path);
  const findings: Finding[] = [];
  let root = p.root_sha256;
  if (treeHead !== undefined) {
    const t = readArtifact(TREE_HEAD, 'tree head', treeHead, jwks);
    findings.push(...t.findings);
    if (!t.members) return findings;
    if (t.members.tree_size !== p.tree_size) return [...findings, bad('inclusion', 'wrong_size', `the proof is for a tree of ${String(p.tree_size)}, the tree head is of ${String(t.members.tree_size)}`)];
    root = t.members.root_sha256;
  }
  if (!path || typeof p.leaf_hash !== 'string' || !HEX64.test(p.leaf_hash) || typeof root !== 'string' || !HEX64.test(root) || !Number.isSafeInteger(p.seq) || !Number.isSafeInteger(p.tree_size))
    return [...findings, bad('inclusion', 'proof_unreadable', 'the inclusion proof lacks seq, tree_size, leaf_hash, audit_path or a root')];
  if (canonical !== undefined && leafHash(canonical).toString('hex') !== p.leaf_hash)
    return [...findings, bad('inclusion', 'leaf_mismatch', 'the leaf hash is not the hash of the entry given')];
  const good = verifyInclusion(p.seq as number, p.tree_size as number, Buffer.from(p.leaf_hash, 'hex'), path, Buffer.from(root, 'hex'));
  return [
    ...findings,
    good ? ok('inclusion', `entry ${String(p.seq)} is in the tree of ${String(p.tree_size)}`) : bad('inclusion', 'not_included', `the audit path does not lead from entry ${String(p.seq)} to the root`),
  ];
}

const hexOf = (v: unknown) => (typeof v === 'string' && HEX64.test(v) ? Buffer.from(v, 'hex') : Buffer.alloc(0));
