/**
 * The receipt chain of a project (docs/receipts.md, "The chain"). Every entry, mediated or reported,
 * becomes a link: its canonical form (RFC 8785 JSON) names the previous link's digest, and its own
 * digest is the SHA-256 (hex) of those bytes. Appends are serialized per chain by the store's head lock.
 */
import { canonicalJson, sha256 } from '../signing/byte-contract.js';
import type { ChainEntry, ChainVerification, ReceiptChainSource } from './chain-source.js';
import { ENTRY_SCHEMA } from './model.js';
import type { ControlStore } from '../../storage/control/stores.js';
import type { EntryRecord } from './store.js';

/** Members of the canonical form, every one always present ('' for an absent optional value). */
export function canonicalEntry(e: Omit<EntryRecord, 'canonical' | 'entrySha256'>): string {
  const s = (v: string | null) => v ?? '';
  return canonicalJson({
    schema: ENTRY_SCHEMA,
    chain_id: e.chainId,
    seq: e.chainSeq,
    prev_entry_sha256: e.prevEntrySha256,
    org_id: e.orgId,
    project_id: e.projectId,
    action_id: e.actionId,
    action_seq: e.seq,
    state: e.state,
    authority: e.authority,
    requester_principal: s(e.requesterPrincipal),
    approver_principal: s(e.approverPrincipal),
    reported_by: s(e.reportedBy),
    effect_class: e.effectClass,
    destructive: e.destructive,
    policy_id: s(e.policyId),
    policy_version: s(e.policyVersion),
    occurred_at: e.occurredAt,
    recorded_at: e.recordedAt,
    subject_kind: e.subjectKind,
    subject_id: e.subjectId,
    run_id: s(e.runId),
    trace_id: s(e.traceId),
    span_id: s(e.spanId),
    tool: s(e.tool),
    purpose: s(e.purpose),
    authority_edge_id: s(e.authorityEdgeId),
    entry_id: s(e.entryId),
  });
}

export const sha256Hex = (text: string) => sha256(text).toString('hex');

/** Links an entry after the chain head: its chain position, the previous digest, its canonical form and digest. */
export function link(e: Omit<EntryRecord, 'canonical' | 'entrySha256' | 'chainSeq' | 'prevEntrySha256'>, chainSeq: number, prev: string): EntryRecord {
  const linked = { ...e, chainSeq, prevEntrySha256: prev };
  const canonical = canonicalEntry(linked);
  return { ...linked, canonical, entrySha256: sha256Hex(canonical) };
}

/** Verification state carried from one page of entries to the next. */
interface Walk {
  next: number;
  prev: string;
  mediated: number;
  reported: number;
  fault: { seq: number; detail: string } | null;
}

/** Checks one entry against the walk so far: position, link, stored columns against the canonical form, digest. */
function step(w: Walk, e: EntryRecord): void {
  if (e.authority === 'RECEIPT_AUTHORITY_MEDIATED') w.mediated++;
  else w.reported++;
  if (w.fault === null) {
    const fault =
      e.chainSeq !== w.next
        ? 'sequence_gap'
        : e.prevEntrySha256 !== w.prev || linkInCanonical(e.canonical) !== w.prev
          ? 'broken_link'
          : canonicalEntry(e) !== e.canonical
            ? 'content_mismatch'
            : sha256Hex(e.canonical) !== e.entrySha256
              ? 'digest_mismatch'
              : null;
    if (fault) w.fault = { seq: w.next, detail: fault };
  }
  w.next++;
  w.prev = e.entrySha256;
}

function linkInCanonical(canonical: string): string | undefined {
  try {
    const v = JSON.parse(canonical) as { prev_entry_sha256?: unknown };
    return typeof v.prev_entry_sha256 === 'string' ? v.prev_entry_sha256 : undefined;
  } catch {
    return undefined;
  }
}

const PAGE = 1000;

/** The chain as the signing part reads it, over the control store. */
export class ReceiptChain implements ReceiptChainSource {
  constructor(private readonly control: ControlStore) {}

  async size(projectId: string, chainId: string): Promise<number | null> {
    return (await this.control.receipts.chainHead(projectId, chainId))?.size ?? null;
  }

  async entries(projectId: string, chainId: string, fromSeq: number, toSeq: number): Promise<ChainEntry[]> {
    if (toSeq <= fromSeq) return [];
    const rows = await this.control.receipts.chainEntries(projectId, chainId, fromSeq, toSeq);
    return rows.map((e) => ({ seq: e.chainSeq, canonical: e.canonical, entrySha256: e.entrySha256, prevEntrySha256: e.prevEntrySha256, authority: e.authority }));
  }

  /**
   * Walks the whole chain: every position present once and in order (`sequence_gap`), each link naming
   * the previous digest (`broken_link`), the stored columns agreeing with the canonical bytes
   * (`content_mismatch`), the digest of those bytes (`digest_mismatch`), and the head agreeing with the
   * last entry (`head_mismatch`: entries missing from the end, or the head rewritten).
   */
  async verify(projectId: string, chainId: string): Promise<ChainVerification | null> {
    const head = await this.control.receipts.chainHead(projectId, chainId);
    if (!head) return null;
    const w: Walk = { next: 0, prev: '', mediated: 0, reported: 0, fault: null };
    let from = 0;
    for (;;) {
      // Read by position, and past the head too (rows beyond it are counted and are a fault).
      const rows = await this.control.receipts.chainEntries(projectId, chainId, from, Number.MAX_SAFE_INTEGER, PAGE + 1);
      const page = rows.slice(0, PAGE);
      for (const e of page) step(w, e);
      if (rows.length <= PAGE) break;
      from = page[page.length - 1].chainSeq + 1;
    }
    const count = w.mediated + w.reported;
    if (w.fault === null && (count !== head.size || w.prev !== head.lastEntrySha256)) w.fault = { seq: Math.min(count, head.size), detail: 'head_mismatch' };
    return {
      valid: w.fault === null,
      entry_count: count,
      mediated_entry_count: w.mediated,
      reported_entry_count: w.reported,
      first_invalid_seq: w.fault?.seq ?? null,
      last_entry_sha256: w.prev,
      detail: w.fault?.detail ?? '',
    };
  }
}
