/**
 * The fold of one action's entries into its receipt, and the rules an appended entry must meet
 * (docs/receipts.md, "The fold"). Pure: no storage, no clock.
 *
 * - Entries are taken in `seq` order; `final_state` is the state of the last lifecycle transition.
 *   Compensation and rollback are remediation (`remediation` is the newest of them) and never change it.
 * - `authority` never changes within an action; `requester_principal` comes from the first entry that
 *   carries one, and every distinct one is listed when there is more than one.
 * - `effect_class` is the widest declared and `destructive` never falls.
 * - `approver_principal` and `approved_at` come only from the (first) AUTHORIZED transition.
 * - The policy is folded from the first entry naming both `policy_id` and `policy_version`; every distinct
 *   pair is listed as `<id>@<version>` when there is more than one; entries stored with half a pair
 *   (before the rule) are listed in `malformed_policy_records`.
 */
import {
  EFFECT_CLASSES,
  type EffectClass,
  EXECUTED_STATES,
  MEDIATED_POLICIES,
  NORMALIZER_VERSION,
  type ReceiptState,
  RECEIPT_STATES,
  REMEDIATION_STATES,
} from './model.js';
import type { EntryRecord, ReceiptFold, ReceiptRecord } from './store.js';

export type FoldEntry = Pick<
  EntryRecord,
  'seq' | 'state' | 'authority' | 'requesterPrincipal' | 'approverPrincipal' | 'effectClass' | 'destructive' | 'policyId' | 'policyVersion' | 'occurredAt' | 'runId'
>;

export type Fold = ReceiptFold;

const isRemediation = (state: string) => (REMEDIATION_STATES as readonly string[]).includes(state);
const wider = (a: EffectClass, b: EffectClass): EffectClass => (EFFECT_CLASSES.indexOf(b) > EFFECT_CLASSES.indexOf(a) ? b : a);
const hasPolicy = (e: FoldEntry) => e.policyId !== null && e.policyVersion !== null;

/** Folds the entries of one action (at least one). Reads what is stored, also rows written before the rules. */
export function fold(input: readonly FoldEntry[]): Fold {
  if (input.length === 0) throw new Error('an action has at least one entry');
  const entries = [...input].sort((a, b) => a.seq - b.seq);
  const requesters: string[] = [];
  const policies: string[] = [];
  const malformed: string[] = [];
  let finalState: string | null = null;
  let remediation: string | null = null;
  let effectClass: EffectClass = 'EFFECT_CLASS_NONE';
  let destructive = false;
  let approved: FoldEntry | undefined;
  let policy: FoldEntry | undefined;
  let runId: string | null = null;
  let occurredAt = entries[0].occurredAt;
  for (const e of entries) {
    if (isRemediation(e.state)) remediation = e.state;
    else finalState = e.state;
    if (e.requesterPrincipal !== null && !requesters.includes(e.requesterPrincipal)) requesters.push(e.requesterPrincipal);
    effectClass = wider(effectClass, e.effectClass);
    destructive ||= e.destructive;
    if (e.state === 'RECEIPT_STATE_AUTHORIZED' && approved === undefined) approved = e;
    if (hasPolicy(e)) {
      policy ??= e;
      const record = `${e.policyId}@${e.policyVersion}`;
      if (!policies.includes(record)) policies.push(record);
    } else if (e.policyId !== null) malformed.push(`seq ${e.seq}: policy_id without policy_version`);
    else if (e.policyVersion !== null) malformed.push(`seq ${e.seq}: policy_version without policy_id`);
    runId ??= e.runId;
    if (e.occurredAt > occurredAt) occurredAt = e.occurredAt;
  }
  return {
    authority: entries[0].authority,
    // Only remediation (possible in rows stored before the rules): the first entry's state stands.
    finalState: finalState ?? entries[0].state,
    remediation,
    requesterPrincipal: requesters[0] ?? null,
    conflictingRequesterPrincipals: requesters.length > 1 ? requesters : [],
    effectClass,
    destructive,
    approverPrincipal: approved?.approverPrincipal ?? null,
    approvedAt: approved?.occurredAt ?? null,
    policyId: policy?.policyId ?? null,
    policyVersion: policy?.policyVersion ?? null,
    conflictingPolicies: policies.length > 1 ? policies : [],
    malformedPolicyRecords: malformed,
    occurredAt,
    runId,
    entryCount: entries.length,
  };
}

/** A refused entry: `field` names what is wrong. */
export class ReceiptRuleError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export type NewEntry = Pick<FoldEntry, 'state' | 'authority' | 'policyId' | 'policyVersion'>;

/**
 * The rules an entry appended after `existing` (the action's entries so far, in seq order) must meet.
 * Throws ReceiptRuleError naming the field.
 */
export function checkAppend(existing: readonly FoldEntry[], next: NewEntry): void {
  if (!(RECEIPT_STATES as readonly string[]).includes(next.state))
    throw new ReceiptRuleError('state', `state "${next.state}" is not recognized; one of: ${RECEIPT_STATES.join(', ')}`);
  if (next.policyId !== null && next.policyVersion === null)
    throw new ReceiptRuleError('policy_version', 'policy_version is missing: policy_id and policy_version are set together or not at all');
  if (next.policyVersion !== null && next.policyId === null)
    throw new ReceiptRuleError('policy_id', 'policy_id is missing: policy_id and policy_version are set together or not at all');
  const first = existing[0];
  if (first && first.authority !== next.authority)
    throw new ReceiptRuleError('authority', `the action is ${first.authority}: the authority of an action never changes`);
  if (isRemediation(next.state) && !existing.some((e) => (EXECUTED_STATES as readonly string[]).includes(e.state)))
    throw new ReceiptRuleError(
      'state',
      `${next.state} needs an earlier EXECUTED, EFFECT_VERIFIED or EFFECT_UNKNOWN entry of the action: nothing was carried out to remediate`,
    );
  if (next.authority === 'RECEIPT_AUTHORITY_MEDIATED') checkMediatedPolicy(existing, next);
}

function checkMediatedPolicy(existing: readonly FoldEntry[], next: NewEntry): void {
  const id = next.policyId;
  if (id === null || !Object.hasOwn(MEDIATED_POLICIES, id))
    throw new ReceiptRuleError('policy_id', `a mediated entry names one of the policies ${Object.keys(MEDIATED_POLICIES).join(', ')}`);
  const version = MEDIATED_POLICIES[id as keyof typeof MEDIATED_POLICIES];
  if (next.policyVersion !== version) throw new ReceiptRuleError('policy_version', `policy ${id} is at version ${version}`);
  const held = existing.find(hasPolicy);
  if (held && (held.policyId !== id || held.policyVersion !== version))
    throw new ReceiptRuleError('policy_id', `the action is recorded under ${held.policyId}@${held.policyVersion}: a mediated action has one policy`);
}

export const isReceiptState = (s: string): s is ReceiptState => (RECEIPT_STATES as readonly string[]).includes(s);

/** The stored receipt of an action from all its entries (in any order; at least one). */
export function receiptRecord(entries: readonly EntryRecord[], updatedAt: string): ReceiptRecord {
  const last = entries.reduce((a, b) => (b.chainSeq > a.chainSeq ? b : a));
  return { ...fold(entries), orgId: last.orgId, projectId: last.projectId, actionId: last.actionId, chainId: last.chainId, normalizerVersion: NORMALIZER_VERSION, lastChainSeq: last.chainSeq, updatedAt };
}
