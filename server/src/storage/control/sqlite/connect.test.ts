import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { Kysely, SqliteDialect, sql } from 'kysely';
import { withStatementCache } from './connect.js';

const cached = (size = 3) => withStatementCache(new Database(':memory:'), size);

describe('the control store statement cache', () => {
  it('hands out one prepared statement per SQL text', () => {
    const db = cached();
    expect(db.prepare('SELECT 1 AS x')).toBe(db.prepare('SELECT 1 AS x'));
    expect(db.prepare('SELECT 1 AS x')).not.toBe(db.prepare('SELECT 2 AS x'));
  });

  it('keeps at most its size, dropping the least recently used', () => {
    const db = cached(2);
    const a = db.prepare('SELECT 1');
    const b = db.prepare('SELECT 2');
    expect(db.prepare('SELECT 1')).toBe(a); // 1 is now the most recent
    db.prepare('SELECT 3'); // drops 2
    expect(db.prepare('SELECT 1')).toBe(a);
    expect(db.prepare('SELECT 2')).not.toBe(b);
  });

  it('never hands out a statement that is still iterating', () => {
    const db = cached();
    db.exec('CREATE TABLE t (v INTEGER); INSERT INTO t VALUES (1), (2)');
    const first = db.prepare('SELECT v FROM t');
    const it = first.iterate();
    it.next();
    const second = db.prepare('SELECT v FROM t');
    expect(second).not.toBe(first);
    expect(second.all()).toEqual([{ v: 1 }, { v: 2 }]);
    it.return?.();
    expect(db.prepare('SELECT v FROM t')).toBe(first);
  });

  it('answers with the new schema after a table changes under a cached statement', async () => {
    const k = new Kysely<{ t: { a: number; b?: number } }>({ dialect: new SqliteDialect({ database: cached() }) });
    await sql`CREATE TABLE t (a INTEGER)`.execute(k);
    await k.insertInto('t').values({ a: 1 }).execute();
    expect(await k.selectFrom('t').selectAll().execute()).toEqual([{ a: 1 }]);
    await sql`ALTER TABLE t ADD COLUMN b INTEGER DEFAULT 7`.execute(k);
    expect(await k.selectFrom('t').selectAll().execute()).toEqual([{ a: 1, b: 7 }]);
    // Bound values are per call, never carried over from the statement's last use.
    await k.insertInto('t').values({ a: 2, b: 3 }).execute();
    await k.insertInto('t').values({ a: 4, b: 5 }).execute();
    expect(await k.selectFrom('t').select('b').where('a', '=', 4).execute()).toEqual([{ b: 5 }]);
    await k.destroy();
  });
});
