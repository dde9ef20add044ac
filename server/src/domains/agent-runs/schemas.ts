/** TypeBox schemas of the agent reads (docs/agent-model.md; spec 1 "AI execution", spec 2 "Agent events and receipts"). */
import { ActionReceipt } from '../receipts/schemas.js';
import { Type } from '@sinclair/typebox';
import { PageQuery, NextCursorField } from '../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { TIME_DESCRIPTION } from '../../http/time.js';
import { GROUP_COST_REASONS, RUN_COST_REASONS } from './cost.js';
import { CANONICAL_OPERATIONS, CONTEXT_KINDS, EVENT_CATEGORIES, MEMORY_TRUST_LABELS, OUTCOMES, RUN_STATUSES } from './model.js';
import {
  EVENT_LIMIT,
  IDENTITY_LIMIT,
  MAX_GRAPH_STEPS,
  MAX_IDENTITY_KEYS,
  MAX_TURN_RUNS,
  RUN_ID_PATTERN,
  RUN_LIMIT,
  SESSION_LIMIT,
  TURN_LIMIT,
} from './request-rules.js';

const Timestamp = (description?: string) => Type.String({ format: 'date-time', ...(description ? { description } : {}) });
const Count = Type.Integer({ minimum: 0 });
const Key = (description: string) => Type.String({ minLength: 1, description });
const limitQuery = (d: { default: number; max: number }) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: `default ${d.default}, at most ${d.max}; 0 is refused` }));
const repeatable = (what: string, values: readonly string[]) =>
  Type.Optional(Type.Array(Type.String(), { description: `${what}: repeated or comma-separated, OR within; one of ${values.join(', ')}; anything else is 400` }));
const Window = {
  since: Type.Optional(Type.String({ description: `${TIME_DESCRIPTION}; closed window start` })),
  until: Type.Optional(Type.String({ description: `${TIME_DESCRIPTION}; closed window end` })),
};

const CostFields = {
  cost_nanos: Type.Optional(Type.Integer({ description: 'billionths of a US dollar; absent (never 0) when not measurable' })),
};

// ---- runs

export const Run = Type.Object(
  {
    run_id: Type.String({ description: 'the trace id (32 lower-case hex)' }),
    root_step_id: Type.String({ description: 'span id of the root step: an invoke_agent span, or the top invoke_workflow span of a trace without one' }),
    agent_name: Type.Optional(Type.String()),
    agent_id: Type.Optional(Type.String()),
    observation_key: Type.Optional(Type.String()),
    service_name: Type.Optional(Type.String()),
    environment: Type.Optional(Type.String()),
    session_key: Type.Optional(Type.String()),
    turn_id: Type.Optional(Type.String()),
    status: Type.Optional(stringEnum(RUN_STATUSES, { description: 'absent when not stated (never guessed from the span status)' })),
    terminal_reason: Type.Optional(Type.String()),
    started_at: Timestamp(),
    ended_at: Timestamp(),
    duration_ms: Type.Number({ description: 'fractional (microsecond precision)' }),
    step_count: Count,
    error_steps: Count,
    tool_calls: Count,
    model_calls: Count,
    ...CostFields,
    cost_unavailable_reason: Type.Optional(stringEnum(RUN_COST_REASONS, { description: 'why cost_nanos is absent' })),
    safety_error_steps: Type.Optional(Type.Integer({ minimum: 0, description: 'absent when no svc.safety.check step has an outcome' })),
  },
  { $id: 'AgentRun', description: 'docs/agent-model.md "Run"; counts are over the steps other than the root' },
);

export const ListRunsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    status: repeatable('run status', RUN_STATUSES),
    session_key: Type.Optional(Key('exact session key')),
    observation_key: Type.Optional(Key('exact agent identity')),
    ...Window,
    cursor: PageQuery.cursor,
    limit: limitQuery(RUN_LIMIT),
  },
  { additionalProperties: false },
);

export const ListRunsResponse = Type.Object({
  runs: Type.Array(Run, { description: 'newest first (started_at desc, run_id desc)' }),
  next_cursor: NextCursorField,
});

export const RunParams = Type.Object({
  run_id: Type.String({ pattern: RUN_ID_PATTERN, description: '32 hexadecimal characters; malformed is 400, unknown or of another project 404' }),
});

// ---- graph

const Memory = Type.Object(
  {
    item_id: Type.Optional(Type.String()),
    store: Type.Optional(Type.String()),
    provenance: Type.Optional(Type.String()),
    declared_trust_label: Type.Optional(stringEnum(MEMORY_TRUST_LABELS)),
  },
  { description: 'memory steps only; each member only when declared; absent when none is' },
);

export const Step = Type.Object({
  step_id: Type.String({ description: 'span id' }),
  parent_step_id: Type.Optional(Type.String({ description: 'the parent span id as sent (it may not have arrived)' })),
  name: Type.String(),
  canonical_operation: stringEnum(CANONICAL_OPERATIONS as readonly string[]),
  outcome: Type.Optional(stringEnum(OUTCOMES, { description: 'absent when unset (no stated status, or one that maps to none)' })),
  span_status: stringEnum(['unset', 'ok', 'error'] as const, {
    description: 'the OpenTelemetry span status as the instrumentation set it; shown beside the outcome and never read as it',
  }),
  span_status_message: Type.Optional(Type.String({ description: 'the span status description, when one was sent' })),
  started_at: Timestamp(),
  ended_at: Timestamp(),
  duration_ms: Type.Number(),
  tool_name: Type.Optional(Type.String()),
  model: Type.Optional(Type.String()),
  provider: Type.Optional(Type.String()),
  input_tokens: Type.Optional(Type.Integer()),
  output_tokens: Type.Optional(Type.Integer()),
  ...CostFields,
  cost_unavailable_reason: Type.Optional(stringEnum(['missing_usage', 'unpriced_model'], { description: 'model steps without a cost' })),
  safety_check: Type.Optional(Type.Literal(true)),
  attributes: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
    description: 'allow-list only: gen_ai.response.status, operation, models, provider, tool name and call id, agent name and id, data source id',
  }),
  instrumented: Type.Boolean({ description: 'true when the step has an accepted context event' }),
  memory: Type.Optional(Memory),
});

export const RunGraphResponse = Type.Object({
  run: Run,
  steps: Type.Array(Step, { description: `every span of the run, by start; more than ${MAX_GRAPH_STEPS} steps is 429, never truncated` }),
  counts: Type.Object(
    {
      steps: Count,
      by_canonical_operation: Type.Record(Type.String(), Count, { description: 'operations present only' }),
      by_outcome: Type.Object({ OUTCOME_OK: Count, OUTCOME_ERROR: Count, OUTCOME_CANCELLED: Count, unset: Count }),
      tool_calls: Count,
      model_calls: Count,
      error_steps: Count,
      memory_ops: Count,
      instrumented_steps: Count,
    },
    { description: 'over the steps other than the root' },
  ),
  action_receipts: Type.Array(ActionReceipt, { description: 'the receipts of actions whose entries name this run (run_id), newest client time first' }),
});

// ---- sessions and turns

const GroupCost = {
  ...CostFields,
  cost_unavailable_reason: Type.Optional(
    stringEnum(GROUP_COST_REASONS, { description: 'run_cost_unavailable: a run has no cost; zero_cost: a zero is treated as unmeasured' }),
  ),
};

export const Session = Type.Object({
  session_key: Type.String(),
  run_count: Count,
  turn_count: Type.Optional(Type.Integer({ minimum: 1, description: 'distinct turn ids; absent when no run carries one' })),
  started_at: Timestamp('first run start'),
  ended_at: Timestamp('last run end'),
  duration_ms: Type.Number({ description: 'a single moment measures 0' }),
  ...GroupCost,
}, { $id: 'AgentSession' });

export const ListSessionsQuery = Type.Object(
  { ...ProjectSelectorQuery, ...Window, cursor: PageQuery.cursor, limit: limitQuery(SESSION_LIMIT) },
  { additionalProperties: false },
);

export const ListSessionsResponse = Type.Object({
  sessions: Type.Array(Session, { description: 'newest first (started_at desc, session_key desc)' }),
  next_cursor: NextCursorField,
});

export const SessionParams = Type.Object({ session_key: Type.String({ minLength: 1, description: 'URL-encoded session key' }) });

export const Turn = Type.Object({
  turn_id: Type.String(),
  session_key: Type.String(),
  run_count: Count,
  started_at: Timestamp(),
  ended_at: Timestamp(),
  duration_ms: Type.Number(),
  ...GroupCost,
  runs: Type.Array(Run, { description: `oldest first, at most ${MAX_TURN_RUNS}` }),
  runs_truncated: Type.Optional(Type.Literal(true)),
}, { $id: 'AgentTurn' });

export const ListTurnsQuery = Type.Object(
  { ...ProjectSelectorQuery, session_key: Key('required: the session whose turns to list'), cursor: PageQuery.cursor, limit: limitQuery(TURN_LIMIT) },
  { additionalProperties: false },
);

export const ListTurnsResponse = Type.Object({
  turns: Type.Array(Turn, { description: 'newest first (started_at desc, turn_id desc)' }),
  next_cursor: NextCursorField,
});

// ---- agent events

const Assembly = Type.Object({
  budget_tokens: Type.Optional(Type.Number()),
  assembled_tokens: Type.Optional(Type.Number()),
  overflow: Type.Optional(Type.Boolean()),
  digest: Type.Optional(Type.String()),
  sources: Type.Array(Type.Object({ id: Type.String(), kind: Type.Optional(Type.String()), tokens: Type.Optional(Type.Number()) }), {
    description: 'order kept, at most 100',
  }),
  sources_truncated: Type.Optional(Type.Literal(true)),
});

const Compaction = Type.Object({
  trigger: Type.Optional(Type.String()),
  strategy: Type.Optional(Type.String()),
  before_count: Type.Optional(Type.Number()),
  after_count: Type.Optional(Type.Number()),
  before_digest: Type.Optional(Type.String()),
  after_digest: Type.Optional(Type.String()),
  removed_source_ids: Type.Optional(Type.Array(Type.String())),
  ratio: Type.Optional(Type.Number({ description: 'after_count / before_count; absent unless both are present and before_count > 0' })),
});

const Cache = Type.Object({
  provider: Type.Optional(Type.String()),
  key_digest: Type.Optional(Type.String()),
  outcome: Type.Optional(stringEnum(['hit', 'miss', 'write'])),
  reused_tokens: Type.Optional(Type.Number()),
  latency_saved_ms: Type.Optional(Type.Number()),
  cost_saved_nanos: Type.Optional(Type.Number()),
});

export const AgentEvent = Type.Object({
  event_id: Type.String({ description: '<span_id>:<index>' }),
  run_id: Type.String(),
  span_id: Type.String(),
  session_key: Type.Optional(Type.String()),
  turn_id: Type.Optional(Type.String()),
  observation_key: Type.Optional(Type.String()),
  canonical_operation: Type.String({ description: "of the event's step" }),
  category: stringEnum(EVENT_CATEGORIES),
  name: Type.String(),
  occurred_at: Timestamp(),
  context: Type.Optional(
    Type.Object(
      {
        kind: stringEnum(CONTEXT_KINDS),
        assembly: Type.Optional(Assembly),
        compaction: Type.Optional(Compaction),
        cache: Type.Optional(Cache),
      },
      { description: 'context events only: exactly one typed detail, the member named by kind' },
    ),
  ),
}, { $id: 'AgentEvent' });

export const ListEventsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    run_id: Type.Optional(Type.String({ description: 'anchor: the events of one run' })),
    session_key: Type.Optional(Type.String({ description: 'anchor: the events of the runs of one session' })),
    observation_key: Type.Optional(Type.String({ description: 'anchor with since and until at most 7 days apart: the events of one agent identity' })),
    ...Window,
    category: repeatable('event category', EVENT_CATEGORIES),
    canonical_operation: repeatable("the event's step operation", CANONICAL_OPERATIONS),
    context_source_id: Type.Optional(Type.String({ description: 'narrowing only (an assembly source id or compaction removed source id); refused alone' })),
    outcome: Type.Optional(Type.Array(Type.String(), { deprecated: true, description: 'deprecated selector: always refused with 400 (events have no outcome)' })),
    cursor: PageQuery.cursor,
    limit: limitQuery(EVENT_LIMIT),
  },
  {
    additionalProperties: false,
    description:
      'anchor required: run_id, session_key, observation_key with a bounded window (at most 7 days), or since and until at most 24 hours apart',
  },
);

export const ListEventsResponse = Type.Object({
  events: Type.Array(AgentEvent, { description: 'newest first (occurred_at desc, then run, span and index desc)' }),
  next_cursor: NextCursorField,
});

// ---- agent identities

export const Identity = Type.Object(
  {
    observation_key: Type.String(),
    availability: stringEnum(['answered', 'unavailable'], {
      description: 'answered: the sightings were read (an empty credentials list is an answered empty match)',
    }),
    credentials: Type.Array(
      Type.Object({
        source: stringEnum(['api_key', 'bearer_token', 'dev_org_header']),
        api_key_id: Type.Optional(Type.String({ description: 'for source api_key' })),
        first_seen: Timestamp(),
        last_seen: Timestamp(),
        sighting_count: Count,
      }),
      { description: 'one per (source, api_key_id), by first_seen; empty means nothing was recorded' },
    ),
    first_seen: Type.Optional(Timestamp()),
    last_seen: Type.Optional(Timestamp()),
    sighting_count: Count,
  },
  { $id: 'AgentIdentity', description: 'spec 2 "Attribution entry": who sent telemetry of this agent identity' },
);

export const ListIdentitiesQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    observation_key: Type.Optional(
      Type.Array(Type.String(), {
        description: `repeated (not comma-separated), at most ${MAX_IDENTITY_KEYS}: answer exactly these keys, unseen ones with empty credentials; no cursor or limit then`,
      }),
    ),
    cursor: PageQuery.cursor,
    limit: limitQuery(IDENTITY_LIMIT),
  },
  { additionalProperties: false },
);

export const ListIdentitiesResponse = Type.Object({
  identities: Type.Array(Identity, { description: 'by observation_key (code point order), or in the order asked' }),
  next_cursor: NextCursorField,
});

export const IdentityParams = Type.Object({ observation_key: Type.String({ minLength: 1, description: 'URL-encoded (a "/" is %2F)' }) });
