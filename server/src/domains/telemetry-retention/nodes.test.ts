/**
 * A retention change applies on every node within a second (docs/retention.md, docs/several-nodes.md): node B
 * caches a project's windows (up to 30 s), node A changes them, and B drops its copy when it hears
 * `telemetry_retention.changed` over PostgreSQL LISTEN/NOTIFY, well before its cache would expire.
 */
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyChanges } from '../../cluster/apply-changes.js';
import { PostgresChangeFeed } from '../../cluster/postgres-change-feed.js';
import { loadConfig } from '../../config.js';
import { buildContext, type AppContext } from '../../context.js';
import { waitFor } from '../../jobs/testing.js';
import { openControlStore } from '../../storage/control/open.js';
import { controlStore, type ControlStore } from '../../storage/control/stores.js';
import { DuckDbTelemetry } from '../../storage/telemetry/duckdb/engine.js';
import { projectWithKey, TEST_DATABASE_URL, testApp, type TestApp } from '../../testing/app.js';

describe('two nodes on one PostgreSQL', () => {
  let a: TestApp;
  let b: ControlStore;
  let feedB: PostgresChangeFeed;
  let ctxB: AppContext;
  let telemetryB: DuckDbTelemetry;
  beforeAll(async () => {
    a = await testApp({ dialect: 'postgres' });
    const schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(a.db)).rows[0].schema;
    b = controlStore((await openControlStore({ databaseUrl: TEST_DATABASE_URL, pgSchema: schema })).db, 'postgres');
    telemetryB = await DuckDbTelemetry.open({ memory: true });
    ctxB = buildContext({ config: loadConfig({ SVC_LOG_LEVEL: 'silent', SVC_KEY_HASH_SECRET: randomBytes(32).toString('base64') }), control: b, telemetry: telemetryB });
    feedB = new PostgresChangeFeed(b, { connectionString: TEST_DATABASE_URL, schema, minBackoffMs: 20, heartbeatMs: 500 });
    applyChanges(feedB, ctxB);
    await feedB.start();
  });
  afterAll(async () => {
    await feedB?.stop();
    await telemetryB?.close();
    await b?.close();
    await a?.close();
  });

  it("B applies A's change within a second (its cache would keep the old windows for 30 s)", async () => {
    const { projectId, key } = await projectWithKey(a, ['projects:read', 'projects:write', 'logs:delete']);
    expect(await ctxB.telemetryRetention.cutoffUs(projectId, 'SIGNAL_LOGS')).toBeUndefined(); // cached on B
    // A write that announces nothing is not seen by B while its copy is fresh: the cache is real.
    const p = await a.ctx.control.projects.find(a.orgId, projectId);
    await a.ctx.control.transaction((tx) => tx.telemetryRetention.replace(projectId, p!.orgId, [{ signal: 'SIGNAL_LOGS', retentionDays: 3 }], { userId: null, apiKeyId: null }, 't'));
    await new Promise((r) => setTimeout(r, 300));
    expect(await ctxB.telemetryRetention.cutoffUs(projectId, 'SIGNAL_LOGS')).toBeUndefined();
    await a.ctx.control.transaction((tx) => tx.telemetryRetention.replace(projectId, p!.orgId, [], { userId: null, apiKeyId: null }, 't'));
    const put = async (windows: object[]) => expect((await a.call({ method: 'PUT', url: `/api/v1/projects/${projectId}/retention`, key, payload: { windows } })).statusCode).toBe(200);
    let started = Date.now();
    await put([{ signal: 'SIGNAL_LOGS', retention_days: 7 }]);
    await waitFor(async () => (await ctxB.telemetryRetention.cutoffUs(projectId, 'SIGNAL_LOGS')) !== undefined, 'B to hear the new window', 1000);
    expect(Date.now() - started).toBeLessThan(1000);
    const cut = (await ctxB.telemetryRetention.cutoffUs(projectId, 'SIGNAL_LOGS'))!;
    expect(Math.abs(cut - (Date.now() - 7 * 86_400_000) * 1000)).toBeLessThan(5_000_000);
    started = Date.now();
    await put([]);
    await waitFor(async () => (await ctxB.telemetryRetention.cutoffUs(projectId, 'SIGNAL_LOGS')) === undefined, 'B to hear the window removed', 1000);
    expect(Date.now() - started).toBeLessThan(1000);
  });
});
