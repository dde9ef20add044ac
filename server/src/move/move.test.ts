/**
 * `npm run move` (move.ts, docs/scale-out.md "Moving an embedded install"): a populated embedded install, made by
 * the real app over a temporary data dir (OTLP ingest and API calls through app.inject), is moved into a throwaway
 * PostgreSQL schema and a fresh ClickHouse database, interrupted three times on the way (control, telemetry and
 * summary batches, each at the worst moment: stored but not recorded) and resumed; then the service opened on the
 * destination (control on PostgreSQL, telemetry on ClickHouse, the printed key-hash secret) gives the same answers
 * through the HTTP API as the embedded install did, and every table has as many rows on both sides.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { FastifyInstance, InjectOptions } from 'fastify';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildApp } from '../app.js';
import { lockDataDir, type DataDirLock } from '../cluster/data-dir-lock.js';
import { applyChanges } from '../cluster/apply-changes.js';
import { InProcessChangeFeed } from '../cluster/change-feed.js';
import { clickhouseSettings, loadConfig, type ClickHouseSettings } from '../config.js';
import { buildContext } from '../context.js';
import { bootstrap } from '../domains/organizations/bootstrap.js';
import { attrs, gauge, histogram, num, request as metricsRequest, sum } from '../ingest/otlp/test-fixtures.js';
import { logRequest, span, traceRequest } from '../ingest/otlp/traces-fixtures.js';
import { withKeyHashSecret } from '../lib/keyed-hash.js';
import { openStores } from '../stores.js';
import { fixedClock, TEST_DATABASE_URL } from '../testing/app.js';
import { gridRules } from '../testing/content-policy.js';
import { chClient } from '../storage/telemetry/clickhouse/client.js';
import { moveInstall, MoveRefusedError, type MoveHook, type MoveOptions } from './move.js';

const NOW = '2026-03-01T12:00:00.000Z';
const NOW_MS = Date.parse(NOW);
/** Telemetry two hours before the (fixed) clock: inside every default window. */
const T0 = NOW_MS - 2 * 3_600_000;
const WINDOW = { start: new Date(NOW_MS - 6 * 3_600_000).toISOString(), end: NOW };

interface Service {
  app: FastifyInstance;
  orgId: string;
  projectId: string;
  generatedKey?: string;
  call(key: string, opts: InjectOptions): Promise<{ statusCode: number; body: string; json(): any }>;
  close(): Promise<void>;
}

/** The service as main.ts opens it (without listening): stores from the configuration, bootstrap, app. */
async function serve(env: NodeJS.ProcessEnv, lock?: DataDirLock): Promise<Service> {
  const config = await withKeyHashSecret(loadConfig({ SVC_LOG_LEVEL: 'silent', ...env }));
  const { control, telemetry } = await openStores(config);
  const ctx = buildContext({ config, control, telemetry, clock: fixedClock(NOW) });
  const init = await bootstrap(control, ctx.audit, ctx.clock, ctx.ids, {}, ctx.keyHash);
  const app = await buildApp(ctx, { logger: false });
  const changes = new InProcessChangeFeed(control);
  applyChanges(changes, ctx);
  await app.ready();
  return {
    app,
    orgId: init.orgId,
    projectId: init.projectId,
    generatedKey: init.generatedKey,
    call: (key, opts) => app.inject({ ...opts, headers: { 'x-svc-api-key': key, ...opts.headers } }),
    async close() {
      await app.close();
      await changes.stop();
      await telemetry.close();
      await control.close();
      lock?.release();
    },
  };
}

async function ok(s: Service, key: string, opts: InjectOptions, status = 200): Promise<any> {
  const r = await s.call(key, opts);
  if (r.statusCode !== status) throw new Error(`${opts.method} ${opts.url}: ${r.statusCode} ${r.body}`);
  return r.body ? r.json() : undefined;
}

const otlp = (s: Service, key: string, url: string, payload: object) => ok(s, key, { method: 'POST', url, payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });

const hex = (n: number, bytes: number) => n.toString(16).padStart(bytes * 2, '0');
const TRACES = 24;
const traceIdOf = (n: number) => `7a${hex(n, 15)}`;
const DELETED_TRACE = traceIdOf(999);

/** Everything an install holds: projects, keys, a content policy, metrics of three kinds, agent runs in sessions, plain traces, logs, deletes. */
async function populate(s: Service, owner: string): Promise<{ projectId: string; key: string; revokedKey: string }> {
  const project = await ok(s, owner, { method: 'POST', url: '/api/v1/projects', payload: { name: 'moved' } }, 201);
  const projectId = project.id as string;
  await ok(s, owner, { method: 'PUT', url: `/api/v1/projects/${projectId}/content-policy`, payload: { rules: gridRules('allow') } });
  const scopes = ['ingest:write', 'metrics:read', 'metrics:delete', 'traces:read', 'traces:delete', 'logs:read', 'agents:read'];
  const key = (await ok(s, owner, { method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'moved-key', scopes, project_id: projectId } }, 201)).key as string;
  for (let i = 0; i < 3; i++) await ok(s, owner, { method: 'POST', url: '/api/v1/account/api-keys', payload: { name: `extra-${i}`, scopes: ['metrics:read'], project_id: projectId } }, 201);
  const revoked = await ok(s, owner, { method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'revoked', scopes: ['metrics:read'], project_id: projectId } }, 201);
  await ok(s, owner, { method: 'POST', url: `/api/v1/account/api-keys/${revoked.id}/revoke` });

  // Metrics: a gauge on two hosts, a cumulative counter, a histogram, a metric deleted (a tombstone).
  const resource = { 'service.name': 'checkout', 'deployment.environment.name': 'prod' };
  const minutes = Array.from({ length: 30 }, (_, i) => T0 + i * 60_000);
  await otlp(s, key, '/v1/metrics', metricsRequest(resource, [
    { ...gauge('cpu', minutes.flatMap((t, i) => [num(t, 0.25 + i / 100, { host: 'a' }), num(t, 0.5 + i / 7, { host: 'b' })])), unit: '1', description: 'cpu share' },
    sum('requests', minutes.map((t, i) => ({ ...num(t, 10 * (i + 1), { route: '/pay' }), startTimeUnixNano: String(BigInt(T0 - 60_000) * 1_000_000n) }))),
    histogram('latency', minutes.slice(0, 10).map((t, i) => ({ attributes: attrs({ route: '/pay' }), timeUnixNano: String(BigInt(t) * 1_000_000n), count: String(3 + i), sum: 1.5 * (3 + i), bucketCounts: ['1', String(1 + i), '1'], explicitBounds: [0.1, 1] })), 1),
    gauge('gone', [num(T0, 1)]),
  ]));
  await ok(s, key, { method: 'DELETE', url: '/api/v1/metrics/gone' });

  // Traces: agent runs in two sessions (a model call, a tool call with a context event), plain traces, one deleted.
  const spans: ReturnType<typeof span>[] = [];
  for (let n = 0; n < TRACES; n++) {
    const tid = traceIdOf(n);
    const start = T0 + n * 60_000;
    const root = `${hex(n, 4)}0000000a`;
    if (n % 3 === 2) {
      spans.push(span({ traceId: tid, spanId: root, name: 'GET /health', kind: 2, startMs: start, endMs: start + 5, attributes: { 'http.route': '/health' } }));
      spans.push(span({ traceId: tid, parentSpanId: root, spanId: `${hex(n, 4)}0000000b`, name: 'db', kind: 3, startMs: start + 1, endMs: start + 3, status: { code: 2, message: 'slow' }, events: [{ name: 'exception', ms: start + 2, attributes: { 'exception.type': 'Timeout' } }] }));
      continue;
    }
    spans.push(
      span({
        traceId: tid,
        spanId: root,
        name: 'invoke_agent planner',
        kind: 2,
        startMs: start,
        endMs: start + 2_000,
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'planner',
          'gen_ai.conversation.id': n % 2 ? 'conv-odd' : 'conv-even',
          'svc.turn.id': `turn-${n % 4}`,
          'svc.agent.run.status': n % 5 === 4 ? 'failed' : 'completed',
        },
      }),
      span({
        traceId: tid,
        spanId: `${hex(n, 4)}0000000c`,
        parentSpanId: root,
        name: 'chat gpt-4o',
        kind: 3,
        startMs: start + 100,
        endMs: start + 900,
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.provider.name': 'openai',
          'gen_ai.usage.input_tokens': 100 + n,
          'gen_ai.usage.output_tokens': 20 + n,
          'svc.cost.nanos': 1_000 + n,
        },
      }),
      span({
        traceId: tid,
        spanId: `${hex(n, 4)}0000000d`,
        parentSpanId: root,
        name: 'execute_tool search',
        kind: 1,
        startMs: start + 1_000,
        endMs: start + 1_500,
        attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'search' },
        events: [
          { name: 'context.assembly', ms: start + 1_001, attributes: { 'svc.context.assembly.budget_tokens': 1000, 'svc.context.assembly.source_ids': ['doc-1', `doc-${n}`] } },
          { name: 'tool.call', ms: start + 1_002 },
        ],
      }),
    );
  }
  spans.push(span({ traceId: DELETED_TRACE, name: 'to delete', startMs: T0 }));
  await otlp(s, key, '/v1/traces', traceRequest(resource, spans));
  // The same span twice (an exporter retry): two stored copies of one span, read as one.
  await otlp(s, key, '/v1/traces', traceRequest(resource, [spans[0]]));
  await ok(s, key, { method: 'DELETE', url: `/api/v1/traces/${DELETED_TRACE}` });

  // Logs, some of a trace.
  const records = Array.from({ length: 40 }, (_, i) => ({
    timeUnixNano: String(BigInt(T0 + i * 30_000) * 1_000_000n),
    severityNumber: i % 4 === 0 ? 17 : 9,
    severityText: i % 4 === 0 ? 'ERROR' : 'INFO',
    body: { stringValue: i % 4 === 0 ? `payment failed for order ${i}` : `order ${i} ok` },
    attributes: attrs({ order: String(i) }),
    ...(i % 5 === 0 ? { traceId: traceIdOf(i % TRACES) } : {}),
  }));
  await otlp(s, key, '/v1/logs', logRequest(resource, records));
  return { projectId, key, revokedKey: revoked.key };
}

/** The answers compared before and after the move. */
async function answers(s: Service, owner: string, key: string) {
  const get = (url: string) => ok(s, key, { method: 'GET', url: `/api/v1${url}` });
  const post = (url: string, payload: object) => ok(s, key, { method: 'POST', url: `/api/v1${url}`, payload });
  const run = traceIdOf(0);
  return {
    projects: await ok(s, owner, { method: 'GET', url: '/api/v1/projects' }),
    apiKeys: await ok(s, owner, { method: 'GET', url: '/api/v1/account/api-keys' }),
    contentPolicy: (await ok(s, owner, { method: 'GET', url: '/api/v1/content-policies' })) as unknown,
    metricNames: await get('/metrics/names'),
    cpu: await post('/metrics/aggregate', { metric_name: 'cpu', time_range: WINDOW, step: '5m', aggregation: 'avg', group_by: ['host'] }),
    requests: await post('/metrics/aggregate', { metric_name: 'requests', time_range: WINDOW, step: '10m', aggregation: 'sum' }),
    latency: await post('/metrics/histogram', { metric_name: 'latency', time_range: WINDOW, step: '10m' }),
    gone: await post('/metrics/aggregate', { metric_name: 'gone', time_range: WINDOW }),
    traces: await get('/traces?since=6h&limit=100'),
    trace: await get(`/traces/${run}`),
    deletedTrace: (await s.call(key, { method: 'GET', url: `/api/v1/traces/${DELETED_TRACE}` })).statusCode,
    runs: await get('/agent-runs?since=6h&limit=100'),
    run: await get(`/agent-runs/${run}`),
    sessions: await get('/agent-sessions?since=6h'),
    session: await get('/agent-sessions/conv-even'),
    contextEvents: await get(`/agent-events?run_id=${run}&context_source_id=doc-1`),
    logs: await get('/logs?since=6h&q=payment&limit=100'),
    traceLogs: await get(`/logs?since=6h&trace_id=${traceIdOf(5)}`),
  };
}

const chUrl = () => {
  const url = inject('clickhouseUrl');
  if (!url) throw new Error(`no ClickHouse endpoint: ${inject('clickhouseProblem')}`);
  return url;
};

describe('npm run move: an embedded install into PostgreSQL + ClickHouse', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-move-'));
  const nodeDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-move-node-'));
  const pgSchema = `mv_${randomBytes(5).toString('hex')}`;
  const otherSchema = `mv_${randomBytes(5).toString('hex')}`;
  const databaseUrl = `${TEST_DATABASE_URL}${TEST_DATABASE_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${pgSchema}`)}`;
  const chDatabase = `mv_${randomBytes(5).toString('hex')}`;
  let clickhouse: ClickHouseSettings;
  let admin: pg.Client;
  let owner: string;
  let populated: Awaited<ReturnType<typeof populate>>;
  let before: Awaited<ReturnType<typeof answers>>;
  const moveOpts = (o: Partial<MoveOptions> = {}): MoveOptions => ({
    dataDir,
    databaseUrl,
    clickhouse,
    controlBatchRows: 2,
    telemetryBatchRows: 10,
    summaryBatchTraces: 5,
    log: () => undefined,
    ...o,
  });
  const interruptAt = (phase: string, table: string, batch: number): MoveHook => (at) => {
    if (at.phase === phase && at.table === table && at.batch === batch) throw new Error(`interrupted at ${phase} ${table} batch ${batch}`);
  };

  beforeAll(async () => {
    clickhouse = clickhouseSettings({ SVC_CLICKHOUSE_URL: chUrl(), SVC_CLICKHOUSE_DATABASE: chDatabase })!;
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${pgSchema}`);
    // The embedded install, as `npm start` runs it: the data dir's lock, the key-hash secret file, SQLite + DuckDB.
    const lock = lockDataDir(dataDir, { controlInPostgres: false });
    const embedded = await serve({ SVC_DATA_DIR: dataDir }, lock);
    try {
      owner = embedded.generatedKey!;
      populated = await populate(embedded, owner);
      before = await answers(embedded, owner, populated.key);
      // While the server runs, the move refuses (the data dir's lock) and changes nothing.
      await expect(moveInstall(moveOpts())).rejects.toThrow(/in use by another svc process[\s\S]*Stop the server first/);
    } finally {
      await embedded.close();
    }
  });

  afterAll(async () => {
    await admin?.query(`DROP SCHEMA IF EXISTS ${pgSchema} CASCADE`).catch(() => undefined);
    await admin?.query(`DROP SCHEMA IF EXISTS ${otherSchema} CASCADE`).catch(() => undefined);
    await admin?.end();
    if (clickhouse) {
      const c = chClient(clickhouse, { database: 'default' });
      await c.command(`DROP DATABASE IF EXISTS \`${chDatabase}\``).catch(() => undefined);
      await c.close();
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
    fs.rmSync(nodeDir, { recursive: true, force: true });
  });

  it('the embedded install answered with data (the comparison below is not of empty lists)', () => {
    expect(before.traces.traces.length).toBeGreaterThanOrEqual(TRACES);
    expect(before.runs.runs.length).toBe(16);
    expect(before.sessions.sessions.map((s: { session_key: string }) => s.session_key).sort()).toEqual(['conv-even', 'conv-odd']);
    expect(before.logs.logs).toHaveLength(10);
    expect(before.cpu.series).toHaveLength(2);
    expect(before.contextEvents.events.length).toBeGreaterThan(0);
    expect(before.deletedTrace).toBe(404);
  });

  it('refuses a destination that already holds an organization', async () => {
    await admin.query(`CREATE SCHEMA ${otherSchema}`);
    const other = `${TEST_DATABASE_URL}?options=${encodeURIComponent(`-c search_path=${otherSchema}`)}`;
    const first = await moveInstall(moveOpts({ databaseUrl: other, hook: interruptAt('control', 'projects', 1) })).catch((e: Error) => e);
    expect(String(first)).toMatch(/interrupted/);
    // A row the move did not write: a server started on it, say.
    await admin.query(`DELETE FROM ${otherSchema}.svc_move_progress`);
    await expect(moveInstall(moveOpts({ databaseUrl: other }))).rejects.toThrow(MoveRefusedError);
    await expect(moveInstall(moveOpts({ databaseUrl: other }))).rejects.toThrow(/already holds 1 organization/);
  });

  it('interrupted in control, telemetry and summary batches (stored, not recorded), resumed: every row once on both sides', async () => {
    const count = async (table: string) => Number((await admin.query(`SELECT count(*) AS n FROM ${pgSchema}.${table}`)).rows[0].n);
    // 1. A control batch inserted, then a crash before its commit: the batch is not there, the earlier ones are.
    await expect(moveInstall(moveOpts({ hook: interruptAt('control', 'api_keys', 2) }))).rejects.toThrow(/interrupted at control api_keys batch 2/);
    expect(await count('api_keys')).toBe(2);
    expect(await count('organizations')).toBe(1);
    // 2. A ClickHouse batch stored, then a crash before it was recorded: 3 batches on ClickHouse, 2 recorded.
    await expect(moveInstall(moveOpts({ hook: interruptAt('telemetry', 'spans', 3) }))).rejects.toThrow(/interrupted at telemetry spans batch 3/);
    const ch = chClient(clickhouse);
    const chCount = async (sql: string) => Number((await ch.query<{ n: string }>(sql))[0].n);
    const spansStored = await chCount('SELECT count() AS n FROM spans');
    expect(spansStored).toBeGreaterThanOrEqual(30);
    const recorded = (await admin.query(`SELECT rows_copied FROM ${pgSchema}.svc_move_progress WHERE item = 'telemetry:spans'`)).rows[0];
    expect(Number(recorded.rows_copied)).toBeLessThan(spansStored);
    // 3. Resumed: the unrecorded spans batch is removed before the copy goes on (no span twice); then summaries of a
    //    batch of traces are written, not recorded.
    const third: string[] = [];
    await expect(moveInstall(moveOpts({ hook: interruptAt('summaries', 'trace_summaries+run_summaries', 2), log: (l) => third.push(l) }))).rejects.toThrow(/interrupted at summaries/);
    expect(third.join('\n')).toMatch(/telemetry: spans: removed \d+ rows of a batch the interrupted run had not recorded/);
    expect(await chCount('SELECT count() AS n FROM spans')).toBe(65);
    // 64 spans, one of them stored twice on DuckDB (the exporter retry): so on ClickHouse, not more.
    expect(await chCount('SELECT count() AS n FROM (SELECT DISTINCT project_id, trace_id, span_id FROM spans)')).toBe(64);
    // 4. To the end.
    const logs: string[] = [];
    const done = await moveInstall(moveOpts({ log: (l) => logs.push(l) }));
    expect(done.resumed).toBe(true);
    expect(logs.join('\n')).toMatch(/resuming/);
    const bad = done.counts.filter((c) => !c.ok);
    expect(bad).toEqual([]);
    expect(done.ok).toBe(true);
    const row = (table: string) => done.counts.find((c) => c.table === table)!;
    for (const t of ['organizations', 'projects', 'api_keys', 'audit_events', 'content_policies', 'svc_meta']) {
      expect(row(t).source, t).toBeGreaterThan(0);
      expect(row(t).destination, t).toBe(row(t).source);
    }
    // Every control row, every column, exactly (ids, timestamps, JSON text, numbers), in every table.
    const sqlite = new Database(path.join(dataDir, 'control.sqlite'), { readonly: true });
    try {
      const tables = (sqlite.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'kysely_%'`).all() as { name: string }[]).map((r) => r.name);
      expect(tables.length).toBeGreaterThan(30);
      const sorted = (rows: object[]) => rows.map((r) => JSON.stringify(Object.entries(r).sort(([a], [b]) => a.localeCompare(b)))).sort();
      for (const t of tables) {
        const src = sqlite.prepare(`SELECT * FROM "${t}"`).all() as object[];
        const dst = (await admin.query(`SELECT * FROM ${pgSchema}."${t}"`)).rows as object[];
        expect(sorted(dst), t).toEqual(sorted(src));
      }
    } finally {
      sqlite.close();
    }
    for (const t of ['metric_series', 'metric_points', 'metric_histograms', 'metric_metadata', 'metric_tombstones', 'spans', 'span_events', 'agent_sightings', 'logs', 'trace_tombstones']) {
      expect(row(t).source, t).toBeGreaterThan(0);
      expect(row(t).destination, t).toBe(row(t).source);
    }
    expect(row('spans').source).toBe(16 * 3 + 8 * 2 + 1); // the retried span is stored twice on both sides
    expect(row('trace_summaries').visible).toBe(TRACES);
    expect(row('run_summaries').visible).toBe(16);
    expect(row('session_summaries').visible).toBe(2);
    // No control row twice (a primary key would have refused it) and none missing, per table.
    expect(await count('api_keys')).toBe(row('api_keys').source);
    expect(done.keyHash.secretBase64).toBe(fs.readFileSync(path.join(dataDir, 'key-hash.secret')).toString('base64'));
    await ch.close();
  });

  it('`npm run move` again after the end: the same counts, nothing copied twice, the key-hash step printed', async () => {
    const out = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'server/src/move/main.ts', '--from-data-dir', dataDir, '--to-clickhouse-url', chUrl(), '--batch-rows', '7'],
        { env: { ...process.env, DATABASE_URL: databaseUrl, SVC_CLICKHOUSE_DATABASE: chDatabase, SVC_DATA_DIR: '' }, timeout: 120_000 },
        (err, stdout, stderr) => resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toMatch(/^control\s+api_keys\s+6\s+6\s*$/m);
    expect(out.stdout).toMatch(/^telemetry\s+spans\s+65\s+65\s*$/m);
    expect(out.stdout).not.toMatch(/DIFFERS/);
    expect(out.stdout).toMatch(/The move was already complete/);
    const secret = /SVC_KEY_HASH_SECRET=(\S+)/.exec(out.stdout)?.[1];
    expect(secret).toBe(fs.readFileSync(path.join(dataDir, 'key-hash.secret')).toString('base64'));
  });

  it('the service on PostgreSQL + ClickHouse, with the printed secret, gives the same answers; the keys authenticate as before', async () => {
    const secret = fs.readFileSync(path.join(dataDir, 'key-hash.secret')).toString('base64');
    const moved = await serve({
      SVC_DATA_DIR: nodeDir,
      DATABASE_URL: databaseUrl,
      SVC_CLICKHOUSE_URL: chUrl(),
      SVC_CLICKHOUSE_DATABASE: chDatabase,
      SVC_KEY_HASH_SECRET: secret,
    });
    try {
      // Nothing was bootstrapped again: the moved organization and project.
      expect(moved.generatedKey).toBeUndefined();
      const after = await answers(moved, owner, populated.key);
      for (const k of Object.keys(before) as (keyof typeof before)[]) expect(after[k], k).toEqual(before[k]);
      // A revoked key stays revoked; a made-up one does not authenticate.
      expect((await moved.call(populated.revokedKey, { method: 'GET', url: '/api/v1/metrics/names' })).statusCode).toBe(401);
      expect((await moved.call(`${populated.key.slice(0, -4)}abcd`, { method: 'GET', url: '/api/v1/metrics/names' })).statusCode).toBe(401);
      // New telemetry lands next to the moved one.
      await otlp(moved, populated.key, '/v1/logs', logRequest({ 'service.name': 'checkout' }, [{ timeUnixNano: String(BigInt(NOW_MS - 1000) * 1_000_000n), body: { stringValue: 'payment failed after the move' } }]));
      expect((await ok(moved, populated.key, { method: 'GET', url: '/api/v1/logs?since=6h&q=payment&limit=100' })).logs).toHaveLength(11);
    } finally {
      await moved.close();
    }
  });
});
