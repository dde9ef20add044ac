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
  // A durable delete: every point of the name stamped at or before deleted_at_ms stays hidden, also later copies.
  `CREATE TABLE IF NOT EXISTS metric_tombstones (
     project_id VARCHAR NOT NULL,
     name VARCHAR NOT NULL,
     deleted_at_ms BIGINT NOT NULL,
     PRIMARY KEY (project_id, name))`,
];
