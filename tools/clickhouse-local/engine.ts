/**
 * The ClickHouse engine behind the HTTP interface: chdb (ClickHouse embedded in-process), one data directory.
 *
 * chdb runs every query on a "connection" (an engine session: its own settings, current database, temporary tables
 * and output buffer). This module keeps:
 *  - one shared connection for the stateless requests (the usual case: no `session_id`);
 *  - one connection per HTTP `session_id`, so SET / USE / temporary tables persist within it as on a server;
 *  - a throw-away connection for a stateless request that would leave state behind on the shared one (SET, USE,
 *    CREATE TEMPORARY TABLE, `readonly`), so no request ever sees another one's leftovers.
 * Every engine call goes through one queue: one query at a time, in arrival order.
 *
 * Settings that arrive with a request (URL parameters) are applied with SET on the connection and taken back
 * afterwards (lazily on the shared connection: a setting stays applied while consecutive requests ask for the same
 * value, and is reset to its previous value as soon as one does not).
 *
 * `{name:Type}` query parameters are bound by the engine itself (chdb's native parameter binding, the same
 * code path ClickHouse's HTTP handler uses): the value strings are handed over exactly as the client sent them in
 * `param_<name>` and never become part of the SQL text.
 */
import { mkdirSync } from 'node:fs';
import { Session } from 'chdb';
import { loadNative, type NativeAddon, type NativeQueryResult } from './native.js';
import { firstKeyword, insertExpectsData, quoteIdentifier, quoteString } from './sql-text.js';
import { EngineError, summary, type ExecRequest, type ExecResult, type ExecSession } from './exec-types.js';

export { EngineError, type ExecRequest, type ExecResult, type ExecSession, type Summary } from './exec-types.js';

export { firstKeyword, insertExpectsData, quoteIdentifier, quoteString, trailingFormat } from './sql-text.js';


/** A connection of the engine (a chdb Session at the server's data directory) and what this module knows of its state. */
interface Conn {
  session: Session;
  /** The native handle the addon takes. */
  handle: unknown;
  /** The current database, when known. */
  db: string | undefined;
  /** Request settings currently applied with SET (name -> value as SET). */
  applied: Map<string, string>;
  /** For each name ever applied: the value it had before, to take it back (undefined: it was not changed, SET = DEFAULT). */
  originals: Map<string, string | undefined>;
  /** Its settings could not be put back: not to be used for another request. */
  broken?: boolean;
}

interface SessionEntry {
  conn: Conn;
  timeoutMs: number;
  timer: NodeJS.Timeout | undefined;
}

/** Statements whose effect outlives the statement (in a stateless request they must not touch the shared connection). */
const STATEFUL_SQL = /\b(?:SET|USE|TEMPORARY)\b/i;
const SETTING_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const SESSION_ID = /^[A-Za-z0-9_.\-:]{1,255}$/;

/** One job at a time, in arrival order. */
class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();
  run<T>(job: () => Promise<T>): Promise<T> {
    const p = this.tail.then(job);
    this.tail = p.then(
      () => undefined,
      () => undefined,
    );
    return p;
  }
}

export class Engine {
  readonly path: string;
  /** `SELECT version()`, e.g. 26.7.2.1. */
  version = '';
  /** The server time zone (`timezone()`). */
  timezone = '';
  private readonly native: NativeAddon;
  private readonly queue = new SerialQueue();
  private shared!: Conn;
  private readonly sessions = new Map<string, SessionEntry>();
  /** ClickHouse error code -> name, from the engine's own `system.errors`. */
  private readonly errorNames = new Map<number, string>();
  private closed = false;

  private constructor(path: string) {
    this.path = path;
    this.native = loadNative();
  }

  /** Opens (creating it if missing) the data directory `path`. One engine per process: chdb binds one directory. */
  static async open(path: string): Promise<Engine> {
    mkdirSync(path, { recursive: true });
    const engine = new Engine(path);
    engine.shared = await engine.openConn();
    const info = await engine.raw(engine.shared, 'SELECT version(), timezone()', 'TabSeparated');
    [engine.version, engine.timezone] = info.bytes.length ? Buffer.from(info.bytes).toString('utf8').trim().split('\t') : ['', ''];
    const errors = await engine.raw(engine.shared, 'SELECT code, name FROM system.errors SETTINGS system_events_show_zero_values = 1', 'TabSeparated');
    for (const line of Buffer.from(errors.bytes).toString('utf8').split('\n')) {
      const [code, name] = line.split('\t');
      if (code && name) engine.errorNames.set(Number(code), name);
    }
    return engine;
  }

  /** Runs one request (queued behind the ones before it). Rejects with an EngineError. */
  execute(req: ExecRequest): Promise<ExecResult> {
    return this.queue.run(async () => {
      if (this.closed) throw new EngineError('Code: 1001. DB::Exception: The server is shutting down. (STD_EXCEPTION)', 1001, 'STD_EXCEPTION');
      try {
        return await this.executeNow(req);
      } catch (e) {
        throw this.toEngineError(e);
      }
    });
  }

  /** Waits for the queued requests, then closes every connection. */
  async close(): Promise<void> {
    await this.queue.run(async () => {
      this.closed = true;
      for (const [id, entry] of this.sessions) {
        if (entry.timer) clearTimeout(entry.timer);
        this.closeConn(entry.conn);
        this.sessions.delete(id);
      }
      this.closeConn(this.shared);
    });
  }

  private async executeNow(req: ExecRequest): Promise<ExecResult> {
    for (const [name] of req.settings) {
      if (!SETTING_NAME.test(name)) throw new EngineError(`Code: 115. DB::Exception: Unknown setting '${name}'. (UNKNOWN_SETTING)`, 115, 'UNKNOWN_SETTING');
    }
    if (req.session) return this.executeInSession(req, req.session);
    const isolated = req.settings.some(([name]) => name === 'readonly') || STATEFUL_SQL.test(req.sql);
    if (!isolated) return this.run(this.shared, req, false);
    const conn = await this.openConn();
    try {
      return await this.run(conn, req, false);
    } finally {
      this.closeConn(conn);
    }
  }

  private async executeInSession(req: ExecRequest, s: ExecSession): Promise<ExecResult> {
    if (!SESSION_ID.test(s.id)) throw new EngineError(`Code: 36. DB::Exception: Invalid session_id '${s.id}'. (BAD_ARGUMENTS)`, 36, 'BAD_ARGUMENTS');
    let entry = this.sessions.get(s.id);
    if (!entry) {
      if (s.check) throw new EngineError(`Code: 372. DB::Exception: Session ${s.id} not found. (SESSION_NOT_FOUND)`, 372, 'SESSION_NOT_FOUND');
      entry = { conn: await this.openConn(), timeoutMs: 60_000, timer: undefined };
      this.sessions.set(s.id, entry);
    }
    entry.timeoutMs = Math.max(1, s.timeoutSec) * 1000;
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = undefined;
    const readonly = req.settings.some(([name]) => name === 'readonly');
    // `readonly` cannot be taken back once set: such a query runs on a connection of its own (without the session's state).
    const conn = readonly ? await this.openConn() : entry.conn;
    try {
      return await this.run(conn, req, !readonly);
    } finally {
      if (readonly) this.closeConn(conn);
      else if (STATEFUL_SQL.test(req.sql)) conn.db = undefined;
      this.touchSession(s.id, entry, s.close);
    }
  }

  private touchSession(id: string, entry: SessionEntry, closeNow: boolean): void {
    const expire = () => {
      if (this.sessions.get(id) !== entry) return;
      this.sessions.delete(id);
      this.closeConn(entry.conn);
    };
    if (closeNow) return expire();
    entry.timer = setTimeout(() => void this.queue.run(async () => expire()), entry.timeoutMs);
    entry.timer.unref();
  }

  /**
   * Runs a request on a connection: its settings and database first, the statement, then (with `restore`, for a
   * session) the settings and database taken back. After an error the connection's output buffer is flushed: chdb
   * keeps the partial output of a query that failed mid-way and would hand it to the next query otherwise.
   */
  private async run(conn: Conn, req: ExecRequest, restore: boolean): Promise<ExecResult> {
    const wanted = new Map(req.settings);
    let previousDb: string | undefined;
    try {
      try {
        await this.resetSettings(conn, wanted);
      } catch (e) {
        if (conn !== this.shared) throw e;
        // Settings that cannot be taken back: start over on a fresh connection.
        this.warn('could not reset the settings of the shared connection; opening a new one', e);
        conn = await this.replaceShared();
      }
      await this.setSettings(conn, wanted);
      if (restore) {
        if (req.database !== undefined) {
          previousDb = conn.db ?? (await this.currentDatabase(conn));
          await this.use(conn, req.database);
        }
      } else {
        await this.use(conn, req.database ?? 'default');
      }
      return await this.statement(conn, req);
    } catch (e) {
      if ((conn.broken || !(await this.recover(conn))) && conn === this.shared) {
        this.warn('the shared connection did not recover from an error; opening a new one');
        await this.replaceShared();
      }
      throw e;
    } finally {
      if (restore) {
        await this.resetSettings(conn, new Map()).catch((e) => this.warn('could not restore the session settings', e));
        // A session's own SET statements change what "before" means: look the values up again next time.
        conn.originals.clear();
        if (previousDb !== undefined) await this.use(conn, previousDb).catch((e) => this.warn('could not restore the session database', e));
      }
    }
  }

  private async replaceShared(): Promise<Conn> {
    this.closeConn(this.shared);
    this.shared = await this.openConn();
    return this.shared;
  }

  private async statement(conn: Conn, req: ExecRequest): Promise<ExecResult> {
    const params = Object.keys(req.params).length > 0 ? req.params : undefined;
    const isInsert = firstKeyword(req.sql) === 'INSERT';
    if (isInsert && /\binput\s*\(/i.test(req.sql.split(/\bFORMAT\b/i)[0])) {
      // chdb reads nothing through input() from inline data: the INSERT would succeed having written no row.
      throw new EngineError(
        'Code: 48. DB::Exception: INSERT … SELECT … FROM input(…) is not supported here (chdb writes no rows for it); send the rows in the table\'s own columns with INSERT INTO t FORMAT X. (NOT_IMPLEMENTED)',
        48,
        'NOT_IMPLEMENTED',
      );
    }
    if (req.data !== undefined && req.data.length > 0 && !params) {
      // The payload stays bytes (binary formats included); the engine parses it after the statement.
      const r = await this.native.InsertRawAsyncConnection(conn.handle, req.sql, req.data, false);
      return {
        body: Buffer.alloc(0),
        summary: summary({
          read_rows: r.rowsWritten,
          read_bytes: req.data.length,
          written_rows: r.rowsWritten,
          written_bytes: r.bytesWritten,
          elapsed_ns: r.elapsed * 1e9,
        }),
      };
    }
    let sql = req.sql;
    if (req.data !== undefined && req.data.length > 0) {
      // Parameters and a payload: only the text path binds parameters, so the payload joins the SQL text (UTF-8).
      sql = `${req.sql}\n${req.data.toString('utf8')}`;
    } else if (isInsert && insertExpectsData(sql)) {
      // An INSERT … FORMAT X with an empty body inserts nothing (as on a server); the engine would try to read stdin.
      return { body: Buffer.alloc(0), summary: summary({}) };
    }
    const r = await this.raw(conn, sql, req.defaultFormat, params);
    const body = Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength);
    return {
      body,
      summary: summary({
        read_rows: r.rowsRead,
        read_bytes: r.bytesRead,
        written_rows: isInsert ? r.rowsRead : 0,
        written_bytes: isInsert ? r.bytesRead : 0,
        result_rows: isInsert ? 0 : r.rowsRead,
        result_bytes: body.length,
        elapsed_ns: r.elapsed * 1e9,
      }),
    };
  }

  /** The SET assignments that put settings back as they were before the first SET of a request. */
  private originalAssignments(conn: Conn, names: string[]): string {
    return names
      .map((name) => {
        const original = conn.originals.get(name);
        return `${name} = ${original === undefined ? 'DEFAULT' : quoteString(original)}`;
      })
      .join(', ');
  }

  /** Puts back the request settings applied on a connection that `wanted` does not ask for (with the same value). */
  private async resetSettings(conn: Conn, wanted: Map<string, string>): Promise<void> {
    const toReset = [...conn.applied].filter(([name, value]) => wanted.get(name) !== value).map(([name]) => name);
    if (!toReset.length) return;
    await this.raw(conn, `SET ${this.originalAssignments(conn, toReset)}`, 'TabSeparated');
    for (const name of toReset) conn.applied.delete(name);
  }

  /** SETs the `wanted` settings not applied yet (after resetSettings), noting their previous values first. */
  private async setSettings(conn: Conn, wanted: Map<string, string>): Promise<void> {
    const toSet = [...wanted].filter(([name]) => !conn.applied.has(name));
    if (!toSet.length) return;
    const unseen = toSet.map(([name]) => name).filter((name) => !conn.originals.has(name));
    if (unseen.length) {
      const r = await this.raw(
        conn,
        `SELECT name, value, changed FROM system.settings WHERE name IN (${unseen.map(quoteString).join(', ')})`,
        'JSONCompactEachRow',
      );
      const text = Buffer.from(r.bytes).toString('utf8').trim();
      for (const line of text ? text.split('\n') : []) {
        const [name, value, changed] = JSON.parse(line) as [string, string, number | string | boolean];
        conn.originals.set(name, Number(changed) ? value : undefined);
      }
      // A name the engine does not list is not a setting: the SET below fails with UNKNOWN_SETTING.
    }
    try {
      await this.raw(conn, `SET ${toSet.map(([name, value]) => `${name} = ${quoteString(value)}`).join(', ')}`, 'TabSeparated');
    } catch (e) {
      // Nothing of a failed SET is kept; put back what may have been applied before the failing assignment.
      const known = toSet.map(([name]) => name).filter((name) => conn.originals.has(name));
      if (known.length) {
        await this.raw(conn, `SET ${this.originalAssignments(conn, known)}`, 'TabSeparated').catch(() => {
          conn.broken = true;
        });
      }
      throw e;
    }
    for (const [name, value] of toSet) conn.applied.set(name, value);
  }

  private async use(conn: Conn, database: string): Promise<void> {
    if (conn.db === database) return;
    await this.raw(conn, `USE ${quoteIdentifier(database)}`, 'TabSeparated');
    conn.db = database;
  }

  private async currentDatabase(conn: Conn): Promise<string> {
    const r = await this.raw(conn, 'SELECT currentDatabase()', 'TabSeparated');
    return Buffer.from(r.bytes).toString('utf8').replace(/\n$/, '');
  }

  /**
   * After an error: drains what the failed query may have left in the connection's output buffer, then checks the
   * connection answers a query exactly. False when it does not (the caller replaces the connection).
   */
  private async recover(conn: Conn): Promise<boolean> {
    try {
      await this.raw(conn, 'SELECT 1', 'TabSeparated');
      const r = await this.raw(conn, "SELECT 'ok'", 'TabSeparated');
      return Buffer.from(r.bytes).toString('utf8') === 'ok\n';
    } catch (e) {
      this.warn('a connection did not recover from an error', e);
      return false;
    }
  }

  private raw(conn: Conn, sql: string, format: string, params?: Record<string, string>): Promise<NativeQueryResult> {
    return params ? this.native.QueryAsyncConnection(conn.handle, sql, format, params) : this.native.QueryAsyncConnection(conn.handle, sql, format);
  }

  private async openConn(): Promise<Conn> {
    const session = new Session(this.path);
    const conn: Conn = { session, handle: session.connection, db: 'default', applied: new Map(), originals: new Map() };
    // chdb turns on `implicit_select` (a bare expression as a query); a server does not.
    await this.raw(conn, 'SET implicit_select = 0', 'TabSeparated');
    return conn;
  }

  private closeConn(conn: Conn): void {
    try {
      conn.session.close();
    } catch (e) {
      this.warn('could not close a connection', e);
    }
  }

  private warn(what: string, e?: unknown): void {
    process.stderr.write(`[clickhouse-local] ${what}${e ? `: ${e instanceof Error ? e.message : String(e)}` : ''}\n`);
  }

  /** Any failure as a ClickHouse exception (code, name, and a message in the server's `Code: N. DB::Exception:` form). */
  toEngineError(e: unknown): EngineError {
    if (e instanceof EngineError) return e;
    const text = (e instanceof Error ? e.message : String(e)).trim();
    const m = /^Code: (\d+)\. /.exec(text);
    if (m) {
      const code = Number(m[1]);
      const names = [...text.matchAll(/\(([A-Z][A-Z0-9_]{2,})\)/g)];
      const name = this.errorNames.get(code) ?? names[names.length - 1]?.[1] ?? 'UNKNOWN_EXCEPTION';
      return new EngineError(text, code, name);
    }
    return new EngineError(`Code: 1001. DB::Exception: ${text.replace(/\.$/, '')}. (STD_EXCEPTION)`, 1001, 'STD_EXCEPTION');
  }
}
