/**
 * The ClickHouse engine's tables (docs/scale-out.md "ClickHouse schema"). Every table is ordered for its
 * reads with the project first. One definition, two modes:
 * - single server: each table is a MergeTree-family table under its own name;
 * - cluster (`SVC_CLICKHOUSE_CLUSTER`): each table is a Replicated* table `<name>_local` on every node
 *   (`ON CLUSTER`), and `<name>` is a Distributed table over them sharded by `cityHash64(project_id)`, so a
 *   project's rows live on one shard and per-project reads (FINAL, GROUP BY) are complete on that shard.
 * Reads and inserts go to `<name>`; a lightweight DELETE goes to the local tables (`deleteTarget`).
 *
 * Times are Int64 microseconds (spans, logs) or milliseconds (metrics) since the epoch, as on DuckDB.
 * Rows that are rewritten (summaries, metadata) are versioned ReplacingMergeTree rows read with FINAL;
 * counters of sightings and tombstones are AggregatingMergeTree rows with simple aggregate columns
 * (min / max / sum), read with the same aggregate in a GROUP BY.
 */

export type TableEngine =
  | { kind: 'MergeTree' }
  | { kind: 'ReplacingMergeTree'; version: string; isDeleted?: string }
  | { kind: 'AggregatingMergeTree' };

export interface TableSpec {
  name: string;
  columns: string[];
  engine: TableEngine;
  orderBy: string;
  partitionBy?: string;
  indexes?: string[];
}

const SPAN_COLUMNS = [
  'project_id String',
  'trace_id String',
  'span_id String',
  'parent_span_id Nullable(String)',
  'name String',
  'kind LowCardinality(String)',
  'start_us Int64',
  'end_us Int64',
  'status_code LowCardinality(String)',
  'status_message Nullable(String)',
  'service_name Nullable(String)',
  'environment Nullable(String)',
  'scope_name Nullable(String)',
  'attributes String',
  'resource_attributes String',
  'operation_name Nullable(String)',
  'canonical_operation LowCardinality(String)',
  'response_status Nullable(String)',
  'outcome LowCardinality(Nullable(String))',
  'agent_name Nullable(String)',
  'agent_id Nullable(String)',
  'observation_key Nullable(String)',
  'session_key Nullable(String)',
  'turn_id Nullable(String)',
  'run_status Nullable(String)',
  'terminal_reason Nullable(String)',
  'tool_name Nullable(String)',
  'model Nullable(String)',
  'provider Nullable(String)',
  'input_tokens Nullable(Int64)',
  'output_tokens Nullable(Int64)',
  'reported_cost_nanos Nullable(Int64)',
  'safety_check Bool',
  'memory_item_id Nullable(String)',
  'memory_store Nullable(String)',
  'memory_provenance Nullable(String)',
  'memory_trust_label Nullable(String)',
  'context_events Int32',
  'ingested_at_us Int64',
];

export const TABLES: TableSpec[] = [
  {
    name: 'metric_series',
    columns: ['project_id String', 'series_id UInt64', 'name String', 'type LowCardinality(Nullable(String))', 'service_name Nullable(String)', 'environment Nullable(String)', 'labels String'],
    // A series id is a hash of everything else in the row: copies are equal, any one is the row.
    engine: { kind: 'ReplacingMergeTree', version: '' },
    orderBy: '(project_id, series_id)',
  },
  {
    name: 'metric_points',
    columns: ['project_id String', 'name LowCardinality(String)', 'series_id UInt64', 'ts Int64', 'value Float64', 'start_ts Nullable(Int64)'],
    engine: { kind: 'MergeTree' },
    orderBy: '(project_id, name, series_id, ts)',
    partitionBy: 'toYYYYMM(fromUnixTimestamp64Milli(ts))',
  },
  {
    name: 'metric_histograms',
    columns: [
      'project_id String',
      'name LowCardinality(String)',
      'series_id UInt64',
      'ts Int64',
      'start_ts Nullable(Int64)',
      'temporality LowCardinality(String)',
      'count UInt64',
      'sum Nullable(Float64)',
      'bounds Array(Float64)',
      'counts Array(UInt64)',
    ],
    engine: { kind: 'MergeTree' },
    orderBy: '(project_id, name, series_id, ts)',
    partitionBy: 'toYYYYMM(fromUnixTimestamp64Milli(ts))',
  },
  {
    name: 'metric_metadata',
    columns: ['project_id String', 'name String', 'unit String', 'description String', 'version UInt64'],
    engine: { kind: 'ReplacingMergeTree', version: 'version' },
    orderBy: '(project_id, name)',
  },
  {
    name: 'metric_tombstones',
    columns: ['project_id String', 'name String', 'deleted_at_ms SimpleAggregateFunction(max, Int64)'],
    engine: { kind: 'AggregatingMergeTree' },
    orderBy: '(project_id, name)',
  },
  {
    name: 'spans',
    columns: SPAN_COLUMNS,
    engine: { kind: 'MergeTree' },
    // One run's or trace's spans are one range of the key: a detail read never scans.
    orderBy: '(project_id, trace_id, span_id)',
    partitionBy: 'toYYYYMM(fromUnixTimestamp64Micro(start_us))',
    indexes: ['INDEX spans_start start_us TYPE minmax GRANULARITY 4'],
  },
  {
    name: 'span_events',
    columns: [
      'project_id String',
      'trace_id String',
      'span_id String',
      'event_index Int32',
      'ts_us Int64',
      'name String',
      'attributes String',
      'category LowCardinality(Nullable(String))',
      'context_kind LowCardinality(Nullable(String))',
      'context_detail Nullable(String)',
      'context_source_ids Array(String)',
    ],
    engine: { kind: 'MergeTree' },
    orderBy: '(project_id, trace_id, span_id, event_index)',
    partitionBy: 'toYYYYMM(fromUnixTimestamp64Micro(ts_us))',
    indexes: ['INDEX span_events_ts ts_us TYPE minmax GRANULARITY 4'],
  },
  {
    name: 'agent_sightings',
    columns: [
      'project_id String',
      'observation_key String',
      'source LowCardinality(String)',
      'api_key_id String',
      'first_seen_us SimpleAggregateFunction(min, Int64)',
      'last_seen_us SimpleAggregateFunction(max, Int64)',
      'sighting_count SimpleAggregateFunction(sum, Int64)',
    ],
    engine: { kind: 'AggregatingMergeTree' },
    orderBy: '(project_id, observation_key, source, api_key_id)',
  },
  {
    name: 'agent_sighting_environments',
    columns: ['project_id String', 'observation_key String', 'environment String', 'first_seen_us SimpleAggregateFunction(min, Int64)', 'last_seen_us SimpleAggregateFunction(max, Int64)'],
    engine: { kind: 'AggregatingMergeTree' },
    orderBy: '(project_id, observation_key, environment)',
  },
  {
    name: 'logs',
    columns: [
      'project_id String',
      'log_id String',
      'ts_us Int64',
      'observed_us Nullable(Int64)',
      'severity_number Nullable(Int32)',
      'severity_text Nullable(String)',
      'body Nullable(String)',
      'trace_id Nullable(String)',
      'span_id Nullable(String)',
      'service_name Nullable(String)',
      'environment Nullable(String)',
      'scope_name Nullable(String)',
      'attributes String',
      'resource_attributes String',
      'ingested_at_us Int64',
      'body_class LowCardinality(Nullable(String))',
    ],
    engine: { kind: 'MergeTree' },
    orderBy: '(project_id, ts_us, log_id)',
    partitionBy: 'toYYYYMM(fromUnixTimestamp64Micro(ts_us))',
    // A log by id (context, a tail's resume, a delete by id) and by trace skip the granules without it; the
    // live tail reads by ingest time, which follows the log time closely.
    indexes: [
      'INDEX logs_id log_id TYPE bloom_filter GRANULARITY 4',
      'INDEX logs_trace trace_id TYPE bloom_filter GRANULARITY 4',
      'INDEX logs_ingested ingested_at_us TYPE minmax GRANULARITY 4',
    ],
  },
  {
    name: 'trace_tombstones',
    columns: ['project_id String', 'trace_id String', 'deleted_at_us SimpleAggregateFunction(min, Int64)'],
    engine: { kind: 'AggregatingMergeTree' },
    orderBy: '(project_id, trace_id)',
  },
  // Summaries kept at ingest (docs/summaries.md): one versioned row per trace and per run, rewritten by the
  // spans writer from every stored span of the trace; `version` grows with the spans seen, `is_deleted` ends a row.
  {
    name: 'trace_summaries',
    columns: [
      'project_id String',
      'trace_id String',
      'start_us Int64',
      'end_us Int64',
      'span_count Int64',
      'error_count Int64',
      'services Array(String)',
      'root_span_id String',
      'root_name String',
      'root_service Nullable(String)',
      'root_missing Bool',
      'first_ingested_us Int64',
      'last_ingested_us Int64',
      'version UInt64',
      'is_deleted UInt8',
    ],
    engine: { kind: 'ReplacingMergeTree', version: 'version', isDeleted: 'is_deleted' },
    orderBy: '(project_id, trace_id)',
    indexes: ['INDEX trace_summaries_start start_us TYPE minmax GRANULARITY 1'],
  },
  {
    name: 'run_summaries',
    columns: [
      'project_id String',
      'trace_id String',
      'root_span_id String',
      'agent_name Nullable(String)',
      'agent_id Nullable(String)',
      'observation_key Nullable(String)',
      'service_name Nullable(String)',
      'environment Nullable(String)',
      'session_key Nullable(String)',
      'turn_id Nullable(String)',
      'status Nullable(String)',
      'terminal_reason Nullable(String)',
      'start_us Int64',
      'end_us Int64',
      'step_count Int64',
      'error_steps Int64',
      'tool_calls Int64',
      'model_calls Int64',
      'safety_outcomes Int64',
      'safety_errors Int64',
      'usage String',
      'version UInt64',
      'is_deleted UInt8',
    ],
    engine: { kind: 'ReplacingMergeTree', version: 'version', isDeleted: 'is_deleted' },
    orderBy: '(project_id, trace_id)',
    indexes: ['INDEX run_summaries_start start_us TYPE minmax GRANULARITY 1', 'INDEX run_summaries_session session_key TYPE bloom_filter GRANULARITY 4'],
  },
];

export interface SchemaOptions {
  database: string;
  cluster?: string;
}

const q = (id: string) => `\`${id}\``;

function engineClause(spec: TableSpec, cluster: string | undefined, database: string): string {
  const e = spec.engine;
  const args = e.kind === 'ReplacingMergeTree' ? [e.version, e.isDeleted].filter((a): a is string => !!a) : [];
  if (!cluster) return `${e.kind}(${args.join(', ')})`;
  const replicated = [`'/clickhouse/tables/{shard}/${database}/${spec.name}_local'`, `'{replica}'`, ...args];
  return `Replicated${e.kind}(${replicated.join(', ')})`;
}

/** The statements that create the database and every table, in order; each is idempotent (IF NOT EXISTS). */
export function schemaStatements(opts: SchemaOptions): string[] {
  const db = q(opts.database);
  const on = opts.cluster ? ` ON CLUSTER ${q(opts.cluster)}` : '';
  const out = [`CREATE DATABASE IF NOT EXISTS ${db}${on}`];
  for (const t of TABLES) {
    const local = opts.cluster ? `${t.name}_local` : t.name;
    const body = [...t.columns, ...(t.indexes ?? [])].map((c) => `  ${c}`).join(',\n');
    out.push(
      [
        `CREATE TABLE IF NOT EXISTS ${db}.${q(local)}${on} (\n${body}\n)`,
        `ENGINE = ${engineClause(t, opts.cluster, opts.database)}`,
        ...(t.partitionBy ? [`PARTITION BY ${t.partitionBy}`] : []),
        `ORDER BY ${t.orderBy}`,
      ].join('\n'),
    );
    if (opts.cluster)
      out.push(`CREATE TABLE IF NOT EXISTS ${db}.${q(t.name)}${on} AS ${db}.${q(local)} ENGINE = Distributed(${q(opts.cluster)}, ${db}, ${q(local)}, cityHash64(project_id))`);
  }
  return out;
}

/** Where a lightweight DELETE of a table's rows goes: the table itself, or every shard's local table. */
export function deleteTarget(opts: SchemaOptions, table: string): string {
  return opts.cluster ? `${q(opts.database)}.${q(`${table}_local`)} ON CLUSTER ${q(opts.cluster)}` : `${q(opts.database)}.${q(table)}`;
}
