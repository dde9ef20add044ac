/** TypeBox schemas of `/logs` and `/stream/logs` (spec 1, "Raw observability"; the fields are ours, see service.ts). */
import { Type, type Static } from '@sinclair/typebox';
import { PageQuery, NextCursorField } from '../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { STEPS, type Step } from '../metrics/request-rules.js';
import { MAX_ATTR_KEYS, MAX_ATTR_VALUES, TRACE_ID_PATTERN } from '../traces/query-rules.js';
import { AttrQuery, Attributes, RfcTime, ServiceQuery, WindowQuery, Withheld } from '../traces/schemas.js';
import { SEVERITIES, type Severity } from './severity.js';

export const LOG_SORTS = ['timestamp_desc', 'timestamp_asc'] as const;
export type LogSort = (typeof LOG_SORTS)[number];

const SeverityField = stringEnum<Severity>(SEVERITIES, {
  description: 'minimum severity: this one and the more severe ones; records without a severity never match',
});
const TextField = Type.String({ minLength: 1, maxLength: 1000, description: 'case-insensitive substring of the body' });
const TraceIdField = Type.String({ pattern: TRACE_ID_PATTERN, description: 'exact trace id, 32 hex digits (case-insensitive)' });

/** The filters every log read and the tail share. */
export const LogFilterQuery = {
  service: ServiceQuery,
  severity: Type.Optional(SeverityField),
  q: Type.Optional(TextField),
  trace_id: Type.Optional(TraceIdField),
  attr: AttrQuery,
};

/** The query of a log read over a window: the project, the window and the filters. */
const WindowedLogQuery = { ...ProjectSelectorQuery, ...WindowQuery, ...LogFilterQuery };

export const LogRecord = Type.Object(
  {
    log_id: Type.String({ description: 'assigned at ingest; for context reads and deletes' }),
    timestamp: RfcTime,
    observed_at: Type.Optional(RfcTime),
    severity: Type.Optional(stringEnum<Severity>(SEVERITIES, { description: 'normalized severity; absent when the record states none' })),
    severity_number: Type.Optional(Type.Integer({ description: 'OTLP severity number 1..24, as sent' })),
    severity_text: Type.Optional(Type.String({ description: 'as sent' })),
    body: Type.Union([Type.String(), Type.Null()], {
      description:
        'string bodies as sent, other values as JSON text; null when none. A GenAI event body is recorded content: as the content policy lets it be stored and read (a size marker under allow_metadata, null when withheld)',
    }),
    body_withheld: Type.Optional(Type.Literal(true, { description: 'the body is recorded content this reader is not served (the body is null)' })),
    trace_id: Type.Optional(Type.String()),
    span_id: Type.Optional(Type.String()),
    service_name: Type.Optional(Type.String()),
    environment: Type.Optional(Type.String()),
    scope_name: Type.Optional(Type.String({ description: 'instrumentation scope (logger name)' })),
    attributes: Attributes,
    resource_attributes: Attributes,
    withheld_attribute_keys: Withheld,
  },
  { description: 'a log record' },
);

// ---- GET /logs

export const SearchLogsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...WindowQuery,
    ...PageQuery,
    ...LogFilterQuery,
    sort: Type.Optional(stringEnum<LogSort>(LOG_SORTS, { default: 'timestamp_desc' })),
  },
  { additionalProperties: false },
);
export type SearchLogsQuery = Static<typeof SearchLogsQuery>;

export const SearchLogsResponse = Type.Object({
  logs: Type.Array(LogRecord, { description: 'by time (then log id), in the sort order' }),
  next_cursor: NextCursorField,
});

// ---- POST /logs/aggregate

export const AggregateLogsBody = Type.Object(
  {
    since: WindowQuery.since,
    until: WindowQuery.until,
    step: Type.Optional(
      stringEnum<Step>(STEPS, {
        description: 'bucket width, buckets aligned to multiples of the step since the epoch (UTC); absent: one total count per group',
      }),
    ),
    group_by: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), {
        maxItems: 2,
        uniqueItems: true,
        description: 'up to two of: service, severity, attr.<key> (an attribute, else resource attribute)',
      }),
    ),
    service: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { description: 'exact service.name values (OR)' })),
    severity: Type.Optional(SeverityField),
    q: Type.Optional(TextField),
    trace_id: Type.Optional(TraceIdField),
    attr: Type.Optional(
      Type.Array(Type.String(), { description: `key=value conditions as in GET /logs; at most ${MAX_ATTR_KEYS} keys, ${MAX_ATTR_VALUES} values per key` }),
    ),
  },
  { additionalProperties: false },
);
export type AggregateLogsBody = Static<typeof AggregateLogsBody>;

export const AggregateLogsResponse = Type.Object({
  since: RfcTime,
  until: RfcTime,
  step: Type.Optional(Type.String()),
  series: Type.Array(
    Type.Object({
      group: Type.Record(Type.String(), Type.String(), { description: 'the group_by entries; an entry the logs lack is absent' }),
      count: Type.Integer({ description: 'logs of the group in the window' }),
      points: Type.Optional(
        Type.Array(Type.Object({ timestamp: RfcTime, count: Type.Integer() }), {
          description: 'present with a step: every bucket of the window in time order, 0 when no log fell in it',
        }),
      ),
    }),
    { description: 'largest count first, then by group values; at most 50' },
  ),
});

// ---- GET /logs/fields

export const LogFieldsQuery = Type.Object({ ...WindowedLogQuery }, { additionalProperties: false });
export type LogFieldsQuery = Static<typeof LogFieldsQuery>;

export const LogFieldsResponse = Type.Object({
  fields: Type.Array(
    Type.Object({
      key: Type.String(),
      source: Type.Union([Type.Literal('attributes'), Type.Literal('resource_attributes')]),
      count: Type.Integer({ description: 'logs (of those read) holding the key' }),
      distinct_values: Type.Integer(),
      top_values: Type.Array(Type.Object({ value: Type.String(), count: Type.Integer() }), {
        description: 'most frequent first, at most 10; values longer than 256 characters are not listed',
      }),
    }),
    { description: 'most frequent keys first, at most 200' },
  ),
  total_count: Type.Integer({ description: 'distinct (source, key) pairs in the logs read' }),
  truncated: Type.Optional(Type.Boolean({ description: 'present (true) when the 200-key cap cut the list' })),
  scanned: Type.Integer({ description: 'logs read: the newest matching ones, at most 10,000' }),
  sampled: Type.Boolean({ description: 'true when more logs matched than were read' }),
});

// ---- GET /logs/patterns

export const LogPatternsQuery = Type.Object(
  {
    ...WindowedLogQuery,
    limit: Type.Optional(Type.Integer({ minimum: 0, maximum: 4294967295, description: 'patterns returned, default 50, 1 to 200' })),
  },
  { additionalProperties: false },
);
export type LogPatternsQuery = Static<typeof LogPatternsQuery>;

export const LogPatternsResponse = Type.Object({
  patterns: Type.Array(
    Type.Object({
      pattern_id: Type.String({ description: 'stable id of the pattern text (16 hex)' }),
      pattern: Type.String({ description: 'the body with <str>, <uuid>, <time>, <ip>, <hex>, <num> placeholders' }),
      count: Type.Integer(),
      first_seen: RfcTime,
      last_seen: RfcTime,
      services: Type.Array(Type.String(), { description: 'services of the logs, sorted, at most 20' }),
      example: Type.Object({
        log_id: Type.String(),
        timestamp: RfcTime,
        body: Type.Union([Type.String(), Type.Null()], { description: 'the newest body, first 4,096 characters; null when withheld' }),
        body_withheld: Type.Optional(Type.Literal(true, { description: 'recorded content this reader is not served' })),
      }),
    }),
    { description: 'largest count first, then pattern' },
  ),
  total_patterns: Type.Integer({ description: 'distinct patterns in the logs read' }),
  scanned: Type.Integer({ description: 'logs read: the newest matching ones, at most 10,000' }),
  sampled: Type.Boolean({ description: 'true when more logs matched than were read' }),
});

// ---- GET /logs/{logId}/context

export const LogParams = Type.Object({ logId: Type.String({ minLength: 1, maxLength: 200 }) });
export const LogContextQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    before: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 10, description: 'logs before, 0 to 100' })),
    after: Type.Optional(Type.Integer({ minimum: 0, maximum: 100, default: 10, description: 'logs after, 0 to 100' })),
  },
  { additionalProperties: false },
);
export type LogContextQuery = Static<typeof LogContextQuery>;

export const LogContextResponse = Type.Object({
  log: LogRecord,
  before: Type.Array(LogRecord, { description: 'the nearest earlier logs of the same service, oldest first' }),
  after: Type.Array(LogRecord, { description: 'the nearest later logs of the same service, oldest first' }),
});

// ---- DELETE /logs

export const DeleteLogsQuery = Type.Object(
  {
    ...WindowedLogQuery,
    log_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'one log record' })),
  },
  { additionalProperties: false },
);
export type DeleteLogsQuery = Static<typeof DeleteLogsQuery>;

export const DeleteLogsResponse = Type.Object({ deleted: Type.Integer({ description: 'log records removed' }) });

// ---- GET /stream/logs

export const TailLogsQuery = Type.Object({ ...ProjectSelectorQuery, ...LogFilterQuery }, { additionalProperties: false });
export type TailLogsQuery = Static<typeof TailLogsQuery>;
