import { DuckDBInstance, VARCHAR } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bound, readAll, rows, STATEMENTS_PER_CONNECTION } from './statements.js';

describe('reads through statements kept per connection', () => {
  let instance: DuckDBInstance;
  beforeAll(async () => {
    instance = await DuckDBInstance.create(':memory:');
  });
  afterAll(() => instance.closeSync());

  it('binds each call its own values, never the previous call', async () => {
    const c = await instance.connect();
    await c.run(`CREATE TABLE t1 AS SELECT 'p' || (i % 3) AS p, i AS v FROM range(9) r(i)`);
    const sql = 'SELECT sum(v) FROM t1 WHERE p = $p';
    expect(await rows(c, sql, { p: 'p0' })).toEqual([[9n]]);
    expect(await rows(c, sql, { p: 'p1' })).toEqual([[12n]]);
    expect(await rows(c, sql, { p: 'none' })).toEqual([[null]]);
  });

  it('answers concurrent calls of one text on one connection each with its own values', async () => {
    const c = await instance.connect();
    const sql = 'SELECT $x::VARCHAR || \'!\'';
    const got = await Promise.all(Array.from({ length: 20 }, (_, i) => readAll(c, sql, { x: `v${i}` }, { x: VARCHAR }).then((r) => r.getRowsJS()[0][0])));
    expect(got).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}!`));
  });

  it('re-plans a kept statement after the table under it changed', async () => {
    const c = await instance.connect();
    await c.run('CREATE TABLE t2 (a INTEGER)');
    await c.run('INSERT INTO t2 VALUES (1)');
    const sql = 'SELECT * FROM t2';
    expect(await rows(c, sql, {})).toEqual([[1]]);
    await c.run('ALTER TABLE t2 ADD COLUMN b VARCHAR DEFAULT \'x\'');
    expect(await rows(c, sql, {})).toEqual([[1, 'x']]);
    await c.run('DROP TABLE t2');
    await c.run('CREATE TABLE t2 (z VARCHAR)');
    await c.run("INSERT INTO t2 VALUES ('new')");
    expect(await rows(c, sql, {})).toEqual([['new']]);
  });

  it('does not keep a statement that failed, and the next call of the text works', async () => {
    const c = await instance.connect();
    const sql = 'SELECT * FROM t3';
    await expect(rows(c, sql, {})).rejects.toThrow(/t3/);
    await c.run('CREATE TABLE t3 AS SELECT 42 AS v');
    expect(await rows(c, sql, {})).toEqual([[42]]);
  });

  it(`keeps at most ${STATEMENTS_PER_CONNECTION} texts per connection and still answers the dropped ones`, async () => {
    const c = await instance.connect();
    for (let i = 0; i <= STATEMENTS_PER_CONNECTION + 5; i++) expect(await rows(c, `SELECT ${i} + $k`, { k: 1 })).toEqual([[i + 1]]);
    expect(await rows(c, 'SELECT 0 + $k', { k: 1 })).toEqual([[1]]);
  });

  it('binds only the names a statement uses, bigints as BIGINT', () => {
    const [values, types] = bound('SELECT $a, $c', { a: 1n, b: 'unused', c: 'x' });
    expect(values).toEqual({ a: 1n, c: 'x' });
    expect(Object.keys(types)).toEqual(['a']);
  });
});
