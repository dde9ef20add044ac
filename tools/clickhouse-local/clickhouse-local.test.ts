/**
 * tools/clickhouse-local driven only through the official client, @clickhouse/client: the server runs as
 * `npm run clickhouse:local` runs it (a child process, `node --import tsx main.ts`), once for the file, on a free
 * port and a temporary data directory; the last test restarts it on the same directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ClickHouseError, ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../..');
const MAIN = join(HERE, 'main.ts');

interface Running {
  proc: ChildProcess;
  url: string;
  output: () => string;
}

function startServer(dataDir: string, extraArgs: string[] = []): Promise<Running> {
  const proc = spawn(process.execPath, ['--import', 'tsx', MAIN, '--port', '0', '--path', dataDir, ...extraArgs], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise<Running>((resolvePromise, reject) => {
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`clickhouse-local did not start within 60s:\n${output}`));
    }, 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const m = /clickhouse-local listening on (http:\/\/\S+) \(data: (.*), ClickHouse (\S+)\)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolvePromise({ proc, url: m[1], output: () => output });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`clickhouse-local exited with ${code} before listening:\n${output}`));
    });
  });
}

function stopServer(server: Running): Promise<number | null> {
  return new Promise((resolvePromise) => {
    if (server.proc.exitCode !== null) return resolvePromise(server.proc.exitCode);
    server.proc.once('exit', (code) => resolvePromise(code));
    server.proc.kill('SIGTERM');
  });
}

async function rejection(p: Promise<unknown>): Promise<ClickHouseError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(ClickHouseError);
    return e as ClickHouseError;
  }
  throw new Error('expected a ClickHouseError, the call succeeded');
}

const ROWS = [
  {
    id: 1,
    s: `it's "quoted" \\ back\\slash; DROP TABLE events; --`,
    n: null,
    tags: ["a'b", 'c"d', '', 'e\\f'],
    big: '18446744073709551615',
    ts: '2024-05-06 07:08:09.123',
  },
  { id: 2, s: 'line1\nline2\ttab\r\nend', n: 'not null', tags: [], big: '9007199254740993', ts: '1970-01-01 00:00:00.000' },
  { id: 3, s: 'unicode: é ☃ 日本語 😀 \u0000 nul', n: null, tags: ['😀'], big: '0', ts: '2299-12-31 23:59:59.999' },
];
const QUOTE_64 = { output_format_json_quote_64bit_integers: 1 } as const;

describe('clickhouse-local (ClickHouse HTTP interface over chdb)', () => {
  let dataDir: string;
  let server: Running;
  let client: ClickHouseClient;
  const clients: ClickHouseClient[] = [];
  const newClient = (config: Parameters<typeof createClient>[0] = {}) => {
    const c = createClient({ url: server.url, username: 'default', password: '', log: { level: ClickHouseLogLevel.OFF }, ...config });
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    if (!existsSync(join(HERE, 'node_modules', 'chdb', 'package.json'))) {
      throw new Error('chdb is not installed: run `npm install --prefix tools/clickhouse-local` (`npm test` does it in pretest)');
    }
    dataDir = mkdtempSync(join(tmpdir(), 'clickhouse-local-test-'));
    server = await startServer(dataDir);
    client = newClient();
  });

  afterAll(async () => {
    for (const c of clients) await c.close().catch(() => undefined);
    if (server) await stopServer(server);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers ping, both the /ping endpoint and the SELECT one', async () => {
    expect(await client.ping()).toEqual({ success: true });
    expect((await client.ping({ select: true })).success).toBe(true);
    const text = await (await fetch(`${server.url}/ping`)).text();
    expect(text).toBe('Ok.\n');
  });

  it('creates a MergeTree table, inserts JSONEachRow rows and reads them back as JSONEachRow and JSON', async () => {
    await client.command({
      query: `CREATE TABLE events (id UInt32, s String, n Nullable(String), tags Array(String), big UInt64, ts DateTime64(3, 'UTC'))
              ENGINE = MergeTree ORDER BY id`,
    });
    const inserted = await client.insert({ table: 'events', values: ROWS, format: 'JSONEachRow', query_id: 'insert-events' });
    expect(inserted.executed).toBe(true);
    expect(inserted.query_id).toBe('insert-events');
    expect(inserted.summary?.written_rows).toBe('3');

    const rs = await client.query({ query: 'SELECT * FROM events ORDER BY id', format: 'JSONEachRow', clickhouse_settings: QUOTE_64 });
    expect(await rs.json()).toEqual(ROWS);

    const doc = await client.query({ query: 'SELECT id, s, big FROM events ORDER BY id', format: 'JSON', clickhouse_settings: QUOTE_64 });
    const json = await doc.json<{ id: number; s: string; big: string }>();
    expect(json.rows).toBe(3);
    expect(json.meta).toEqual([
      { name: 'id', type: 'UInt32' },
      { name: 's', type: 'String' },
      { name: 'big', type: 'UInt64' },
    ]);
    expect(json.data.map((r) => r.s)).toEqual(ROWS.map((r) => r.s));
    expect(json.data[0].big).toBe('18446744073709551615');

    const compact = await client.query({ query: 'SELECT id, tags FROM events ORDER BY id', format: 'JSONCompactEachRow' });
    expect(await compact.json()).toEqual(ROWS.map((r) => [r.id, r.tags]));

    // exec: the full SQL with its own FORMAT clause, the raw response stream
    const exec = await client.exec({ query: 'SELECT id, n FROM events ORDER BY id FORMAT TabSeparated' });
    let tsv = '';
    for await (const chunk of exec.stream) tsv += chunk.toString();
    expect(tsv).toBe('1\t\\N\n2\tnot null\n3\t\\N\n');
  });

  it('binds query parameters of several types without them becoming SQL', async () => {
    const when = new Date('2024-05-06T07:08:09.123Z');
    const rs = await client.query({
      query: `SELECT {s:String} AS s, {a:Array(String)} AS a, {u:UInt64} AS u, {d:DateTime64(3)} AS d,
                     {n:Nullable(String)} AS n, {m:Map(String, UInt8)} AS m, {i:Int32} AS i`,
      query_params: { s: ROWS[0].s + '\n\ttail', a: ["x'y", 'z\\w', '', '"'], u: BigInt('18446744073709551615'), d: when, n: null, m: { k: 7 }, i: -42 },
      format: 'JSONEachRow',
      clickhouse_settings: QUOTE_64,
    });
    expect(await rs.json()).toEqual([
      { s: ROWS[0].s + '\n\ttail', a: ["x'y", 'z\\w', '', '"'], u: '18446744073709551615', d: '2024-05-06 07:08:09.123', n: null, m: { k: 7 }, i: -42 },
    ]);

    const byString = await client.query({
      query: 'SELECT id FROM events WHERE s = {s:String} OR has({tags:Array(String)}, s) ORDER BY id',
      query_params: { s: ROWS[0].s, tags: [ROWS[1].s] },
      format: 'JSONEachRow',
    });
    expect(await byString.json()).toEqual([{ id: 1 }, { id: 2 }]);

    // the same parameters in a multipart/form-data body instead of the URL
    const multipart = newClient({ use_multipart_params: true });
    const mp = await multipart.query({
      query: 'SELECT {s:String} AS s, {a:Array(String)} AS a',
      query_params: { s: ROWS[0].s, a: ROWS[0].tags },
      format: 'JSONEachRow',
    });
    expect(await mp.json()).toEqual([{ s: ROWS[0].s, a: ROWS[0].tags }]);

    const bad = await rejection(client.query({ query: 'SELECT {u:UInt64} AS u', query_params: { u: '1; DROP TABLE events' } }));
    expect(bad.code).toBe('457');
    expect(bad.type).toBe('BAD_QUERY_PARAMETER');
    const count = await client.query({ query: 'SELECT count() AS c FROM events', format: 'JSONEachRow' });
    expect(await count.json()).toEqual([{ c: 3 }]);
  });

  it('passes settings through, for that query only', async () => {
    const setting = async (settings?: Record<string, string | number>) => {
      const rs = await client.query({
        query: "SELECT getSetting('date_time_output_format') AS f, getSetting('max_result_rows') AS m",
        format: 'JSONEachRow',
        clickhouse_settings: settings,
      });
      return (await rs.json<{ f: string; m: number | string }>())[0];
    };
    expect(await setting({ date_time_output_format: 'iso', max_result_rows: '5' })).toEqual({ f: 'iso', m: 5 });
    expect(await setting()).toEqual({ f: 'simple', m: 0 });
    expect(await setting({ max_result_rows: 7 })).toEqual({ f: 'simple', m: 7 });
    expect(await setting()).toEqual({ f: 'simple', m: 0 });

    const iso = await client.query({ query: 'SELECT ts FROM events WHERE id = 1', format: 'JSONEachRow', clickhouse_settings: { date_time_output_format: 'iso' } });
    expect(await iso.json()).toEqual([{ ts: '2024-05-06T07:08:09.123Z' }]);

    // 64-bit integers: quoted only when asked
    const plain = await client.query({ query: 'SELECT big FROM events WHERE id = 2', format: 'JSONEachRow' });
    expect(await plain.text()).toBe('{"big":9007199254740993}\n');

    // an insert setting: unknown fields rejected instead of skipped
    await client.command({ query: "CREATE TABLE ts_test (ts DateTime64(3, 'UTC')) ENGINE = MergeTree ORDER BY ts" });
    const strict = await rejection(
      client.insert({
        table: 'ts_test',
        values: [{ ts: '2024-05-06 07:08:09.5', extra: 1 }],
        format: 'JSONEachRow',
        clickhouse_settings: { input_format_skip_unknown_fields: 0 },
      }),
    );
    expect(strict.type).toBe('INCORRECT_DATA');
    await client.insert({ table: 'ts_test', values: [{ ts: '2024-05-06T07:08:09.5Z', extra: 1 }], format: 'JSONEachRow' });
    const ts = await client.query({ query: 'SELECT ts FROM ts_test', format: 'JSONEachRow' });
    expect(await ts.json()).toEqual([{ ts: '2024-05-06 07:08:09.500' }]);

    // a result-limiting setting takes effect
    const limited = await client.query({ query: 'SELECT number FROM numbers(100)', format: 'JSONEachRow', clickhouse_settings: { limit: '3' } });
    expect(await limited.json()).toEqual([{ number: 0 }, { number: 1 }, { number: 2 }]);

    const unknown = await rejection(client.query({ query: 'SELECT 1', clickhouse_settings: { no_such_setting_x: 1 } as never }));
    expect(unknown.code).toBe('115');
    expect(unknown.type).toBe('UNKNOWN_SETTING');
  });

  it('turns errors into ClickHouseError with the code and type, and recovers after them', async () => {
    const syntax = await rejection(client.query({ query: 'SELEC 1' }));
    expect(syntax.code).toBe('62');
    expect(syntax.message).toContain('Syntax error: failed at position 1');
    // (ClickHouse 26 writes the failing token in parentheses, `(SELEC)`, which the client's regex takes for the
    // type when it is an upper-case word; a lower-case token leaves the type to the `(SYNTAX_ERROR)` suffix.)
    const lower = await rejection(client.command({ query: 'selec 1' }));
    expect(lower.code).toBe('62');
    expect(lower.type).toBe('SYNTAX_ERROR');

    const table = await rejection(client.query({ query: 'SELECT * FROM no_such_table' }));
    expect(table.code).toBe('60');
    expect(table.type).toBe('UNKNOWN_TABLE');

    const command = await rejection(client.command({ query: 'DROP TABLE no_such_table' }));
    expect(command.code).toBe('60');

    const badRows = await rejection(client.insert({ table: 'events', values: [{ id: 'not a number' }], format: 'JSONEachRow' }));
    expect(badRows.type).toMatch(/CANNOT_PARSE|INCORRECT_DATA/);

    // a query failing once its output has begun: the next query's output must not carry any of it
    const midway = await rejection(client.query({ query: 'SELECT throwIf(number = 3) AS t FROM numbers(10)', format: 'JSON' }));
    expect(midway.code).toBe('395');
    const next = await client.query({ query: 'SELECT 1 AS x', format: 'JSON' });
    expect((await next.json<{ x: number }>()).data).toEqual([{ x: 1 }]);
  });

  it('echoes the query_id and sends the headers the client reads', async () => {
    const rs = await client.query({ query: 'SELECT 1 AS x', format: 'JSONEachRow', query_id: 'my-query-id' });
    expect(rs.query_id).toBe('my-query-id');
    expect(rs.response_headers['x-clickhouse-query-id']).toBe('my-query-id');
    expect(rs.response_headers['x-clickhouse-format']).toBe('JSONEachRow');
    expect(rs.response_headers['x-clickhouse-timezone']).toBe('UTC');
    const summary = JSON.parse(String(rs.response_headers['x-clickhouse-summary']));
    expect(Object.keys(summary).sort()).toEqual(
      ['elapsed_ns', 'read_bytes', 'read_rows', 'result_bytes', 'result_rows', 'total_rows_to_read', 'written_bytes', 'written_rows'].sort(),
    );
    expect(await rs.json()).toEqual([{ x: 1 }]);

    const cmd = await client.command({ query: 'SELECT 1', query_id: 'my-command-id' });
    expect(cmd.query_id).toBe('my-command-id');
    expect(cmd.summary?.read_rows).toBe('1');

    const failed = await fetch(`${server.url}/?query_id=failing-id`, { method: 'POST', body: 'SELECT * FROM no_such_table' });
    expect(failed.status).toBe(404);
    expect(failed.headers.get('x-clickhouse-query-id')).toBe('failing-id');
    expect(failed.headers.get('x-clickhouse-exception-code')).toBe('60');
    expect(await failed.text()).toMatch(/^Code: 60\. DB::Exception: .*\(UNKNOWN_TABLE\) \(version \d+\.\d+/);
  });

  it('works with gzip request and response compression', async () => {
    const gz = newClient({ compression: { request: true, response: true } });
    await gz.command({ query: 'CREATE TABLE compressed (id UInt32, s String) ENGINE = MergeTree ORDER BY id' });
    const values = Array.from({ length: 2000 }, (_, i) => ({ id: i, s: `row ${i} ${'é'.repeat(i % 7)}` }));
    await gz.insert({ table: 'compressed', values, format: 'JSONEachRow' });
    const rs = await gz.query({ query: 'SELECT count() AS c, sum(id) AS s FROM compressed', format: 'JSONEachRow' });
    expect(rs.response_headers['content-encoding']).toBe('gzip');
    expect(await rs.json()).toEqual([{ c: 2000, s: (1999 * 2000) / 2 }]);
    const back = await gz.query({ query: 'SELECT s FROM compressed WHERE id = 6', format: 'JSONEachRow' });
    expect(await back.json()).toEqual([{ s: values[6].s }]);
  });

  it('inserts other formats: JSONCompactEachRow, CSV and binary Parquet', async () => {
    await client.command({ query: 'CREATE TABLE formats (id UInt64, s String) ENGINE = MergeTree ORDER BY id' });
    await client.insert({ table: 'formats', values: [[1, 'compact']], format: 'JSONCompactEachRow' });
    await client.insert({ table: 'formats', values: Readable.from(['2,"csv, with\nnewline"\n'], { objectMode: false }), format: 'CSV' });
    const parquet = await client.exec({ query: "SELECT number + 10 AS id, concat('pq', toString(number)) AS s FROM numbers(5) FORMAT Parquet" });
    const chunks: Buffer[] = [];
    for await (const chunk of parquet.stream) chunks.push(chunk as Buffer);
    const bytes = Buffer.concat(chunks);
    expect(bytes.subarray(0, 4).toString()).toBe('PAR1');
    await client.insert({ table: 'formats', values: Readable.from([bytes], { objectMode: false }), format: 'Parquet' });
    const rs = await client.query({ query: 'SELECT id, s FROM formats ORDER BY id', format: 'JSONCompactEachRow' });
    expect(await rs.json()).toEqual([
      [1, 'compact'],
      [2, 'csv, with\nnewline'],
      [10, 'pq0'],
      [11, 'pq1'],
      [12, 'pq2'],
      [13, 'pq3'],
      [14, 'pq4'],
    ]);
  });

  it('takes a large insert (~10 MB)', async () => {
    await client.command({ query: 'CREATE TABLE large (id UInt64, s String) ENGINE = MergeTree ORDER BY id' });
    const values = Array.from({ length: 50_000 }, (_, i) => ({ id: i, s: `${i}:${'x'.repeat(180)}` }));
    const r = await client.insert({ table: 'large', values, format: 'JSONEachRow' });
    expect(r.summary?.written_rows).toBe('50000');
    const rs = await client.query({ query: 'SELECT count() AS c, sum(length(s)) AS l FROM large', format: 'JSONEachRow' });
    expect(await rs.json()).toEqual([{ c: 50_000, l: values.reduce((a, v) => a + v.s.length, 0) }]);
  });

  it('answers concurrent requests', async () => {
    const [slow, fast, inserted, failing] = await Promise.all([
      client.query({ query: 'SELECT sleep(0.3) AS z, 1 AS x', format: 'JSONEachRow' }).then((rs) => rs.json()),
      client.query({ query: 'SELECT 2 AS x', format: 'JSONEachRow', clickhouse_settings: { max_threads: 1 } }).then((rs) => rs.json()),
      client.insert({ table: 'events', values: [], format: 'JSONEachRow' }),
      client.query({ query: 'SELECT * FROM no_such_table' }).catch((e: unknown) => e),
    ]);
    expect(slow).toEqual([{ z: 0, x: 1 }]);
    expect(fast).toEqual([{ x: 2 }]);
    expect(inserted.executed).toBe(false);
    expect((failing as ClickHouseError).code).toBe('60');
  });

  it('keeps state within a session_id only, and honours the database parameter', async () => {
    const sessionClient = newClient({ session_id: randomUUID() });
    await sessionClient.command({ query: 'CREATE TEMPORARY TABLE tmp (a UInt8)' });
    await sessionClient.insert({ table: 'tmp', values: [{ a: 1 }, { a: 2 }], format: 'JSONEachRow' });
    await sessionClient.command({ query: 'SET max_result_rows = 123' });
    const inSession = await sessionClient.query({ query: "SELECT sum(a) AS s, getSetting('max_result_rows') AS m FROM tmp", format: 'JSONEachRow' });
    expect(await inSession.json()).toEqual([{ s: 3, m: 123 }]);
    // settings sent with a session query are for that query; the session's own SET stays
    const maxRows = async (settings?: Record<string, number>) =>
      (await (await sessionClient.query({ query: "SELECT getSetting('max_result_rows') AS m", format: 'JSONEachRow', clickhouse_settings: settings })).json())[0];
    expect(await maxRows({ max_result_rows: 5 })).toEqual({ m: 5 });
    expect(await maxRows()).toEqual({ m: 123 });
    await sessionClient.command({ query: 'SET max_result_rows = 200' });
    expect(await maxRows({ max_result_rows: 6 })).toEqual({ m: 6 });
    expect(await maxRows()).toEqual({ m: 200 });
    expect((await rejection(client.query({ query: 'SELECT * FROM tmp' }))).code).toBe('60');
    // a SET or temporary table without a session leaves nothing behind
    await client.command({ query: 'SET max_result_rows = 99' });
    await client.command({ query: 'CREATE TEMPORARY TABLE tmp2 (a UInt8)' });
    const outside = await client.query({ query: "SELECT getSetting('max_result_rows') AS m", format: 'JSONEachRow' });
    expect(await outside.json()).toEqual([{ m: 0 }]);
    expect((await rejection(client.query({ query: 'SELECT * FROM tmp2' }))).code).toBe('60');

    await client.command({ query: 'CREATE DATABASE other' });
    const other = newClient({ database: 'other' });
    await other.command({ query: 'CREATE TABLE t (x String) ENGINE = MergeTree ORDER BY x' });
    await other.insert({ table: 't', values: [{ x: 'in other' }], format: 'JSONEachRow' });
    const db = await other.query({ query: 'SELECT currentDatabase() AS d, (SELECT any(x) FROM t) AS x', format: 'JSONEachRow' });
    expect(await db.json()).toEqual([{ d: 'other', x: 'in other' }]);
    const dflt = await client.query({ query: 'SELECT currentDatabase() AS d', format: 'JSONEachRow' });
    expect(await dflt.json()).toEqual([{ d: 'default' }]);
    expect((await rejection(newClient({ database: 'no_such_db' }).query({ query: 'SELECT 1' }))).code).toBe('81');
  });

  it('keeps the data across a restart on the same path, exits cleanly on SIGTERM, and checks credentials when given some', async () => {
    expect(await stopServer(server)).toBe(0);
    server = await startServer(dataDir, ['--user', 'svc', '--password', 's3cret']);
    const after = newClient({ username: 'svc', password: 's3cret' });
    const rs = await after.query({ query: 'SELECT * FROM events ORDER BY id', format: 'JSONEachRow', clickhouse_settings: QUOTE_64 });
    expect(await rs.json()).toEqual(ROWS);
    const other = await after.query({ query: 'SELECT x FROM other.t', format: 'JSONEachRow' });
    expect(await other.json()).toEqual([{ x: 'in other' }]);

    const denied = await rejection(newClient({ username: 'svc', password: 'wrong' }).query({ query: 'SELECT 1' }));
    expect(denied.code).toBe('516');
    expect(denied.type).toBe('AUTHENTICATION_FAILED');
    const byHeaders = await fetch(`${server.url}/?query=SELECT%2042`, { headers: { 'X-ClickHouse-User': 'svc', 'X-ClickHouse-Key': 's3cret' } });
    expect(byHeaders.status).toBe(200);
    expect(await byHeaders.text()).toBe('42\n');
  });
});
