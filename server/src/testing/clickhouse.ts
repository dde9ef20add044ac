/**
 * Test-only: the ClickHouse side of the telemetry tests. `openTestChDb` makes a database of its own on the
 * run's ClickHouse endpoint (test/global-setup.ts: SVC_TEST_CLICKHOUSE_URL, else one clickhouse:local) and
 * drops it at the end; a test app opened with `SVC_TEST_TELEMETRY=clickhouse` (or `testApp({ telemetry:
 * 'clickhouse' })`) runs on a ClickHouseTelemetry over it.
 */
import { randomBytes } from 'node:crypto';
import { clickhouseSettings } from '../config.js';
import { openChTelemetryDb, type ChTelemetryDb } from '../storage/telemetry/clickhouse/db.js';
import { ClickHouseTelemetry } from '../storage/telemetry/clickhouse/engine.js';
import type { TelemetryEngine } from '../storage/telemetry/engine.js';
import type { TelemetryDb } from '../storage/telemetry/duckdb/open.js';

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
  // Imported here, not at the top: scripts outside vitest (npm run lint:openapi) load this module too.
  const { inject } = await import('vitest');
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

/** The ClickHouse engine on a database of its own, dropped when the engine closes. */
export async function openTestClickHouse(): Promise<ClickHouseTelemetry> {
  const ch = await openTestChDb();
  // The engine's close stops its writers; the client stays open until the database is dropped.
  const engine = new ClickHouseTelemetry({ ...ch, close: async () => undefined });
  const close = engine.close.bind(engine);
  engine.close = async () => {
    await close();
    await ch.drop();
  };
  return engine;
}

/** The ClickHouse store of a test app's engine when it is on ClickHouse, else undefined (fixtures and checks of rows at rest use it). */
export function chOf(engine: TelemetryEngine): TestChDb | undefined {
  return engine.kind === 'clickhouse' ? (engine as TelemetryEngine & { ch: TestChDb }).ch : undefined;
}

/** The embedded store of a test app's engine when it is on DuckDB, else undefined. */
export function duckOf(engine: TelemetryEngine): TelemetryDb | undefined {
  return engine.kind === 'duckdb' ? (engine as TelemetryEngine & { db: TelemetryDb }).db : undefined;
}
