/**
 * Telemetry tables. Times are BIGINT milliseconds since the Unix epoch (UTC).
 * A series is one (project, name, type, service, environment, labels) combination; points reference it.
 */
export const TELEMETRY_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS metric_series (
     project_id VARCHAR NOT NULL,
     series_id UBIGINT NOT NULL,
     name VARCHAR NOT NULL,
     type VARCHAR,            -- counter | gauge | histogram | summary, NULL when the data supplies none
     service_name VARCHAR,
     environment VARCHAR,
     labels VARCHAR NOT NULL, -- JSON object, string values, keys sorted
     PRIMARY KEY (project_id, series_id))`,
  // One row per sample: gauges and sums as reported; histograms and summaries as their mean (sum/count).
  // start_ts is last so that tables created before it (upgraded by the ALTER below) have the same column order.
  `CREATE TABLE IF NOT EXISTS metric_points (
     project_id VARCHAR NOT NULL,
     name VARCHAR NOT NULL,
     series_id UBIGINT NOT NULL,
     ts BIGINT NOT NULL,
     value DOUBLE NOT NULL,
     start_ts BIGINT)         -- cumulative counters only, see below`,
  // start_ts: the OTLP start time (ms) of a CUMULATIVE monotonic Sum sample (type counter; temporality
  // UNSPECIFIED is read as cumulative), whose value is a running total that the reads turn into increases
  // (see domains/metrics/service.ts). -1 when such a sample gave no start time (start_time_unix_nano 0):
  // an unknown start, never read as inside a window, so the sample can only be a baseline. NULL for every
  // other sample (gauges, delta and non-monotonic sums, histogram and summary means): its value is read as
  // stored. Data files written before the column existed get it here, NULL in every old row (so counters
  // stored before the upgrade keep being read as stored).
  `ALTER TABLE metric_points ADD COLUMN IF NOT EXISTS start_ts BIGINT`,
  // Histogram samples with their explicit bucket bounds preserved (exponential ones converted to bounds).
  `CREATE TABLE IF NOT EXISTS metric_histograms (
     project_id VARCHAR NOT NULL,
     name VARCHAR NOT NULL,
     series_id UBIGINT NOT NULL,
     ts BIGINT NOT NULL,
     start_ts BIGINT,
     temporality VARCHAR NOT NULL, -- delta | cumulative
     count UBIGINT NOT NULL,
     sum DOUBLE,
     bounds DOUBLE[] NOT NULL,     -- upper bounds; the last bucket is (last bound, +Inf)
     counts UBIGINT[] NOT NULL)`,
  // What an instrument says of its metric (OTLP Metric.unit and .description), the latest sent wins.
  `CREATE TABLE IF NOT EXISTS metric_metadata (
     project_id VARCHAR NOT NULL,
     name VARCHAR NOT NULL,
     unit VARCHAR NOT NULL,        -- '' when the instrument gave none
     description VARCHAR NOT NULL,
     PRIMARY KEY (project_id, name))`,
  // A durable delete: every point of the name stamped at or before deleted_at_ms stays hidden, also later copies.
  `CREATE TABLE IF NOT EXISTS metric_tombstones (
     project_id VARCHAR NOT NULL,
     name VARCHAR NOT NULL,
     deleted_at_ms BIGINT NOT NULL,
     PRIMARY KEY (project_id, name))`,
  // ---- Traces (issue 4). Times are BIGINT microseconds since the epoch (ms loses span precision,
  // ns does not fit a JS number). The agent-model columns are derived at ingest from each span alone
  // (docs/agent-model.md); runs, sessions and turns are aggregated from them at read time.
  `CREATE TABLE IF NOT EXISTS spans (
     project_id VARCHAR NOT NULL,
     trace_id VARCHAR NOT NULL,        -- 32 lower-case hex
     span_id VARCHAR NOT NULL,         -- 16 lower-case hex
     parent_span_id VARCHAR,           -- NULL for a root span
     name VARCHAR NOT NULL,
     kind VARCHAR NOT NULL,            -- unspecified | internal | server | client | producer | consumer
     start_us BIGINT NOT NULL,
     end_us BIGINT NOT NULL,
     status_code VARCHAR NOT NULL,     -- unset | ok | error (OTLP span status; never used for outcomes)
     status_message VARCHAR,
     service_name VARCHAR,
     environment VARCHAR,
     scope_name VARCHAR,
     attributes VARCHAR NOT NULL,      -- JSON object of the span attributes (values as OTLP AnyValue -> JSON)
     resource_attributes VARCHAR NOT NULL,
     -- agent model, per span
     operation_name VARCHAR,           -- gen_ai.operation.name as sent
     canonical_operation VARCHAR NOT NULL, -- CANONICAL_OPERATION_*, _UNKNOWN when nothing maps
     response_status VARCHAR,          -- gen_ai.response.status as sent
     outcome VARCHAR,                  -- OUTCOME_OK | OUTCOME_ERROR | OUTCOME_CANCELLED | NULL (unset)
     agent_name VARCHAR,
     agent_id VARCHAR,
     observation_key VARCHAR,
     session_key VARCHAR,              -- gen_ai.conversation.id
     turn_id VARCHAR,                  -- svc.turn.id
     run_status VARCHAR,               -- svc.agent.run.status (invoke_agent spans)
     terminal_reason VARCHAR,
     tool_name VARCHAR,
     model VARCHAR,
     provider VARCHAR,
     input_tokens BIGINT,
     output_tokens BIGINT,
     reported_cost_nanos BIGINT,       -- svc.cost.nanos
     safety_check BOOLEAN NOT NULL,    -- svc.safety.check = true
     memory_item_id VARCHAR,
     memory_store VARCHAR,
     memory_provenance VARCHAR,
     memory_trust_label VARCHAR,
     context_events INTEGER NOT NULL,  -- accepted context events (the step is instrumented when > 0)
     ingested_at_us BIGINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS span_events (
     project_id VARCHAR NOT NULL,
     trace_id VARCHAR NOT NULL,
     span_id VARCHAR NOT NULL,
     event_index INTEGER NOT NULL,     -- position in the span's event list
     ts_us BIGINT NOT NULL,
     name VARCHAR NOT NULL,
     attributes VARCHAR NOT NULL,      -- JSON; returned by the trace read, never by /agent-events
     category VARCHAR,                 -- one of the 13 agent-event categories, NULL for a plain span event
     context_kind VARCHAR,             -- assembly | compaction | cache for an accepted context event
     context_detail VARCHAR,           -- JSON of the typed detail as returned (docs/agent-model.md)
     context_source_ids VARCHAR[])`,
  // Who sent each agent identity (spec 2 "Attribution entry"); upserted per ingested batch.
  `CREATE TABLE IF NOT EXISTS agent_sightings (
     project_id VARCHAR NOT NULL,
     observation_key VARCHAR NOT NULL,
     source VARCHAR NOT NULL,          -- api_key | bearer_token | dev_org_header
     api_key_id VARCHAR NOT NULL,      -- '' unless source = api_key
     first_seen_us BIGINT NOT NULL,
     last_seen_us BIGINT NOT NULL,
     sighting_count BIGINT NOT NULL,
     PRIMARY KEY (project_id, observation_key, source, api_key_id))`,
  // Where each agent identity was seen (spec 2 "Asset" environment): the deployment environment of its
  // sightings (resource attribute deployment.environment.name, else deployment.environment), one row per
  // environment, upserted with agent_sightings. A sighting naming no environment (absent or "") adds no
  // row. last_seen_us is refreshed at most once a minute per writer (spans-writer.ts), so the ingest path
  // usually writes nothing here. Data files written before this table existed get it empty here: their
  // sightings stay without an environment (never a made-up one).
  `CREATE TABLE IF NOT EXISTS agent_sighting_environments (
     project_id VARCHAR NOT NULL,
     observation_key VARCHAR NOT NULL,
     environment VARCHAR NOT NULL,
     first_seen_us BIGINT NOT NULL,
     last_seen_us BIGINT NOT NULL,
     PRIMARY KEY (project_id, observation_key, environment))`,
  // ---- Logs (issue 4)
  `CREATE TABLE IF NOT EXISTS logs (
     project_id VARCHAR NOT NULL,
     log_id VARCHAR NOT NULL,          -- assigned at ingest (UUID), for context reads and deletes
     ts_us BIGINT NOT NULL,            -- time_unix_nano, else observed_time_unix_nano, else ingest time
     observed_us BIGINT,
     severity_number INTEGER,          -- 0..24, NULL when unspecified
     severity_text VARCHAR,
     body VARCHAR,                     -- string bodies as is, other AnyValues as JSON
     trace_id VARCHAR,
     span_id VARCHAR,
     service_name VARCHAR,
     environment VARCHAR,
     scope_name VARCHAR,
     attributes VARCHAR NOT NULL,      -- JSON object
     resource_attributes VARCHAR NOT NULL,
     ingested_at_us BIGINT NOT NULL,
     body_class VARCHAR)`,
  // body_class: the content class of a body that is recorded content (a GenAI event's body, by the
  // record's event name: domains/content/content-keys.ts), NULL for an ordinary log body. Decided at
  // ingest; reads, body search and erasure go by it. Data files written before the column existed get
  // it here, NULL in every old row. Last, so that upgraded tables have the same column order.
  `ALTER TABLE logs ADD COLUMN IF NOT EXISTS body_class VARCHAR`,
  // A durable trace delete (spec 1 Authentication rule 10): the trace's rows are removed in the same
  // transaction, and ingestion leaves out every later or retried span of the trace (spans-writer.ts).
  `CREATE TABLE IF NOT EXISTS trace_tombstones (
     project_id VARCHAR NOT NULL,
     trace_id VARCHAR NOT NULL,
     deleted_at_us BIGINT NOT NULL,    -- the first delete
     PRIMARY KEY (project_id, trace_id))`,
  // ---- Summaries kept at ingest (issue 21): one row per trace, per run and per session, written in the
  // transaction that stores the spans changing them (summaries-writer.ts), so that lists never scan spans.
  // The rules are domains/agent-runs/summary.ts; a file written before these tables existed is backfilled
  // once at open (summaries-backfill.ts).
  `CREATE TABLE IF NOT EXISTS trace_summaries (
     project_id VARCHAR NOT NULL,
     trace_id VARCHAR NOT NULL,
     start_us BIGINT NOT NULL,          -- first span start
     end_us BIGINT NOT NULL,            -- last span end
     span_count BIGINT NOT NULL,        -- distinct span ids
     error_count BIGINT NOT NULL,
     services VARCHAR[] NOT NULL,       -- distinct service names, code point order
     root_span_id VARCHAR NOT NULL,
     root_name VARCHAR NOT NULL,
     root_service VARCHAR,
     root_missing BOOLEAN NOT NULL,
     first_ingested_us BIGINT NOT NULL, -- ingest times of the first and last stored copy: a detail read looks only there
     last_ingested_us BIGINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS run_summaries (
     project_id VARCHAR NOT NULL,
     trace_id VARCHAR NOT NULL,
     root_span_id VARCHAR NOT NULL,
     agent_name VARCHAR,
     agent_id VARCHAR,
     observation_key VARCHAR,
     service_name VARCHAR,
     environment VARCHAR,
     session_key VARCHAR,
     turn_id VARCHAR,
     status VARCHAR,
     terminal_reason VARCHAR,
     start_us BIGINT NOT NULL,
     end_us BIGINT NOT NULL,
     step_count BIGINT NOT NULL,
     error_steps BIGINT NOT NULL,
     tool_calls BIGINT NOT NULL,
     model_calls BIGINT NOT NULL,
     safety_outcomes BIGINT NOT NULL,
     safety_errors BIGINT NOT NULL,
     usage VARCHAR NOT NULL)            -- JSON [[provider, model, input, output, reported cost, calls], ...]: priced when read`,
  `CREATE TABLE IF NOT EXISTS session_summaries (
     project_id VARCHAR NOT NULL,
     session_key VARCHAR NOT NULL,
     run_count BIGINT NOT NULL,
     turn_count BIGINT NOT NULL,
     start_us BIGINT NOT NULL,
     end_us BIGINT NOT NULL,
     call_totals VARCHAR)             -- JSON: its runs' model calls summed by model (call-totals.ts); NULL: not kept
  `,
  // A run's or trace's own row is found through these (DuckDB uses an index only for a filter on its column
  // alone, so the reads ask by trace id and keep the project's row: agent-runs-query.ts `byTrace`).
  `CREATE INDEX IF NOT EXISTS trace_summaries_trace ON trace_summaries (trace_id)`,
  `CREATE INDEX IF NOT EXISTS run_summaries_trace ON run_summaries (trace_id)`,
  // One trace's spans and events (the trace and run detail reads, a run's steps) are found through these:
  // about 1 ms against 3-4 ms for the scan of the trace's ingest range, paid at ingest (see docs/benchmarks.md).
  `CREATE INDEX IF NOT EXISTS spans_trace ON spans (trace_id)`,
  `CREATE INDEX IF NOT EXISTS span_events_trace ON span_events (trace_id)`,
  // One-time upgrades done on this file (name -> when).
  `CREATE TABLE IF NOT EXISTS telemetry_upgrades (
     name VARCHAR PRIMARY KEY,
     done_at_us BIGINT NOT NULL)`,
];
