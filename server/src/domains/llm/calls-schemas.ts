/** Schemas of the model-call reads (`GET /llm/calls`, `GET /llm/usage`; docs/agent-model.md "Model calls outside runs"). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery } from '../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { CANONICAL_OPERATIONS } from '../agent-runs/model.js';
import { RfcTime, WindowQuery } from '../traces/schemas.js';
import { SPAN_STATUSES } from '../traces/store.js';
import { CALL_COST_REASONS, CALL_LIMIT, MAX_USAGE_GROUPS } from './calls-service.js';

const Exact = (what: string, maxLength: number) => Type.Optional(Type.String({ minLength: 1, maxLength, description: `only the calls whose ${what} is exactly this` }));

const CallFilterQuery = {
  ...ProjectSelectorQuery,
  ...WindowQuery,
  model: Exact('model (`gen_ai.response.model`, else `gen_ai.request.model`)', 256),
  provider: Exact('provider (`gen_ai.provider.name`, else `gen_ai.system`)', 256),
  service_name: Exact('resource `service.name`', 1024),
};

export const ListLlmCallsQuery = Type.Object(
  {
    ...CallFilterQuery,
    cursor: PageQuery.cursor,
    limit: Type.Optional(
      Type.Integer({ minimum: 0, maximum: 4294967295, description: `default ${CALL_LIMIT.default}, at most ${CALL_LIMIT.max}; 0 is refused` }),
    ),
  },
  { additionalProperties: false },
);

export const LlmUsageQuery = Type.Object(CallFilterQuery, { additionalProperties: false });

const Tokens = (what: string) => Type.Integer({ minimum: 0, description: what });

const CostFields = {
  cost_nanos: Type.Optional(
    Type.Integer({ description: 'billionths of a US dollar: the reported `svc.cost.nanos`, else tokens × the price table; absent (never 0) when not measurable' }),
  ),
  cost_unavailable_reason: Type.Optional(
    stringEnum(CALL_COST_REASONS, {
      description: 'why cost_nanos is absent: missing_usage (neither a reported cost nor a token count), unpriced_model (no model, or no price for it)',
    }),
  ),
};

export const LlmCall = Type.Object(
  {
    trace_id: Type.String({ description: '32 lower-case hex; the run id when the trace is an agent run' }),
    span_id: Type.String({ description: '16 lower-case hex' }),
    started_at: RfcTime,
    duration_ms: Type.Number({ description: 'fractional (microsecond precision)' }),
    canonical_operation: stringEnum(CANONICAL_OPERATIONS as readonly string[], { description: 'the operation of the call: a model operation (chat, text completion, content generation, embeddings)' }),
    service_name: Type.Optional(Type.String({ description: 'resource `service.name`; absent when none was sent' })),
    provider: Type.Optional(Type.String({ description: '`gen_ai.provider.name`, else `gen_ai.system`; absent when none was sent' })),
    model: Type.Optional(Type.String({ description: '`gen_ai.response.model`, else `gen_ai.request.model`; absent when none was sent' })),
    input_tokens: Type.Optional(Tokens('`gen_ai.usage.input_tokens`; absent when not reported (a reported 0 is 0)')),
    output_tokens: Type.Optional(Tokens('`gen_ai.usage.output_tokens`; absent when not reported (a reported 0 is 0)')),
    ...CostFields,
    span_status: stringEnum(SPAN_STATUSES, { description: 'the OpenTelemetry span status as the instrumentation set it' }),
  },
  {
    $id: 'LlmCall',
    description: 'One model call (a span with a model operation), priced exactly as a model step of a run. Recorded content (prompts, completions, attributes) is never returned.',
  },
);

export const ListLlmCallsResponse = Type.Object({
  calls: Type.Array(LlmCall, { description: 'newest first (started_at desc, then span_id desc, then trace_id desc)' }),
  next_cursor: NextCursorField,
});

const UsageFields = {
  model_calls: Tokens('model calls'),
  input_tokens: Tokens('sum of input_tokens over the calls that reported it'),
  output_tokens: Tokens('sum of output_tokens over the calls that reported it'),
  calls_without_usage: Tokens('calls that reported neither input_tokens nor output_tokens'),
  cost_nanos: Type.Optional(Type.Integer({ description: 'sum of the calls\' costs; absent with cost_unavailable_reason when a call has none (never a measured 0 for an unmeasured cost)' })),
  cost_unavailable_reason: Type.Optional(
    stringEnum(CALL_COST_REASONS, { description: 'a call could not be priced: missing_usage when one has no usage, else unpriced_model' }),
  ),
};

export const LlmUsageGroup = Type.Object(
  {
    provider: Type.Optional(Type.String({ description: 'absent for the calls that name no provider' })),
    model: Type.Optional(Type.String({ description: 'absent for the calls that name no model' })),
    ...UsageFields,
  },
  { $id: 'LlmUsageGroup', description: 'The model calls of one (provider, model) in the window' },
);

export const LlmUsageResponse = Type.Object({
  groups: Type.Array(LlmUsageGroup, {
    description: `by model_calls desc, then provider, then model (absent first); at most ${MAX_USAGE_GROUPS}`,
  }),
  totals: Type.Object(UsageFields, { description: 'over every group, also those beyond the cap; cost_nanos is 0 when there is no call' }),
  truncated: Type.Boolean({ description: `true when there were more than ${MAX_USAGE_GROUPS} groups and the list was cut (totals still cover all)` }),
  since: RfcTime,
  until: RfcTime,
});
