/**
 * Test-only: the ClickHouse side of the telemetry tests. `openTestChDb` makes a database of its own on the
 * run's ClickHouse endpoint (test/global-setup.ts: SVC_TEST_CLICKHOUSE_URL, else one clickhouse:local) and
 * drops it at the end.
 *
 * While the ClickHouse engine is being built port by port, `CLICKHOUSE_PORTS` lists the ports that exist:
 * a test app opened with `SVC_TEST_TELEMETRY=clickhouse` (or `testApp({ telemetry: 'clickhouse' })`) takes
 * those ports from ClickHouse and the others from an in-memory DuckDB, so each port's domain tests run on
 * both engines as soon as the port exists. When every port is listed, the engine is ClickHouseTelemetry.
 */
import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { clickhouseSettings } from '../config.js';
import { openChTelemetryDb, type ChTelemetryDb } from '../storage/telemetry/clickhouse/db.js';
import type { TelemetryEngine } from '../storage/telemetry/engine.js';

export type TelemetryKind = 'duckdb' | 'clickhouse';

/** The engine of the run's test apps: SVC_TEST_TELEMETRY (`duckdb`, the default, or `clickhouse`). */
export function testTelemetryKind(): TelemetryKind {
  const k = process.env.SVC_TEST_TELEMETRY || 'duckdb';
  if (k !== 'duckdb' && k !== 'clickhouse') throw new Error(`SVC_TEST_TELEMETRY must be duckdb or clickhouse, got "${k}"`);
  return k;
}

export interface TestChDb extends ChTelemetryDb {
  /** Drops the test's database and closes the client. */
  drop(): Promise<void>;
}

export async function openTestChDb(): Promise<TestChDb> {
  const url = inject('clickhouseUrl');
  if (!url) throw new Error(`no ClickHouse endpoint for the telemetry tests: ${inject('clickhouseProblem') || 'unknown reason'}`);
  const database = `t_${randomBytes(6).toString('hex')}`;
  const settings = clickhouseSettings({ SVC_CLICKHOUSE_URL: url, SVC_CLICKHOUSE_DATABASE: database })!;
  const db = await openChTelemetryDb(settings);
  return {
    ...db,
    async drop() {
      await db.client.command(`DROP DATABASE IF EXISTS \`${database}\``).catch(() => undefined);
      await db.close();
    },
  };
}

type PortName = Exclude<keyof TelemetryEngine, 'kind' | 'deleteProject' | 'ping' | 'close'>;

/** The ClickHouse ports built so far, each from the test's ClickHouse store. */
export const CLICKHOUSE_PORTS: Partial<{ [K in PortName]: (db: ChTelemetryDb) => TelemetryEngine[K] }> = {};

/** Writers among the ports: stopped before the store closes. */
const WRITERS = ['metricsWriter', 'spansWriter', 'logsWriter'] as const;

/**
 * `base` (an in-memory DuckDB engine) with every port that exists on ClickHouse taken from ClickHouse.
 * Project deletion and ping reach both stores.
 */
export async function withClickHousePorts(base: TelemetryEngine): Promise<TelemetryEngine & { ch: TestChDb }> {
  const ch = await openTestChDb();
  const engine = Object.create(base) as TelemetryEngine & { ch: TestChDb };
  const replaced = new Set<string>();
  for (const [name, make] of Object.entries(CLICKHOUSE_PORTS)) {
    Object.defineProperty(engine, name, { value: (make as (db: ChTelemetryDb) => unknown)(ch), enumerable: true });
    replaced.add(name);
  }
  Object.defineProperty(engine, 'kind', { value: 'clickhouse' });
  Object.defineProperty(engine, 'ch', { value: ch });
  let closing: Promise<void> | undefined;
  Object.defineProperty(engine, 'close', {
    value: () =>
      (closing ??= (async () => {
        await Promise.all(WRITERS.filter((w) => replaced.has(w)).map((w) => engine[w].stop()));
        await base.close();
        await ch.drop();
      })()),
  });
  Object.defineProperty(engine, 'ping', { value: async () => void (await Promise.all([base.ping(), ch.client.ping()])) });
  return engine;
}
