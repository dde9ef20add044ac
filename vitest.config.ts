import { defineConfig } from 'vitest/config';

/**
 * Two projects: every test on the embedded engine (DuckDB), and the telemetry tests again on ClickHouse
 * (SVC_TEST_TELEMETRY=clickhouse: each test app on its own database of the run's ClickHouse endpoint, which
 * test/global-setup.ts starts). A test that reads DuckDB's own rows says so and runs on DuckDB only.
 */
const CLICKHOUSE_SUITES = [
  'server/src/domains/traces/**/*.test.ts',
  'server/src/domains/logs/**/*.test.ts',
  'server/src/domains/metrics/**/*.test.ts',
  'server/src/domains/agent-runs/**/*.test.ts',
  'server/src/domains/llm/**/*.test.ts',
  'server/src/domains/memory/**/*.test.ts',
  'server/src/domains/content-erasure/**/*.test.ts',
  'server/src/domains/content-policy/log-bodies.test.ts',
  'server/src/domains/fleet/**/*.test.ts',
  'server/src/domains/assets/**/*.test.ts',
  'server/src/domains/quarantines/**/*.test.ts',
  'server/src/domains/evaluations/datasets/**/*.test.ts',
  'server/src/domains/evaluations/scoring/**/*.test.ts',
  // Retention windows: every read hides what is older, the sweep deletes it (docs/retention.md).
  'server/src/domains/telemetry-retention/reads.test.ts',
  'server/src/domains/telemetry-retention/sweep.test.ts',
  'server/src/http/time.test.ts',
  'server/src/ingest/otlp/*.test.ts',
  'server/src/ingest/otlp/frameworks/*.test.ts',
  'server/src/http/window-routes-bad-input.test.ts',
  'server/src/storage/telemetry/clickhouse/**/*.test.ts',
  // End to end: the real server on PostgreSQL + ClickHouse (server/src/testing/server-process.ts).
  'test/e2e.test.ts',
  'test/agent-e2e.test.ts',
  // Two server processes sharing PostgreSQL and one ClickHouse: ingest through one, read and tail through the other.
  'test/several-nodes-e2e.test.ts',
];

export default defineConfig({
  test: {
    globalSetup: ['test/global-setup.ts'],
    reporters: ['default', './test/summary-reporter.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'duckdb',
          include: ['server/src/**/*.test.ts', 'cli/src/**/*.test.ts', 'test/**/*.test.ts', 'tools/**/*.test.ts', 'web/scripts/**/*.test.ts'],
          // The ClickHouse adapters' own tests need no second engine: they run in the clickhouse project only.
          exclude: ['server/src/storage/telemetry/clickhouse/**', '**/node_modules/**'],
        },
      },
      {
        extends: true,
        test: {
          name: 'clickhouse',
          include: CLICKHOUSE_SUITES,
          // DuckDB's own durability (its WAL replayed after kill -9): no counterpart on a ClickHouse server.
          exclude: ['server/src/ingest/otlp/traces-durability.test.ts', 'server/src/ingest/otlp/durability.test.ts'],
          env: { SVC_TEST_TELEMETRY: 'clickhouse' },
        },
      },
    ],
  },
});
