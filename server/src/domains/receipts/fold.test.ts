/** The fold, one test per rule of the receipt table and the receipt state rules (docs/receipts.md). */
import { describe, expect, it } from 'vitest';
import { checkAppend, fold, type FoldEntry, ReceiptRuleError } from './fold.js';

let n = 0;
const e = (over: Partial<FoldEntry>): FoldEntry => ({
  seq: ++n,
  state: 'RECEIPT_STATE_INTENDED',
  authority: 'RECEIPT_AUTHORITY_REPORTED',
  requesterPrincipal: null,
  approverPrincipal: null,
  effectClass: 'EFFECT_CLASS_NONE',
  destructive: false,
  policyId: null,
  policyVersion: null,
  occurredAt: `2026-09-01T00:00:0${n % 10}.000000000Z`,
  runId: null,
  ...over,
});
const refusal = (f: () => void) => {
  try {
    f();
  } catch (err) {
    if (err instanceof ReceiptRuleError) return { field: err.field, message: err.message };
    throw err;
  }
  return undefined;
};

describe('the fold', () => {
  it('"entries[]: complete ordered transitions": entries are taken in seq order whatever order they come in', () => {
    const f = fold([e({ seq: 3, state: 'RECEIPT_STATE_EXECUTED' }), e({ seq: 1, state: 'RECEIPT_STATE_INTENDED' }), e({ seq: 2, state: 'RECEIPT_STATE_AUTHORIZED' })]);
    expect(f.finalState).toBe('RECEIPT_STATE_EXECUTED');
    expect(f.entryCount).toBe(3);
  });

  it('"final_state: state of the last transition"', () => {
    expect(fold([e({ state: 'RECEIPT_STATE_INTENDED' }), e({ state: 'RECEIPT_STATE_DENIED' })]).finalState).toBe('RECEIPT_STATE_DENIED');
  });

  it('"remediation: newest of compensation or rollback; separate from final_state"', () => {
    const f = fold([
      e({ state: 'RECEIPT_STATE_EXECUTED' }),
      e({ state: 'RECEIPT_STATE_EFFECT_VERIFIED' }),
      e({ state: 'RECEIPT_STATE_COMPENSATED' }),
      e({ state: 'RECEIPT_STATE_ROLLED_BACK' }),
    ]);
    expect(f.finalState).toBe('RECEIPT_STATE_EFFECT_VERIFIED');
    expect(f.remediation).toBe('RECEIPT_STATE_ROLLED_BACK');
    expect(fold([e({ state: 'RECEIPT_STATE_EXECUTED' })]).remediation).toBeNull();
  });

  it('"A rollback does not retract a verification": EFFECT_VERIFIED stays the final state after a rollback', () => {
    expect(fold([e({ state: 'RECEIPT_STATE_EFFECT_VERIFIED' }), e({ state: 'RECEIPT_STATE_ROLLED_BACK' })]).finalState).toBe('RECEIPT_STATE_EFFECT_VERIFIED');
  });

  it('"authority ... never changes within one action": the fold carries the first entry\'s; an entry of the other authority is refused', () => {
    expect(fold([e({ authority: 'RECEIPT_AUTHORITY_MEDIATED', policyId: 'agents:containment_approval', policyVersion: 'v1' })]).authority).toBe('RECEIPT_AUTHORITY_MEDIATED');
    expect(refusal(() => checkAppend([e({})], { state: 'RECEIPT_STATE_EXECUTED', authority: 'RECEIPT_AUTHORITY_MEDIATED', policyId: 'agents:containment_approval', policyVersion: 'v1' }))?.field).toBe('authority');
  });

  it('"requester_principal: from the first entry that carries one"', () => {
    expect(fold([e({}), e({ requesterPrincipal: 'user:a' }), e({ requesterPrincipal: 'user:a' })]).requesterPrincipal).toBe('user:a');
    expect(fold([e({})]).requesterPrincipal).toBeNull();
  });

  it('"conflicting_requester_principals: every distinct requester when more than one; empty normally"', () => {
    expect(fold([e({ requesterPrincipal: 'user:a' }), e({ requesterPrincipal: 'user:a' })]).conflictingRequesterPrincipals).toEqual([]);
    expect(fold([e({ requesterPrincipal: 'user:a' }), e({ requesterPrincipal: 'svc:b' }), e({ requesterPrincipal: 'user:a' })]).conflictingRequesterPrincipals).toEqual(['user:a', 'svc:b']);
  });

  it('"effect_class: widest declared: NONE < INTERNAL < EXTERNAL; can rise, never fall"', () => {
    expect(fold([e({ effectClass: 'EFFECT_CLASS_INTERNAL' }), e({ effectClass: 'EFFECT_CLASS_EXTERNAL' }), e({ effectClass: 'EFFECT_CLASS_NONE' })]).effectClass).toBe('EFFECT_CLASS_EXTERNAL');
    expect(fold([e({ effectClass: 'EFFECT_CLASS_NONE' }), e({ effectClass: 'EFFECT_CLASS_INTERNAL' })]).effectClass).toBe('EFFECT_CLASS_INTERNAL');
  });

  it('"destructive follows the same rule": once true it stays true', () => {
    expect(fold([e({ destructive: true }), e({ destructive: false })]).destructive).toBe(true);
    expect(fold([e({})]).destructive).toBe(false);
  });

  it('"approver_principal, approved_at: only from the AUTHORIZED transition; empty when none exists"', () => {
    const f = fold([e({ approverPrincipal: 'user:x' }), e({ state: 'RECEIPT_STATE_AUTHORIZED', approverPrincipal: 'user:b', occurredAt: '2026-09-02T00:00:00.000000000Z' })]);
    expect([f.approverPrincipal, f.approvedAt]).toEqual(['user:b', '2026-09-02T00:00:00.000000000Z']);
    const none = fold([e({ approverPrincipal: 'user:x' }), e({ state: 'RECEIPT_STATE_EXECUTED' })]);
    expect([none.approverPrincipal, none.approvedAt]).toEqual([null, null]);
  });

  it('"policy_id, policy_version: set together or not at all (an entry with only one is refused with 400 naming the field)"', () => {
    const base = { state: 'RECEIPT_STATE_INTENDED', authority: 'RECEIPT_AUTHORITY_REPORTED' as const };
    expect(refusal(() => checkAppend([], { ...base, policyId: 'p', policyVersion: null }))?.field).toBe('policy_version');
    expect(refusal(() => checkAppend([], { ...base, policyId: null, policyVersion: 'v1' }))?.field).toBe('policy_id');
    expect(refusal(() => checkAppend([], { ...base, policyId: 'p', policyVersion: 'v1' }))).toBeUndefined();
  });

  it('"folded from the first entry naming both"', () => {
    const f = fold([e({ policyId: 'half' }), e({ policyId: 'p1', policyVersion: '7' }), e({ policyId: 'p2', policyVersion: 'v2' })]);
    expect([f.policyId, f.policyVersion]).toEqual(['p1', '7']);
  });

  it('"conflicting_policies: distinct records as <id>@<version> in sequence order" (two spellings on a reported receipt appear)', () => {
    expect(fold([e({ policyId: 'p', policyVersion: 'v1' }), e({ policyId: 'p', policyVersion: 'v1' })]).conflictingPolicies).toEqual([]);
    expect(fold([e({ policyId: 'p', policyVersion: 'v1' }), e({ policyId: 'P', policyVersion: 'v1' }), e({ policyId: 'p', policyVersion: 'v1' })]).conflictingPolicies).toEqual(['p@v1', 'P@v1']);
  });

  it('"malformed_policy_records: entries with half a record, as seq <n>: <field> without <the other field> (only entries written before the rule)"', () => {
    const f = fold([e({ seq: 1, policyId: 'p' }), e({ seq: 2 }), e({ seq: 3, policyVersion: 'v9' })]);
    expect(f.malformedPolicyRecords).toEqual(['seq 1: policy_id without policy_version', 'seq 3: policy_version without policy_id']);
    expect([f.policyId, f.policyVersion]).toEqual([null, null]);
  });

  it('"Compensation and rollback are both refused (400) on an action whose entries hold no EXECUTED, EFFECT_VERIFIED or EFFECT_UNKNOWN step"', () => {
    for (const state of ['RECEIPT_STATE_COMPENSATED', 'RECEIPT_STATE_ROLLED_BACK']) {
      const next = { state, authority: 'RECEIPT_AUTHORITY_REPORTED' as const, policyId: null, policyVersion: null };
      expect(refusal(() => checkAppend([e({ state: 'RECEIPT_STATE_AUTHORIZED' }), e({ state: 'RECEIPT_STATE_DENIED' })], next))?.field).toBe('state');
      expect(refusal(() => checkAppend([], next))?.field).toBe('state');
      for (const done of ['RECEIPT_STATE_EXECUTED', 'RECEIPT_STATE_EFFECT_VERIFIED', 'RECEIPT_STATE_EFFECT_UNKNOWN'])
        expect(refusal(() => checkAppend([e({ state: done })], next))).toBeUndefined();
    }
  });

  it('state names are a closed set: unknown and *_UNSPECIFIED are refused', () => {
    for (const state of ['RECEIPT_STATE_UNSPECIFIED', 'AUTHORIZED', 'RECEIPT_STATE_DONE'])
      expect(refusal(() => checkAppend([], { state, authority: 'RECEIPT_AUTHORITY_REPORTED', policyId: null, policyVersion: null }))?.field).toBe('state');
  });

  it('"Policy ids for mediated receipts (always present there), with version of the form v1": missing, unknown or another version is refused', () => {
    const m = (policyId: string | null, policyVersion: string | null) => ({ state: 'RECEIPT_STATE_AUTHORIZED', authority: 'RECEIPT_AUTHORITY_MEDIATED' as const, policyId, policyVersion });
    expect(refusal(() => checkAppend([], m(null, null)))?.field).toBe('policy_id');
    expect(refusal(() => checkAppend([], m('agents:anything', 'v1')))?.field).toBe('policy_id');
    expect(refusal(() => checkAppend([], m('agents:containment_approval', 'v2')))?.field).toBe('policy_version');
    for (const id of ['mcp:write_gateway_authorization', 'agents:containment_approval', 'content:retention_window', 'content:subject_erasure'])
      expect(refusal(() => checkAppend([], m(id, 'v1')))).toBeUndefined();
  });

  it('"a second different policy on a mediated action" is 400', () => {
    const held = e({ authority: 'RECEIPT_AUTHORITY_MEDIATED', policyId: 'content:retention_window', policyVersion: 'v1' });
    const next = { state: 'RECEIPT_STATE_EXECUTED', authority: 'RECEIPT_AUTHORITY_MEDIATED' as const, policyId: 'content:subject_erasure', policyVersion: 'v1' };
    expect(refusal(() => checkAppend([held], next))?.message).toMatch(/one policy/);
    expect(refusal(() => checkAppend([held], { ...next, policyId: 'content:retention_window' }))).toBeUndefined();
  });

  it('"Mediated receipts written before 2026-08-28 carry no policy": stored entries without one fold to an empty policy', () => {
    const f = fold([e({ authority: 'RECEIPT_AUTHORITY_MEDIATED', state: 'RECEIPT_STATE_AUTHORIZED' }), e({ authority: 'RECEIPT_AUTHORITY_MEDIATED', state: 'RECEIPT_STATE_QUARANTINED' })]);
    expect([f.policyId, f.policyVersion, f.malformedPolicyRecords]).toEqual([null, null, []]);
  });

  it('occurred_at of the receipt is the newest client time; run_id the first one named', () => {
    const f = fold([e({ occurredAt: '2026-09-03T00:00:00.000000000Z' }), e({ occurredAt: '2026-09-01T00:00:00.000000000Z', runId: 'r1' }), e({ runId: 'r2' })]);
    expect(f.occurredAt).toBe('2026-09-03T00:00:00.000000000Z');
    expect(f.runId).toBe('r1');
  });
});
