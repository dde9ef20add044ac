/** TypeBox schemas of the metrics endpoints (spec 1, "Metrics endpoints"). */
import { Type, type Static } from '@sinclair/typebox';
import { ProjectSelectorQuery, stringEnum } from '../../http/schemas.js';
import { TIME_DESCRIPTION } from '../../http/time.js';
import {
  AGGREGATIONS,
  LABEL_KEY_MAX_LENGTH,
  LABEL_KEY_PATTERN,
  MAX_FILTERS,
  MAX_FILTER_VALUES,
  MAX_GROUP_BY,
  METRIC_TYPES,
  STEPS,
  type Step,
} from './request-rules.js';
import type { Aggregation, MetricType } from './store.js';

const Timestamp = Type.String({ description: TIME_DESCRIPTION });

const MetricName = Type.String({ minLength: 1, description: 'exact metric name' });

const LabelKey = Type.String({
  pattern: LABEL_KEY_PATTERN,
  maxLength: LABEL_KEY_MAX_LENGTH,
  description: 'starts with a letter or underscore, then letters, digits, _, . or -; at most 128 characters',
});

const TimeRange = Type.Object(
  {
    start: Type.Optional(Timestamp),
    end: Type.Optional(Timestamp),
  },
  { additionalProperties: false, description: 'closed window; default the 24 hours ending now' },
);

const StepField = stringEnum<Step>(STEPS, { description: 'bucket width; buckets are aligned to multiples of the step since the Unix epoch (UTC)', default: '1h' });

// ---- GET /metrics/names

export const ListMetricNamesQuery = Type.Object(
  { ...ProjectSelectorQuery, start_time: Type.Optional(Timestamp), end_time: Type.Optional(Timestamp) },
  { additionalProperties: false },
);
export type ListMetricNamesQuery = Static<typeof ListMetricNamesQuery>;

const MetricUnit = Type.Optional(Type.String({ description: 'the unit the instrument last sent (UCUM, e.g. `ms`, `By`); absent when it sent none' }));
const MetricDescription = Type.Optional(Type.String({ description: 'the description the instrument last sent; absent when it sent none' }));

export const MetricNameEntry = Type.Object({
  name: Type.String(),
  type: Type.Optional(stringEnum<MetricType>(METRIC_TYPES, { description: 'present when the ingested data supplies one' })),
  unit: MetricUnit,
  description: MetricDescription,
});

export const ListMetricNamesResponse = Type.Object({
  metrics: Type.Array(MetricNameEntry, { description: 'alphabetical (Unicode code point order), at most 1,000' }),
  total_count: Type.Integer({ description: 'every matching name, also those beyond the cap' }),
  truncated: Type.Optional(Type.Boolean({ description: 'present (true) when the cap cut the list' })),
  retrieved_at: Type.String({ format: 'date-time' }),
});

// ---- GET /metrics/{metric_name}/labels

export const MetricNameParams = Type.Object({ metric_name: Type.String({ minLength: 1, description: 'URL-encoded metric name' }) });

export const ListMetricLabelsQuery = ListMetricNamesQuery;

export const ListMetricLabelsResponse = Type.Object({
  labels: Type.Array(Type.Object({ name: Type.String(), values: Type.Array(Type.String()) })),
});

// ---- POST /metrics/aggregate

export const AggregateMetricBody = Type.Object(
  {
    metric_name: MetricName,
    time_range: Type.Optional(TimeRange),
    step: Type.Optional(StepField),
    aggregation: Type.Optional(stringEnum<Aggregation>(AGGREGATIONS, { default: 'avg' })),
    service_name: Type.Optional(Type.String({ minLength: 1, description: 'exact emitting-service filter' })),
    environment: Type.Optional(Type.String({ minLength: 1, description: 'exact deployment-environment filter' })),
    filters: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: LabelKey,
            values: Type.Array(Type.String({ minLength: 1 }), { minItems: 1, maxItems: MAX_FILTER_VALUES, uniqueItems: true }),
          },
          { additionalProperties: false },
        ),
        { maxItems: MAX_FILTERS, description: 'OR within one filter, AND across filters' },
      ),
    ),
    group_by: Type.Optional(Type.Array(LabelKey, { maxItems: MAX_GROUP_BY, uniqueItems: true })),
  },
  { additionalProperties: false },
);
export type AggregateMetricBody = Static<typeof AggregateMetricBody>;

export const AggregateMetricResponse = Type.Object({
  metric_name: Type.String(),
  aggregation: stringEnum<Aggregation>(AGGREGATIONS),
  type: Type.Optional(
    stringEnum<MetricType>(METRIC_TYPES, {
      description: 'the type the series carry; a histogram is aggregated from its count, sum and buckets, not from one mean per sample',
    }),
  ),
  unit: MetricUnit,
  description: MetricDescription,
  estimated: Type.Boolean({
    description: 'true when the values are estimates: p50, p95 and p99 of a histogram, interpolated within its buckets',
  }),
  series: Type.Array(
    Type.Object({
      labels: Type.Record(Type.String(), Type.String(), { description: 'the group_by keys; a key the series lacks is absent' }),
      points: Type.Array(Type.Object({ timestamp: Type.String({ format: 'date-time' }), value: Type.Number() }), {
        description: 'ordered by time; a bucket with no points is absent',
      }),
    }),
  ),
});

// ---- POST /metrics/histogram

export const HistogramMetricBody = Type.Object(
  {
    metric_name: MetricName,
    step: Type.Optional(StepField),
    time_range: Type.Optional(TimeRange),
    environment: Type.Optional(Type.String({ minLength: 1, description: 'exact deployment-environment filter' })),
  },
  { additionalProperties: false },
);
export type HistogramMetricBody = Static<typeof HistogramMetricBody>;

export const HistogramMetricResponse = Type.Object({
  metric_name: Type.String(),
  step: Type.String(),
  unit: MetricUnit,
  description: MetricDescription,
  cells: Type.Array(
    Type.Object({
      timestamp: Type.String({ format: 'date-time' }),
      upper_bound: Type.Number({ description: 'for the +Inf bucket: the largest finite bound (0 when there is none)' }),
      upper_bound_infinite: Type.Boolean(),
      count: Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: '^[0-9]+$' })], {
        description: 'per bucket, not cumulative; a JSON string when above 2^53-1',
      }),
    }),
  ),
});

// ---- DELETE /metrics/{metric_name}

export const DeleteMetricResponse = Type.Object({
  metric_name: Type.String(),
  deleted: Type.Literal(true),
  deleted_at: Type.String({ format: 'date-time', description: 'datapoints stamped at or before this instant stay hidden' }),
});
