import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseSettings } from '../../../config.js';
import { openTestChDb, type TestChDb } from '../../../testing/clickhouse.js';
import { TABLES, deleteTarget, schemaStatements } from './schema.js';

describe('ClickHouse schema, single server', () => {
  let db: TestChDb;
  beforeAll(async () => {
    db = await openTestChDb();
  });
  afterAll(() => db.drop());

  it('every table exists with its engine, ordered by project first', async () => {
    const rows = await db.client.query<{ name: string; engine: string; sorting_key: string }>(
      'SELECT name, engine, sorting_key FROM system.tables WHERE database = {db:String} ORDER BY name',
      { db: db.schema.database },
    );
    expect(rows.map((r) => r.name)).toEqual(TABLES.map((t) => t.name).sort());
    for (const r of rows) {
      const spec = TABLES.find((t) => t.name === r.name)!;
      expect(r.engine).toBe(spec.engine.kind);
      expect(r.sorting_key.startsWith('project_id')).toBe(true);
    }
  });

  it('opening again changes nothing (every statement is idempotent)', async () => {
    for (const stmt of schemaStatements(db.schema)) await db.client.command(stmt);
    const [{ n }] = await db.client.query<{ n: string }>('SELECT count() AS n FROM system.tables WHERE database = {db:String}', { db: db.schema.database });
    expect(Number(n)).toBe(TABLES.length);
  });

  it('a versioned summary row: the highest version wins, a deleted one is gone (FINAL)', async () => {
    const row = (version: number, isDeleted = 0) => ({ project_id: 'p', trace_id: 't', start_us: 1, end_us: version, span_count: version, error_count: 0, services: [], root_span_id: 'r', root_name: 'n', root_missing: false, first_ingested_us: 1, last_ingested_us: 1, version, is_deleted: isDeleted });
    await db.client.insert('trace_summaries', [row(2)]);
    await db.client.insert('trace_summaries', [row(1)]);
    expect(await db.client.query('SELECT span_count FROM trace_summaries FINAL WHERE project_id = {p:String}', { p: 'p' })).toEqual([{ span_count: '2' }]);
    await db.client.insert('trace_summaries', [row(3, 1)]);
    expect(await db.client.query('SELECT span_count FROM trace_summaries FINAL WHERE project_id = {p:String}', { p: 'p' })).toEqual([]);
  });
});

describe('ClickHouse schema, cluster mode (SVC_CLICKHOUSE_CLUSTER)', () => {
  const stmts = schemaStatements({ database: 'svc', cluster: 'main' });

  it('the database and every table are created ON CLUSTER', () => {
    expect(stmts[0]).toBe('CREATE DATABASE IF NOT EXISTS `svc` ON CLUSTER `main`');
    for (const s of stmts) expect(s).toContain('ON CLUSTER `main`');
  });

  it('each table is a replicated local table and a Distributed table over it, sharded by project', () => {
    for (const t of TABLES) {
      const local = stmts.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS \`svc\`.\`${t.name}_local\``))!;
      expect(local).toContain(`ENGINE = Replicated${t.engine.kind}('/clickhouse/tables/{shard}/svc/${t.name}_local', '{replica}'`);
      expect(local).toContain(`ORDER BY ${t.orderBy}`);
      const dist = stmts.find((s) => s.startsWith(`CREATE TABLE IF NOT EXISTS \`svc\`.\`${t.name}\` ON CLUSTER`))!;
      expect(dist).toBe(
        `CREATE TABLE IF NOT EXISTS \`svc\`.\`${t.name}\` ON CLUSTER \`main\` AS \`svc\`.\`${t.name}_local\` ENGINE = Distributed(\`main\`, \`svc\`, \`${t.name}_local\`, cityHash64(project_id))`,
      );
    }
    expect(stmts).toHaveLength(1 + 2 * TABLES.length);
  });

  it('a versioned table keeps its version and deleted columns when replicated', () => {
    expect(stmts.find((s) => s.includes('`run_summaries_local`'))).toContain("ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/svc/run_summaries_local', '{replica}', version, is_deleted)");
  });

  it('deletes go to the local tables on every shard; single server: the table', () => {
    expect(deleteTarget({ database: 'svc', cluster: 'main' }, 'spans')).toBe('`svc`.`spans_local` ON CLUSTER `main`');
    expect(deleteTarget({ database: 'svc' }, 'spans')).toBe('`svc`.`spans`');
  });
});

describe('SVC_CLICKHOUSE_* configuration', () => {
  it('user, password and database from the URL; the variables win', () => {
    expect(clickhouseSettings({ SVC_CLICKHOUSE_URL: 'https://u:p%40ss@ch.internal:8443/tele' })).toEqual({ url: 'https://ch.internal:8443', user: 'u', password: 'p@ss', database: 'tele', cluster: undefined });
    expect(clickhouseSettings({ SVC_CLICKHOUSE_URL: 'http://ch:8123', SVC_CLICKHOUSE_USER: 'a', SVC_CLICKHOUSE_PASSWORD: 'b', SVC_CLICKHOUSE_DATABASE: 'd', SVC_CLICKHOUSE_CLUSTER: 'c1' })).toEqual({
      url: 'http://ch:8123',
      user: 'a',
      password: 'b',
      database: 'd',
      cluster: 'c1',
    });
    expect(clickhouseSettings({ SVC_CLICKHOUSE_URL: 'http://ch:8123' })).toMatchObject({ user: 'default', password: '', database: 'svc' });
    expect(clickhouseSettings({})).toBeUndefined();
  });

  it.each([
    [{ SVC_CLICKHOUSE_URL: 'ch:8123' }, /http or https/],
    [{ SVC_CLICKHOUSE_URL: 'not a url' }, /must be a URL/],
    [{ SVC_CLICKHOUSE_URL: 'tcp://ch:9000' }, /http or https/],
    [{ SVC_CLICKHOUSE_URL: 'http://ch:8123/db?x=1' }, /no query/],
    [{ SVC_CLICKHOUSE_URL: 'http://ch:8123/bad-name' }, /letters, digits and _/],
    [{ SVC_CLICKHOUSE_URL: 'http://ch:8123', SVC_CLICKHOUSE_CLUSTER: 'a;DROP' }, /SVC_CLICKHOUSE_CLUSTER/],
    [{ SVC_CLICKHOUSE_CLUSTER: 'main' }, /SVC_CLICKHOUSE_URL is not/],
  ])('refused at start: %j', (env, message) => {
    expect(() => clickhouseSettings(env as NodeJS.ProcessEnv)).toThrow(message);
  });
});
