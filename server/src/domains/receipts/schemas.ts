/** Schemas of action receipts, reported-entry ingest and chain verification (docs/receipts.md). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery } from '../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { RUN_ID_PATTERN } from '../agent-runs/request-rules.js';
import {
  EFFECT_CLASSES,
  MAX_BATCH,
  MAX_ID,
  MAX_POLICY_FIELD,
  MAX_PRINCIPAL,
  MAX_PURPOSE,
  MAX_TOOL,
  RECEIPT_AUTHORITIES,
  RECEIPT_PAGE,
  RECEIPT_STATES,
} from './model.js';

const Id = (description: string) => Type.String({ minLength: 1, maxLength: MAX_ID, description });
const Hex = (n: number, description: string) => Type.String({ pattern: `^[0-9a-fA-F]{${n}}$`, description });
const repeatable = (description: string) => Type.Optional(Type.Array(Type.String(), { description }));

export const ReportedEntry = Type.Object(
  {
    action_id: Id('the action this transition belongs to (chosen by the agent; unique in the project)'),
    entry_id: Type.Optional(Id("the agent's id of this entry: re-sending it with the same content appends nothing (`duplicate: true`), with other content is 409")),
    state: stringEnum(RECEIPT_STATES, { description: 'the transition; *_UNSPECIFIED and unknown values are refused' }),
    occurred_at: Type.String({ minLength: 1, maxLength: 64, description: 'client time, RFC 3339 with a time zone (stored as UTC with nine fractional digits)' }),
    requester_principal: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_PRINCIPAL, description: 'who asked for the action (a user, API-key or service name)' })),
    effect_class: stringEnum(EFFECT_CLASSES, { description: 'what the action can affect: NONE < INTERNAL < EXTERNAL' }),
    destructive: Type.Optional(Type.Boolean({ description: 'default false' })),
    policy_id: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_POLICY_FIELD, description: 'free text, not interpreted; set together with policy_version or not at all' })),
    policy_version: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_POLICY_FIELD, description: 'free text, not interpreted; set together with policy_id or not at all' })),
    run_id: Type.Optional(Hex(32, 'the agent run (its trace id): the run graph lists the receipt')),
    trace_id: Type.Optional(Hex(32, 'trace of the step')),
    span_id: Type.Optional(Hex(16, 'span of the step')),
    tool: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_TOOL, description: 'the tool the authority runs through (with purpose: names the authority edge an AUTHORIZED entry exercises)' })),
    purpose: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_PURPOSE, description: 'what the authority is for' })),
    authority_edge_id: Type.Optional(Id('an authority edge of the project this entry exercises (instead of matching by principal, tool and purpose)')),
  },
  { additionalProperties: false },
);

export const ReportEntriesBody = Type.Object(
  {
    project_id: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_ID, description: 'required for organization-level credentials (or in the query)' })),
    request_id: Type.Optional(Id('makes a retry of the batch safe: the same principal gets the first answer; another gets 409')),
    entries: Type.Array(ReportedEntry, { minItems: 1, maxItems: MAX_BATCH, description: `1 to ${MAX_BATCH} entries, appended in this order` }),
  },
  { additionalProperties: false },
);

const AppendedEntry = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'position in the batch' }),
  action_id: Type.String(),
  seq: Type.Integer({ minimum: 1, description: 'position in the action' }),
  chain_seq: Type.Integer({ minimum: 0, description: "position in the project's chain `actions`" }),
  entry_sha256: Type.String({ description: 'SHA-256 (hex) of the canonical form' }),
  duplicate: Type.Boolean({ description: 'an entry_id already stored with this content: nothing appended' }),
});

export const ReportEntriesResponse = Type.Object({
  project_id: Type.String(),
  request_id: Type.Optional(Type.String()),
  accepted: Type.Integer({ minimum: 0, description: 'entries appended' }),
  duplicates: Type.Integer({ minimum: 0 }),
  entries: Type.Array(AppendedEntry),
});

export const ReceiptEntry = Type.Object({
  seq: Type.Integer({ description: 'position in the action, from 1' }),
  chain_seq: Type.Integer({ description: "position in the project's chain, from 0" }),
  state: Type.String({ description: 'a RECEIPT_STATE_* value' }),
  authority: stringEnum(RECEIPT_AUTHORITIES),
  requester_principal: Type.String({ description: "'' when the entry names none" }),
  approver_principal: Type.String({ description: 'set on a mediated AUTHORIZED entry; otherwise empty' }),
  reported_by: Type.String({ description: 'the credential that reported it (reported entries); empty for mediated ones' }),
  effect_class: stringEnum(EFFECT_CLASSES),
  destructive: Type.Boolean(),
  policy_id: Type.String(),
  policy_version: Type.String(),
  occurred_at: Type.String({ description: 'client time, UTC with nine fractional digits' }),
  recorded_at: Type.String({ description: 'when the platform stored it' }),
  run_id: Type.Optional(Type.String()),
  trace_id: Type.Optional(Type.String()),
  span_id: Type.Optional(Type.String()),
  tool: Type.Optional(Type.String()),
  purpose: Type.Optional(Type.String()),
  authority_edge_id: Type.Optional(Type.String()),
  entry_id: Type.Optional(Type.String()),
  entry_sha256: Type.String(),
});

const receiptFields = {
  action_id: Type.String(),
  project_id: Type.String(),
  chain_id: Type.String(),
  authority: stringEnum(RECEIPT_AUTHORITIES, { description: 'never changes within an action' }),
  final_state: Type.String({ description: 'state of the last lifecycle transition (compensation and rollback are remediation)' }),
  remediation: Type.String({ description: "the newest of RECEIPT_STATE_COMPENSATED / _ROLLED_BACK; '' when none" }),
  requester_principal: Type.String({ description: "from the first entry that carries one; '' when none does" }),
  conflicting_requester_principals: Type.Array(Type.String(), { description: 'every distinct requester when more than one; empty normally' }),
  effect_class: stringEnum(EFFECT_CLASSES, { description: 'widest declared; never falls' }),
  destructive: Type.Boolean({ description: 'never falls' }),
  approver_principal: Type.String({ description: "only from the AUTHORIZED transition; '' when none" }),
  approved_at: Type.Optional(Type.String({ description: 'only from the AUTHORIZED transition' })),
  policy_id: Type.String({ description: "from the first entry naming both policy fields; '' when none" }),
  policy_version: Type.String(),
  conflicting_policies: Type.Array(Type.String(), { description: '`<id>@<version>` of every distinct policy when more than one, in sequence order' }),
  malformed_policy_records: Type.Array(Type.String(), { description: '`seq <n>: <field> without <other field>` (entries stored before the pair rule)' }),
  normalizer_version: Type.Integer({ minimum: 1, description: 'version of the fold that produced this receipt' }),
  occurred_at: Type.String({ description: 'the newest client time of its entries (lists are ordered by it)' }),
  run_id: Type.Optional(Type.String()),
  entry_count: Type.Integer({ minimum: 1 }),
};

export const ActionReceipt = Type.Object(receiptFields, { $id: 'ActionReceipt', description: 'the fold of one action (entries are served by GET /action-receipts/{actionId})' });
export const ActionReceiptWithEntries = Type.Object({ ...receiptFields, entries: Type.Array(ReceiptEntry, { description: 'every transition in seq order' }) });

export const ListReceiptsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: `default ${RECEIPT_PAGE.default}, at most ${RECEIPT_PAGE.max}; 0 is refused` })),
    authority: repeatable(`repeated or comma-separated: ${RECEIPT_AUTHORITIES.join(', ')}`),
    final_state: repeatable(`repeated or comma-separated: ${RECEIPT_STATES.join(', ')}; *_UNSPECIFIED and unknown values are 400`),
    normalizer_versions: repeatable('repeated or comma-separated fold versions (integers); a version no receipt has gives an empty page'),
    chain_id: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_ID, description: "a project's chain is `actions`; without action_id: only the receipt holding the chain's newest entry" })),
    action_id: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_ID })),
    run_id: Type.Optional(Type.String({ pattern: RUN_ID_PATTERN, description: 'the agent run (its trace id)' })),
  },
  { additionalProperties: false, description: 'AND across filters, OR within one' },
);

export const ListReceiptsResponse = Type.Object({
  action_receipts: Type.Array(ActionReceipt, { description: 'newest client occurred_at first (then action_id)' }),
  next_cursor: NextCursorField,
});

export const ActionParams = Type.Object({ actionId: Type.String({ minLength: 1, maxLength: MAX_ID }) }, { additionalProperties: false });
export const ChainParams = Type.Object({ chainId: Type.String({ minLength: 1, maxLength: MAX_ID }) }, { additionalProperties: false });

export const ChainVerificationResponse = Type.Object({
  valid: Type.Boolean(),
  entry_count: Type.Integer({ minimum: 0 }),
  mediated_entry_count: Type.Integer({ minimum: 0 }),
  reported_entry_count: Type.Integer({ minimum: 0, description: 'mediated + reported = entry_count' }),
  first_invalid_seq: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'the first chain position that does not hold; null when valid' }),
  last_entry_sha256: Type.String({ description: "digest of the last entry ('' for an empty chain)" }),
  detail: Type.String({ description: "'' when valid; else sequence_gap, broken_link, content_mismatch, digest_mismatch or head_mismatch" }),
});
