/** One app per test file: in-memory SQLite (or a throwaway PostgreSQL schema) and in-memory DuckDB. */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../app.js';
import { loadConfig } from '../config.js';
import { buildContext, type AppContext } from '../context.js';
import { bootstrap } from '../domains/organizations/bootstrap.js';
import type { Clock } from '../lib/clock.js';
import { ManualClock } from '../jobs/clock.js';
import { openControlStore } from '../storage/control/open.js';
import type { ControlDb } from '../storage/control/open.js';
import { controlStore } from '../storage/control/stores.js';
import { applyChanges } from '../cluster/apply-changes.js';
import { InProcessChangeFeed } from '../cluster/change-feed.js';
import { DuckDbTelemetry } from '../storage/telemetry/duckdb/engine.js';
import type { TelemetryDb } from '../storage/telemetry/duckdb/open.js';
import { openTestClickHouse, testTelemetryKind, type TelemetryKind } from './clickhouse.js';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

export interface TestApp {
  app: FastifyInstance;
  ctx: AppContext;
  /** The control database itself, for tests that check what is at rest. */
  db: ControlDb;
  /** The embedded telemetry store itself, for tests that write or check rows at rest. */
  duck: TelemetryDb;
  /** Org-wide key holding every scope. */
  ownerKey: string;
  orgId: string;
  projectId: string;
  close(): Promise<void>;
  /** app.inject with the owner key unless `key` says otherwise (null: no credential). */
  call(opts: InjectOptions & { key?: string | null }): Promise<LightMyRequestResponse>;
}

export async function openTestControl(dialect: 'sqlite' | 'postgres') {
  const pgSchema = `t_${randomBytes(6).toString('hex')}`;
  const { db } =
    dialect === 'postgres'
      ? await openControlStore({ databaseUrl: TEST_DATABASE_URL, pgSchema })
      : await openControlStore({ sqlitePath: ':memory:' });
  const store = controlStore(db, dialect);
  return {
    store,
    db,
    async drop() {
      if (dialect === 'postgres') {
        const { sql } = await import('kysely');
        await sql.raw(`DROP SCHEMA IF EXISTS ${pgSchema} CASCADE`).execute(db);
      }
      await store.close();
    },
  };
}

export async function testApp(
  opts: { dialect?: 'sqlite' | 'postgres'; clock?: Clock; env?: NodeJS.ProcessEnv; telemetry?: TelemetryKind } & Pick<Parameters<typeof buildContext>[0], 'chainSource' | 'signer'> = {},
): Promise<TestApp> {
  // Each test app keys its API-key hashes with its own secret (main.ts reads SVC_KEY_HASH_SECRET or the data dir's file).
  const config = loadConfig({ SVC_LOG_LEVEL: 'silent', SVC_KEY_HASH_SECRET: randomBytes(32).toString('base64'), ...opts.env });
  const control = await openTestControl(opts.dialect ?? 'sqlite');
  const telemetry = (opts.telemetry ?? testTelemetryKind()) === 'clickhouse' ? await openTestClickHouse() : await DuckDbTelemetry.open({ memory: true });
  const ctx = buildContext({ config, control: control.store, telemetry, clock: opts.clock, chainSource: opts.chainSource, signer: opts.signer });
  const init = await bootstrap(control.store, ctx.audit, ctx.clock, ctx.ids, {}, ctx.keyHash);
  const app = await buildApp(ctx, { logger: false });
  // One process: committed changes reach this app's caches and open tails (cluster/; several nodes: cluster/*.test.ts).
  const changes = new InProcessChangeFeed(control.store);
  applyChanges(changes, ctx);
  await app.ready();
  const ownerKey = init.generatedKey!;
  return {
    app,
    ctx,
    db: control.db,
    get duck(): TelemetryDb {
      if (!(telemetry instanceof DuckDbTelemetry)) throw new Error('this test reads the embedded store (DuckDB) directly: it runs on the DuckDB engine only');
      return telemetry.db;
    },
    ownerKey,
    orgId: init.orgId,
    projectId: init.projectId,
    async close() {
      await app.close();
      await changes.stop();
      await telemetry.close();
      await control.drop();
    },
    call({ key, headers, ...rest }) {
      const k = key === undefined ? ownerKey : key;
      return app.inject({ ...rest, headers: { ...(k === null ? {} : { 'x-svc-api-key': k }), ...headers } });
    },
  };
}

/** A fresh project and a key bound to it, so each test has its own data. */
export async function projectWithKey(t: TestApp, scopes: string[], name = 'p'): Promise<{ projectId: string; key: string; keyId: string }> {
  const p = await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name } });
  if (p.statusCode !== 201) throw new Error(`project create failed: ${p.body}`);
  const projectId = p.json().id as string;
  const k = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: `${name}-key`, scopes, project_id: projectId } });
  if (k.statusCode !== 201) throw new Error(`key create failed: ${k.body}`);
  return { projectId, key: k.json().key, keyId: k.json().id };
}

/** A fixed, settable clock; the job runner waits on it too (ManualClock: sleepers wake when it is moved). */
export function fixedClock(iso: string): ManualClock {
  return new ManualClock(iso);
}
