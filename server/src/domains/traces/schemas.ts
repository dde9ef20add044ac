/** TypeBox schemas of `/services` and `/traces` (spec 1, "Raw observability"; the fields are ours, see service.ts). */
import { Type, type Static } from '@sinclair/typebox';
import { PageQuery, NextCursorField } from '../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { TIME_DESCRIPTION } from '../../http/time.js';
import { MAX_ATTR_KEYS, MAX_ATTR_VALUES, TRACE_ID_PATTERN } from './query-rules.js';
import { SPAN_STATUSES, type SpanStatus } from './store.js';

/** The largest duration filter: 10^12 ms (~31 years); a larger one would not fit the store's microsecond integers. */
export const MAX_DURATION_MS = 1e12;

export const Time = Type.String({ description: TIME_DESCRIPTION });
export const WindowQuery = {
  since: Type.Optional(Type.String({ description: `${Time.description}; window start (inclusive), default until minus 24 hours` })),
  until: Type.Optional(Type.String({ description: `${Time.description}; window end (inclusive), default now` })),
};

export const AttrQuery = Type.Optional(
  Type.Array(Type.String(), {
    description: `repeatable attribute condition key=value (split at the first "="); the same key repeated ORs its values, different keys AND; matched against the item's attributes, else its resource attributes; values compare as text (numbers and booleans in JSON form); at most ${MAX_ATTR_KEYS} keys and ${MAX_ATTR_VALUES} values per key; keys: a letter or underscore, then letters, digits, _, . or -, at most 128 characters`,
  }),
);

export const ServiceQuery = Type.Optional(
  Type.Array(Type.String({ minLength: 1 }), { description: 'exact service.name; repeatable or comma-separated (OR)' }),
);

export const RfcTime = Type.String({ format: 'date-time', description: 'RFC 3339 UTC with microseconds' });
export const Attributes = Type.Record(Type.String(), Type.Unknown(), {
  description: 'OTLP attributes as JSON: strings, numbers (integers beyond 2^53 as strings), booleans, arrays, maps; bytes as base64',
});
export const Withheld = Type.Optional(
  Type.Array(Type.String(), { description: 'recorded-content attribute keys left out because the credential lacks agents:content:read' }),
);

// ---- GET /services

export const ListServicesQuery = Type.Object({ ...ProjectSelectorQuery, ...WindowQuery }, { additionalProperties: false });
export type ListServicesQuery = Static<typeof ListServicesQuery>;

export const ServiceEntry = Type.Object({
  name: Type.String({ description: 'resource service.name' }),
  span_count: Type.Optional(Type.Integer({ description: 'spans starting in the window (present with traces:read)' })),
  error_span_count: Type.Optional(Type.Integer({ description: 'of those, spans with status error (present with traces:read)' })),
  log_count: Type.Optional(Type.Integer({ description: 'log records stamped in the window (present with logs:read)' })),
  first_seen: RfcTime,
  last_seen: RfcTime,
});

export const ListServicesResponse = Type.Object({
  services: Type.Array(ServiceEntry, { description: 'ordered by name (code point order), at most 1,000' }),
  total_count: Type.Integer({ description: 'every service seen in the window, also those beyond the cap' }),
  truncated: Type.Optional(Type.Boolean({ description: 'present (true) when the cap cut the list' })),
  since: RfcTime,
  until: RfcTime,
});

// ---- GET /traces

export const SearchTracesQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...WindowQuery,
    ...PageQuery,
    service: ServiceQuery,
    name: Type.Optional(Type.String({ minLength: 1, description: 'exact span name' })),
    status: Type.Optional(stringEnum<SpanStatus>(SPAN_STATUSES, { description: 'span status code' })),
    min_duration_ms: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_DURATION_MS, description: `trace duration at least this (ms, fractional allowed; 0 to ${MAX_DURATION_MS})` })),
    max_duration_ms: Type.Optional(Type.Number({ minimum: 0, maximum: MAX_DURATION_MS, description: `trace duration at most this (ms, fractional allowed; 0 to ${MAX_DURATION_MS})` })),
    attr: AttrQuery,
  },
  { additionalProperties: false },
);
export type SearchTracesQuery = Static<typeof SearchTracesQuery>;

export const TraceSummary = Type.Object({
  trace_id: Type.String({ description: '32 lower-case hex' }),
  root_span_id: Type.String(),
  root_span_name: Type.String(),
  root_service_name: Type.Optional(Type.String({ description: 'absent when the root span has no service.name' })),
  root_missing: Type.Boolean({
    description: 'true when no span of the trace is parentless (root not received); root_* then describe the earliest span',
  }),
  started_at: RfcTime,
  ended_at: RfcTime,
  duration_ms: Type.Number({ description: 'first span start to last span end' }),
  span_count: Type.Integer(),
  error_count: Type.Integer({ description: 'spans with status error' }),
  services: Type.Array(Type.String(), { description: 'distinct service.name values of the spans, sorted' }),
});

export const SearchTracesResponse = Type.Object({
  traces: Type.Array(TraceSummary, { description: 'newest first (by trace start, then trace id)' }),
  next_cursor: NextCursorField,
});

// ---- GET /traces/{traceId}, DELETE /traces/{traceId}

export const TraceParams = Type.Object({ traceId: Type.String({ pattern: TRACE_ID_PATTERN, description: '32 hex digits (case-insensitive)' }) });

const SpanEvent = Type.Object({
  name: Type.String(),
  timestamp: RfcTime,
  attributes: Attributes,
  withheld_attribute_keys: Withheld,
});

export const SpanNode = Type.Object({
  span_id: Type.String({ description: '16 lower-case hex' }),
  parent_span_id: Type.Optional(Type.String({ description: 'absent for a root span' })),
  depth: Type.Integer({ description: '0 for a span at the top level (a root or an orphan), its parent\'s depth + 1 otherwise' }),
  orphan: Type.Optional(
    Type.Literal(true, { description: 'present when the parent span is not in the trace (or the parents form a cycle); the span is then at the top level' }),
  ),
  children: Type.Array(Type.String(), { description: 'span ids of the child spans, ordered by start then span id; each follows in the list' }),
  name: Type.String(),
  kind: Type.String({ description: 'unspecified | internal | server | client | producer | consumer' }),
  service_name: Type.Optional(Type.String()),
  environment: Type.Optional(Type.String()),
  scope_name: Type.Optional(Type.String({ description: 'instrumentation scope' })),
  started_at: RfcTime,
  ended_at: RfcTime,
  duration_ms: Type.Number(),
  status: Type.Object({ code: Type.String({ description: 'unset | ok | error' }), message: Type.Optional(Type.String()) }),
  attributes: Attributes,
  resource_attributes: Attributes,
  withheld_attribute_keys: Withheld,
  events: Type.Array(SpanEvent, { description: 'span events in their recorded order' }),
});

export const TraceResponse = Type.Object({
  trace_id: Type.String(),
  started_at: RfcTime,
  ended_at: RfcTime,
  duration_ms: Type.Number(),
  span_count: Type.Integer(),
  error_count: Type.Integer(),
  services: Type.Array(Type.String()),
  spans: Type.Array(SpanNode, {
    description:
      'the span tree in depth-first order: each top-level span (roots and orphans, by start then span id) followed by its subtree, children by start then span id; every span exactly once. Indent by depth to draw the tree.',
  }),
});

export const DeleteTraceResponse = Type.Object({
  trace_id: Type.String(),
  deleted: Type.Literal(true),
  spans_deleted: Type.Integer(),
  events_deleted: Type.Integer(),
});
