/**
 * Erasing recorded content from the ClickHouse telemetry tables (docs/content-policy.md "Erasure"), with the
 * scope rules and counts of the embedded engine (duckdb/content-eraser.ts): every attribute whose key carries a
 * content class being erased (domains/content/content-keys.ts, the one table) is removed from the span,
 * span-event and log rows in scope, and a log body that is recorded content of such a class (`body_class`)
 * becomes NULL; everything else of a row stays. A scope is a project, the classes, and a cut-off time (rows
 * that started, happened or were stamped before it), one subject (a session, a trace, or an end user named by
 * `enduser.id` or `user.id`), or both.
 *
 * How (chosen over inserting rewritten copies and deleting the originals):
 * - Rows are picked in SQL by a cheap substring test on the attribute JSON (lower-cased), read a page at a
 *   time in key order, and rewritten here by the key table (`withoutClasses`): prefixes and case-insensitive
 *   keys, exactly as on DuckDB. ClickHouse's JSON functions could not do it in SQL: they refuse documents
 *   JavaScript writes (a double of 1e20 is written as a 21-digit integer), which would leave content in place.
 * - The rewritten attributes are written back by `ALTER TABLE … UPDATE attributes = transform(hash of the
 *   attributes, [hashes], [new attributes], attributes)`, restricted to the rows' keys with their original
 *   attributes' hash: one mutation per batch of rows (up to `BATCH_ROWS` rows, `BATCH_BYTES` of literals),
 *   never one per row; the values go as literals in the statement, not as parameters (those travel in the
 *   URL, which servers and proxies bound far below a batch). A row whose new attributes alone pass the server's
 *   statement limit (`max_query_size`, 256 KiB by default) cannot be written back: the erasure fails, says so,
 *   and leaves the row as it was. The rows stay the rows they were (same copies, ingest times, order): the trace and run
 *   summaries count the stored copies of a trace and rely on copies only ever being added (summaries.ts),
 *   which a delete of the originals would break.
 * - A retried erasure is safe: a row already rewritten has another hash and no content left, so it is neither
 *   picked nor updated again (the second erasure counts nothing), and a batch applied twice changes nothing.
 *   The mutation carries its values as literals (deterministic, as Replicated tables require); in cluster mode
 *   it goes to every shard's local table (`db.deleteTarget`), as deletes do.
 * - No gate against ingest is needed: rows written meanwhile are either not picked (newer than the page) or
 *   picked by a later page or erasure.
 */
import { CONTENT_KEYS, contentClassOf, type ContentClass } from '../../../domains/content/content-keys.js';
import type { EraseCounts, EraseScope, ErasureSubjectKind, TelemetryContentEraser } from '../../../domains/content-erasure/store.js';
import type { QueryParams } from './client.js';
import { LOCAL_SUBQUERIES } from './agent-runs-sql.js';
import type { ChTelemetryDb } from './db.js';
import { jsonText } from './sql.js';

/** Rows read at a time. */
const PAGE = 500;
/**
 * Rewritten rows are written back when this many are pending, or about this many bytes of keys and new
 * attributes; a mutation carries at most `BATCH_BYTES` of literals (the server parses at most 256 KiB of a
 * statement, `max_query_size`).
 */
const BATCH_ROWS = 5_000;
const BATCH_CHARS = 150_000;
const BATCH_BYTES = 150_000;
/** Log records whose bodies are read (keys only) and nulled at a time. */
const BODY_PAGE = 2_000;

interface KeyColumn {
  name: string;
  type: 'String' | 'Int32' | 'Int64';
}

interface Table {
  name: 'spans' | 'span_events' | 'logs';
  /** The columns a row is named by (in this order: the keyset of the pages), with their types. */
  key: KeyColumn[];
  time: string;
  count: 'spans' | 'spanEvents' | 'logs';
  subject(kind: ErasureSubjectKind): string;
}

const ENDUSER = `(${jsonText('attributes', 'enduser_key')} = {subject:String} OR ${jsonText('attributes', 'user_key')} = {subject:String})`;

/** The spans of a subject, for the rows that hang off a span (events) or a trace (logs). */
const SUBJECT_SPANS = (kind: ErasureSubjectKind) =>
  kind === 'session_key' ? 'session_key = {subject:String}' : kind === 'trace_id' ? 'trace_id = {subject:String}' : ENDUSER;

const SPANS: Table = {
  name: 'spans',
  key: [
    { name: 'trace_id', type: 'String' },
    { name: 'span_id', type: 'String' },
  ],
  time: 'start_us',
  count: 'spans',
  subject: SUBJECT_SPANS,
};

const EVENTS: Table = {
  name: 'span_events',
  key: [
    { name: 'trace_id', type: 'String' },
    { name: 'span_id', type: 'String' },
    { name: 'event_index', type: 'Int32' },
  ],
  time: 'ts_us',
  count: 'spanEvents',
  subject: (kind) => `(trace_id, span_id) IN (SELECT trace_id, span_id FROM spans WHERE project_id = {p:String} AND ${SUBJECT_SPANS(kind)})`,
};

const LOGS: Table = {
  name: 'logs',
  key: [
    { name: 'ts_us', type: 'Int64' },
    { name: 'log_id', type: 'String' },
  ],
  time: 'ts_us',
  count: 'logs',
  subject: (kind) =>
    kind === 'trace_id'
      ? 'trace_id = {subject:String}'
      : kind === 'enduser_id'
        ? ENDUSER
        : 'trace_id IN (SELECT trace_id FROM spans WHERE project_id = {p:String} AND session_key = {subject:String})',
};

const TABLES: Table[] = [SPANS, EVENTS, LOGS];

/** The parameters every statement of a scope binds. */
function scopeParams(scope: EraseScope): QueryParams {
  const p: QueryParams = { p: scope.projectId, classes: [...scope.classes], needles: needlesOf(scope.classes), enduser_key: 'enduser.id', user_key: 'user.id' };
  if (scope.beforeUs !== undefined) p.before = Math.trunc(scope.beforeUs);
  if (scope.subject) p.subject = scope.subject.id;
  return p;
}

/** `"key` of every key-table row of the classes (lower case): a row with none of them in its JSON has no content of them. */
const needlesOf = (classes: readonly ContentClass[]) => CONTENT_KEYS.filter((r) => classes.includes(r.contentClass)).map((r) => `"${r.key}`);

/** The conditions of a table's rows in scope that may hold content of the classes (the substring test). */
function scopeOf(table: Table, scope: EraseScope): string[] {
  const where = ['project_id = {p:String}', 'multiSearchAny(lowerUTF8(attributes), {needles:Array(String)})'];
  if (scope.beforeUs !== undefined) where.push(`${table.time} < {before:Int64}`);
  if (scope.subject) where.push(table.subject(scope.subject.kind));
  return where;
}

/** The conditions of the log rows in scope whose body is content of the classes. */
function bodiesOf(scope: EraseScope): string[] {
  const where = ['project_id = {p:String}', 'body IS NOT NULL', 'body_class IN {classes:Array(String)}'];
  if (scope.beforeUs !== undefined) where.push('ts_us < {before:Int64}');
  if (scope.subject) where.push(LOGS.subject(scope.subject.kind));
  return where;
}

const keyList = (t: Table) => t.key.map((k) => k.name).join(', ');
/** A key value as read (64-bit integers arrive as strings) as it is bound again. */
const keyValue = (c: KeyColumn, v: unknown) => (c.type === 'String' ? String(v) : Number(v));

/** Binds the keyset condition `(key) > (last)` into `params`. */
function after(table: Table, last: unknown[] | undefined, params: QueryParams): string[] {
  if (!last) return [];
  table.key.forEach((c, i) => (params[`after${i}`] = keyValue(c, last[i])));
  return [`(${keyList(table)}) > (${table.key.map((c, i) => `{after${i}:${c.type}}`).join(', ')})`];
}

/** One row to rewrite: its key, its original attributes' hash, its new attributes. */
interface Change {
  key: unknown[];
  hash: string;
  json: string;
}

export class ChContentEraser implements TelemetryContentEraser {
  constructor(private readonly db: ChTelemetryDb) {}

  /**
   * Whether any row in scope may hold content of the classes (the substring test only, so it can say yes for a
   * value that merely mentions a key): the scheduled erasure records an action only when it may act.
   */
  async mayHaveContent(scope: EraseScope): Promise<boolean> {
    if (scope.classes.length === 0) return false;
    const p = scopeParams(scope);
    for (const table of TABLES) {
      if ((await this.db.client.query(`SELECT 1 FROM ${table.name} WHERE ${scopeOf(table, scope).join(' AND ')} LIMIT 1 ${LOCAL_SUBQUERIES}`, p)).length) return true;
    }
    return (await this.db.client.query(`SELECT 1 FROM logs WHERE ${bodiesOf(scope).join(' AND ')} LIMIT 1 ${LOCAL_SUBQUERIES}`, p)).length > 0;
  }

  async erase(scope: EraseScope): Promise<EraseCounts> {
    const counts: EraseCounts = { spans: 0, spanEvents: 0, logs: 0, attributes: 0, bodies: 0 };
    if (scope.classes.length === 0) return counts;
    const classes = new Set(scope.classes);
    // Content bodies of the classes first; their rows count once in `logs` with the attribute rewrites below.
    const bodyRows = await this.eraseBodies(scope);
    counts.bodies = counts.logs = bodyRows.size;
    for (const table of TABLES) {
      const done = await this.rewrite(table, scope, classes, table === LOGS ? bodyRows : undefined);
      counts[table.count] += done.changed;
      counts.attributes += done.removed;
    }
    return counts;
  }

  /** Nulls the content bodies in scope; returns the ids of their log records. */
  private async eraseBodies(scope: EraseScope): Promise<Set<string>> {
    const ids = new Set<string>();
    const where = bodiesOf(scope);
    let last: unknown[] | undefined;
    for (;;) {
      const p = scopeParams(scope);
      const sql = `SELECT ts_us, log_id FROM logs WHERE ${[...where, ...after(LOGS, last, p)].join(' AND ')}
        ORDER BY ts_us, log_id LIMIT ${BODY_PAGE} ${LOCAL_SUBQUERIES}`;
      const rows = await this.db.client.query<{ ts_us: string; log_id: string }>(sql, p);
      if (rows.length === 0) break;
      for (const r of rows) ids.add(r.log_id);
      // By key: copies of a record on the next page are nulled now and not found again.
      for (const keys of batches(rows.map((r) => `(${Number(r.ts_us)}, ${sqlString(r.log_id)})`))) {
        await this.db.client.command(
          `ALTER TABLE ${this.db.deleteTarget('logs')} UPDATE body = NULL
           WHERE project_id = {p:String} AND (ts_us, log_id) IN CAST([${keys.join(', ')}] AS Array(Tuple(Int64, String)))
             AND body IS NOT NULL AND body_class IN {classes:Array(String)}`,
          { p: scope.projectId, classes: [...scope.classes] },
        );
      }
      if (rows.length < BODY_PAGE) break;
      const end = rows[rows.length - 1];
      last = [end.ts_us, end.log_id];
    }
    return ids;
  }

  /** Removes the classes' attributes from a table's rows in scope; `bodyRows` (logs): records already counted. */
  private async rewrite(table: Table, scope: EraseScope, classes: ReadonlySet<ContentClass>, bodyRows?: Set<string>): Promise<{ changed: number; removed: number }> {
    let changed = 0;
    let removed = 0;
    let pending: Change[] = [];
    let pendingChars = 0;
    const where = scopeOf(table, scope);
    const select = `SELECT ${keyList(table)}, cityHash64(attributes) AS h, attributes FROM ${table.name}`;
    const take = (rows: Record<string, unknown>[]) => {
      for (const r of rows) {
        const next = withoutClasses(String(r.attributes), classes);
        if (!next) continue; // the substring matched a value, not a key: nothing to remove
        const key = table.key.map((c) => r[c.name]);
        pending.push({ key, hash: String(r.h), json: next.json });
        pendingChars += next.json.length + 64;
        changed++;
        removed += next.removed;
        if (bodyRows?.has(String(r.log_id))) changed--;
      }
    };
    const flush = async () => {
      if (pending.length) await this.update(table, scope.projectId, pending);
      pending = [];
      pendingChars = 0;
    };
    let last: unknown[] | undefined;
    for (;;) {
      const p = scopeParams(scope);
      const rows = await this.db.client.query(`${select} WHERE ${[...where, ...after(table, last, p)].join(' AND ')} ORDER BY ${keyList(table)} LIMIT ${PAGE} ${LOCAL_SUBQUERIES}`, p);
      const keyOf = (r: Record<string, unknown>) => JSON.stringify(table.key.map((c) => r[c.name]));
      let page = rows;
      if (rows.length === PAGE) {
        // The copies of the last key may go on past the page: that key is read whole, on the next page, or
        // here when it is the only key of the page.
        const lastKey = keyOf(rows[rows.length - 1]);
        page = rows.filter((r) => keyOf(r) !== lastKey);
        if (page.length === 0) {
          const q = scopeParams(scope);
          table.key.forEach((c, i) => (q[`k${i}`] = keyValue(c, rows[0][c.name])));
          const same = table.key.map((c, i) => `${c.name} = {k${i}:${c.type}}`);
          page = await this.db.client.query(`${select} WHERE ${[...where, ...same].join(' AND ')} ${LOCAL_SUBQUERIES}`, q);
        }
      }
      take(page);
      if (pending.length >= BATCH_ROWS || pendingChars >= BATCH_CHARS) await flush();
      if (rows.length < PAGE) break;
      const end = page.length ? page[page.length - 1] : rows[rows.length - 1];
      last = table.key.map((c) => end[c.name]);
    }
    await flush();
    return { changed, removed };
  }

  /** Writes the new attributes of these rows, each named by its key and its original attributes' hash: at most `BATCH_BYTES` of literals a mutation. */
  private async update(table: Table, projectId: string, changes: Change[]): Promise<void> {
    const types = [...table.key.map((c) => c.type), 'UInt64'].join(', ');
    for (let i = 0; i < changes.length; ) {
      const keys: string[] = [];
      const values = new Map<string, string>();
      let bytes = 0;
      for (; i < changes.length; i++) {
        const ch = changes[i];
        const key = `(${ch.key.map((v, j) => (table.key[j].type === 'String' ? sqlString(String(v)) : String(Number(v)))).join(', ')}, ${ch.hash})`;
        const value = values.has(ch.hash) ? undefined : sqlString(ch.json);
        const n = Buffer.byteLength(key) + (value === undefined ? 0 : Buffer.byteLength(value) + ch.hash.length) + 4;
        if (keys.length && bytes + n > BATCH_BYTES) break;
        keys.push(key);
        if (value !== undefined) values.set(ch.hash, value);
        bytes += n;
      }
      await this.db.client.command(
        `ALTER TABLE ${this.db.deleteTarget(table.name)}
         UPDATE attributes = transform(cityHash64(attributes), CAST([${[...values.keys()].join(', ')}] AS Array(UInt64)), CAST([${[...values.values()].join(', ')}] AS Array(String)), attributes)
         WHERE project_id = {p:String} AND (${keyList(table)}, cityHash64(attributes)) IN CAST([${keys.join(', ')}] AS Array(Tuple(${types})))`,
        { p: projectId },
      );
    }
  }
}

/** A ClickHouse string literal of any text. */
function sqlString(s: string): string {
  return `'${s.replace(/[\\'\x00-\x1f]/g, (c) => (c === '\\' || c === "'" ? `\\${c}` : `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`))}'`;
}

/** The items split into groups of at most `BATCH_BYTES` (UTF-8), each group at least one item. */
function batches(items: string[]): string[][] {
  const out: string[][] = [];
  let cur: string[] = [];
  let bytes = 0;
  for (const it of items) {
    const n = Buffer.byteLength(it) + 2;
    if (cur.length && bytes + n > BATCH_BYTES) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(it);
    bytes += n;
  }
  if (cur.length) out.push(cur);
  return out;
}

/**
 * The attribute JSON without the keys of these classes, or undefined when it has none: the rule of
 * duckdb/content-eraser.ts `withoutClasses` (the key table's `contentClassOf` on every top-level key).
 */
export function withoutClasses(json: string, classes: ReadonlySet<ContentClass>): { json: string; removed: number } | undefined {
  let attrs: Record<string, unknown>;
  try {
    attrs = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (attrs === null || typeof attrs !== 'object') return undefined;
  let removed = 0;
  for (const k of Object.keys(attrs)) {
    const c = contentClassOf(k);
    if (c && classes.has(c)) {
      delete attrs[k];
      removed++;
    }
  }
  return removed ? { json: JSON.stringify(attrs), removed } : undefined;
}
