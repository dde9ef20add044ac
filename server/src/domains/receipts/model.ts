/**
 * Action receipts: the vocabulary (docs/receipts.md). A receipt is the fold of one action's entries
 * (transitions); every entry of a project is also a link of the project's receipt chain `actions`.
 */
export const RECEIPT_STATES = [
  'RECEIPT_STATE_INTENDED',
  'RECEIPT_STATE_AUTHORIZED',
  'RECEIPT_STATE_DENIED',
  'RECEIPT_STATE_EXECUTED',
  'RECEIPT_STATE_EFFECT_VERIFIED',
  'RECEIPT_STATE_EFFECT_UNKNOWN',
  'RECEIPT_STATE_QUARANTINED',
  'RECEIPT_STATE_COMPENSATED',
  'RECEIPT_STATE_ROLLED_BACK',
] as const;
export type ReceiptState = (typeof RECEIPT_STATES)[number];

/** Remediation: recorded beside the lifecycle, never its final state. */
export const REMEDIATION_STATES: readonly ReceiptState[] = ['RECEIPT_STATE_COMPENSATED', 'RECEIPT_STATE_ROLLED_BACK'];
/** A remediation needs one of these earlier in the action. */
export const EXECUTED_STATES: readonly ReceiptState[] = ['RECEIPT_STATE_EXECUTED', 'RECEIPT_STATE_EFFECT_VERIFIED', 'RECEIPT_STATE_EFFECT_UNKNOWN'];

export const RECEIPT_AUTHORITIES = ['RECEIPT_AUTHORITY_MEDIATED', 'RECEIPT_AUTHORITY_REPORTED'] as const;
export type ReceiptAuthority = (typeof RECEIPT_AUTHORITIES)[number];

/** Widest last: NONE < INTERNAL < EXTERNAL. */
export const EFFECT_CLASSES = ['EFFECT_CLASS_NONE', 'EFFECT_CLASS_INTERNAL', 'EFFECT_CLASS_EXTERNAL'] as const;
export type EffectClass = (typeof EFFECT_CLASSES)[number];

/** The decisions a mediated receipt is recorded under, each with its current version. */
export const MEDIATED_POLICIES = {
  'mcp:write_gateway_authorization': 'v1',
  'agents:containment_approval': 'v1',
  'content:retention_window': 'v1',
  'content:subject_erasure': 'v1',
} as const;
export type MediatedPolicyId = keyof typeof MEDIATED_POLICIES;

/** The fold's version: stored with every receipt it produced (a later fold re-normalizes and says so). */
export const NORMALIZER_VERSION = 1;

/** The one chain of a project. */
export { ACTIONS_CHAIN_ID } from './chain-source.js';
/** Schema of an entry's canonical form (the bytes each chain link hashes). */
export const ENTRY_SCHEMA = 'svc.receipt-entry.v1';

// Bounds (refused beyond, never truncated).
export const MAX_BATCH = 100;
export const MAX_ENTRIES_PER_ACTION = 1000;
export const MAX_ID = 200;
export const MAX_PRINCIPAL = 256;
export const MAX_POLICY_FIELD = 128;
export const MAX_TOOL = 256;
export const MAX_PURPOSE = 512;
export const MAX_REASON = 1024;
export const RECEIPT_PAGE = { default: 100, max: 200 };
