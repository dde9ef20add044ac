/**
 * ClickHouse adapter of the logs store port (domains/logs/store.ts): log search, context, aggregate, fields,
 * body samples for patterns, the delete and the live tail's polls. The DuckDB adapter (duckdb/logs-query.ts)
 * is the reference: every read answers the same rows in the same order (ties by log id, as there).
 *
 * - Every user value is a `{name:Type}` parameter; attribute keys are parameters too (checked against the
 *   same key pattern as DuckDB's JSON paths). A key is a literal key of the attribute object: `http.method`
 *   is the key "http.method", never a path, as DuckDB's `$."http.method"`.
 * - An attribute's value as text is DuckDB's `json_extract_string`: a string as itself, JSON null or a
 *   missing key as NULL, anything else (number, bool, array, object) as its compact JSON text. It is read
 *   from `JSONExtractRaw` (one parse of the document per key and row). JSON reads run with
 *   `allow_simdjson = 0`: simdjson refuses a whole document holding an integer literal beyond 64 bits (which
 *   JSON.stringify writes for doubles from 2^64 to 1e21 and for -2^63), rapidjson reads it, and its number
 *   texts are DuckDB's (`1e21`, `1.5e-7`, `0.000001`).
 * - The delete is a lightweight DELETE (`deleteTarget`), one at a time per store: the count is read first,
 *   so concurrent identical deletes count each record once (on one node; nodes do not coordinate).
 */
import { CONTENT_EXACT_KEYS, CONTENT_KEY_PREFIXES } from '../../../domains/content/content-keys.js';
import { SEVERITY_TEXT_RANKS } from '../../../domains/logs/severity.js';
import type {
  BodySample,
  FieldRow,
  FieldsQuery,
  FieldsResult,
  LogAggregateQuery,
  LogAggregateResult,
  LogFilter,
  LogPosition,
  LogRow,
  LogSearch,
  LogsStore,
} from '../../../domains/logs/store.js';
import type { AttrFilter } from '../../../domains/traces/query-rules.js';
import type { QueryParams } from './client.js';
import type { ChTelemetryDb } from './db.js';

type Row = Record<string, unknown>;

/** Reads, inserts: the table (the Distributed one in cluster mode). Deletes go to `deleteTarget`. */
const TABLE = 'logs';

/** JSON reads with rapidjson (see the header). Appended to every SELECT that may read attributes. */
const JSON_SETTINGS = 'SETTINGS allow_simdjson = 0';

const SAFE_KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

/** An attribute key as DuckDB's attrPath takes it: validated upstream; this refuses anything else. */
function attrKey(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error('attribute key is not safe for a JSON path');
  return key;
}

/** A ClickHouse string literal (only for the fixed severity texts, never for user values). */
const lit = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

const textCases = Object.entries(SEVERITY_TEXT_RANKS)
  .map(([text, rank]) => `WHEN ${lit(text)} THEN ${rank}`)
  .join(' ');

/** The severity rank 1..6 of a row (see domains/logs/severity.ts), or NULL. */
const SEV_RANK = `CAST(multiIf(severity_number BETWEEN 1 AND 24, intDiv(severity_number - 1, 4) + 1,
  CASE replaceRegexpOne(lowerUTF8(trimBoth(severity_text)), '[0-9]+$', '') ${textCases} ELSE NULL END) AS Nullable(Int32))`;

const COLUMNS = `log_id, ts_us, observed_us, severity_number, severity_text, ${SEV_RANK} AS sev, body, trace_id, span_id,
  service_name, environment, scope_name, attributes, resource_attributes, ingested_at_us, body_class`;

/** A value of the compact JSON text `raw` as DuckDB's json_extract_string gives it ('' is a missing key). */
const rawAsText = (raw: string) => `multiIf(${raw} = '' OR ${raw} = 'null', NULL, startsWith(${raw}, '"'), JSONExtractString(${raw}), ${raw})`;

/** `json_extract_string(column, '$."key"')` with the key in parameter `param`. */
const jsonText = (column: string, param: string) => rawAsText(`JSONExtractRaw(${column}, {${param}:String})`);

/** The item's own attribute, else its resource attribute, as text (NULL when neither has it). */
const attrValue = (param: string) => `coalesce(${jsonText('attributes', param)}, ${jsonText('resource_attributes', param)})`;

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const numOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

function logRow(r: Row): LogRow {
  return {
    logId: String(r.log_id),
    tsUs: num(r.ts_us),
    observedUs: numOrNull(r.observed_us),
    severityNumber: numOrNull(r.severity_number),
    severityText: str(r.severity_text),
    severityRank: numOrNull(r.sev),
    body: str(r.body),
    traceId: str(r.trace_id),
    spanId: str(r.span_id),
    serviceName: str(r.service_name),
    environment: str(r.environment),
    scopeName: str(r.scope_name),
    attributes: String(r.attributes),
    resourceAttributes: String(r.resource_attributes),
    ingestedUs: num(r.ingested_at_us),
    bodyClass: str(r.body_class),
  };
}

function attrConditions(filters: AttrFilter[], params: QueryParams): string[] {
  return filters.map((f, i) => {
    params[`a${i}k`] = attrKey(f.key);
    params[`a${i}v`] = f.values;
    return `has({a${i}v:Array(String)}, ${attrValue(`a${i}k`)})`;
  });
}

/** The conditions of a filter (plus the project), filling `params`. */
function conditions(projectId: string, f: LogFilter, params: QueryParams, window?: { fromUs?: number; toUs?: number }): string[] {
  params.project = projectId;
  const conds = ['project_id = {project:String}'];
  if (window?.fromUs !== undefined) {
    conds.push('ts_us >= {lo:Int64}');
    params.lo = window.fromUs;
  }
  if (window?.toUs !== undefined) {
    conds.push('ts_us <= {hi:Int64}');
    params.hi = window.toUs;
  }
  if (f.notBeforeUs !== undefined) {
    conds.push('ts_us >= {notbefore:Int64}');
    params.notbefore = f.notBeforeUs;
  }
  if (f.serviceNames?.length) {
    conds.push('has({services:Array(String)}, service_name)');
    params.services = f.serviceNames;
  }
  if (f.minSeverity !== undefined) {
    conds.push(`${SEV_RANK} >= {minsev:Int32}`);
    params.minsev = f.minSeverity;
  }
  if (f.text !== undefined) {
    conds.push("position(lowerUTF8(ifNull(body, '')), {text:String}) > 0");
    params.text = f.text;
    // A content body matches only when the reader is served its class in full.
    const readable = f.readableBodyClasses ?? [];
    if (readable.length) {
      conds.push('(body_class IS NULL OR has({bodyclasses:Array(String)}, body_class))');
      params.bodyclasses = [...readable];
    } else conds.push('body_class IS NULL');
  }
  if (f.traceId !== undefined) {
    conds.push('trace_id = {trace:String}');
    params.trace = f.traceId;
  }
  if (f.logId !== undefined) {
    conds.push('log_id = {logid:String}');
    params.logid = f.logId;
  }
  conds.push(...attrConditions(f.attrs, params));
  return conds;
}

function groupExpr(g: LogAggregateQuery['groupBy'][number], i: number, params: QueryParams): string {
  if (g.kind === 'service') return 'service_name';
  if (g.kind === 'severity') return `toString(${SEV_RANK})`;
  params[`g${i}k`] = attrKey(g.key);
  return attrValue(`g${i}k`);
}

/** Above this many URL characters of excluded ids a tail poll filters them itself (URLs stay short). */
const MAX_EXCLUDE_PARAM_CHARS = 3000;
/** Ids per DELETE of the rows a mutation's JSON parser could not read (see delete). */
const DELETE_ID_CHUNK = 50;

/** One delete at a time per store (the count, then the DELETE). */
const deleteQueues = new WeakMap<ChTelemetryDb, { tail: Promise<unknown> }>();
function serialized<T>(db: ChTelemetryDb, fn: () => Promise<T>): Promise<T> {
  let q = deleteQueues.get(db);
  if (!q) deleteQueues.set(db, (q = { tail: Promise.resolve() }));
  const run = q.tail.then(fn, fn);
  q.tail = run.catch(() => undefined);
  return run;
}

export class ChLogsQuery implements LogsStore {
  constructor(private readonly db: ChTelemetryDb) {}

  private query(sql: string, params: QueryParams): Promise<Row[]> {
    return this.db.client.query<Row>(sql, params);
  }

  async search(q: LogSearch): Promise<LogRow[]> {
    const params: QueryParams = { lim: q.limit };
    const conds = conditions(q.projectId, q.filter, params, q);
    const dir = q.order === 'asc' ? 'ASC' : 'DESC';
    if (q.after) {
      const op = q.order === 'asc' ? '>' : '<';
      conds.push(`(ts_us ${op} {cts:Int64} OR (ts_us = {cts:Int64} AND log_id ${op} {cid:String}))`);
      params.cts = q.after.tsUs;
      params.cid = q.after.logId;
    }
    const sql = `SELECT ${COLUMNS} FROM ${TABLE} WHERE ${conds.join(' AND ')} ORDER BY ts_us ${dir}, log_id ${dir} LIMIT {lim:UInt64} ${JSON_SETTINGS}`;
    return (await this.query(sql, params)).map(logRow);
  }

  async get(projectId: string, logId: string): Promise<LogRow | null> {
    const sql = `SELECT ${COLUMNS} FROM ${TABLE} WHERE project_id = {project:String} AND log_id = {id:String} ORDER BY ingested_at_us LIMIT 1`;
    const r = await this.query(sql, { project: projectId, id: logId });
    return r.length ? logRow(r[0]) : null;
  }

  async neighbours(projectId: string, serviceName: string | null, at: LogPosition, side: 'before' | 'after', n: number): Promise<LogRow[]> {
    if (n === 0) return [];
    const op = side === 'before' ? '<' : '>';
    const dir = side === 'before' ? 'DESC' : 'ASC';
    const params: QueryParams = { project: projectId, ts: at.tsUs, id: at.logId, n };
    let svc = 'service_name IS NULL';
    if (serviceName !== null) {
      svc = 'service_name = {svc:String}';
      params.svc = serviceName;
    }
    const sql = `SELECT ${COLUMNS} FROM ${TABLE}
      WHERE project_id = {project:String} AND ${svc} AND (ts_us ${op} {ts:Int64} OR (ts_us = {ts:Int64} AND log_id ${op} {id:String}))
      ORDER BY ts_us ${dir}, log_id ${dir} LIMIT {n:UInt64}`;
    return (await this.query(sql, params)).map(logRow);
  }

  async aggregate(q: LogAggregateQuery): Promise<LogAggregateResult> {
    const params: QueryParams = { more: q.maxSeries + 1 };
    const conds = conditions(q.projectId, q.filter, params, q);
    const groups = q.groupBy.map((g, i) => `${groupExpr(g, i, params)} AS g${i}`);
    const names = q.groupBy.map((_, i) => `g${i}`);
    let bucket = '';
    let originUs = 0;
    if (q.stepUs !== undefined) {
      const step = BigInt(q.stepUs);
      const lo = BigInt(q.fromUs);
      const origin = lo - (((lo % step) + step) % step);
      originUs = Number(origin);
      params.step = q.stepUs;
      params.origin = originUs;
      bucket = 'intDiv(ts_us - {origin:Int64}, {step:Int64}) AS b';
    }
    const cols = [...groups, bucket].filter(Boolean);
    const f = `(SELECT ${cols.length ? cols.join(', ') : '1 AS one'} FROM ${TABLE} WHERE ${conds.join(' AND ')})`;
    const keys = [...names, ...(bucket ? ['b'] : [])];
    const order = [...names.map((g) => `${g} ASC NULLS LAST`), ...(bucket ? ['b'] : [])];
    if (names.length) {
      const [{ n: groupCount }] = await this.query(`SELECT count() AS n FROM (SELECT DISTINCT ${names.join(', ')} FROM ${f} LIMIT {more:UInt64}) ${JSON_SETTINGS}`, params);
      if (num(groupCount) > q.maxSeries) return { kind: 'too_many_series' };
    }
    const sql = `SELECT ${[...keys, 'count() AS n'].join(', ')} FROM ${f} ${keys.length ? `GROUP BY ${keys.join(', ')} ORDER BY ${order.join(', ')}` : ''} ${JSON_SETTINGS}`;
    const r = await this.query(sql, params);
    return {
      kind: 'rows',
      rows: r.map((row) => ({
        group: names.map((g) => str(row[g])),
        ...(bucket ? { bucketUs: originUs + num(row.b) * q.stepUs! } : {}),
        count: num(row.n),
      })),
    };
  }

  async fields(q: FieldsQuery): Promise<FieldsResult> {
    const params: QueryParams = { sample: q.sample, more: q.sample + 1, maxkeys: q.maxKeys, top: q.topValues, maxlen: q.maxValueLength };
    const conds = conditions(q.projectId, q.filter, params, q).join(' AND ');
    let contentFilter = '';
    if (q.hideContentKeys) {
      params.ckeys = [...CONTENT_EXACT_KEYS];
      CONTENT_KEY_PREFIXES.forEach((p, i) => (params[`cp${i}`] = p));
      const prefixes = CONTENT_KEY_PREFIXES.map((_, i) => ` OR startsWith(lowerUTF8(key), {cp${i}:String})`);
      contentFilter = `WHERE NOT (has({ckeys:Array(String)}, lowerUTF8(key))${prefixes.join('')})`;
    }
    // One pass over the sample: (source, key, value) counts, then per key its logs, distinct values and top values.
    const sql = `
      SELECT src, key, n, d, total, arrayMap(x -> x.1, top) AS tv, arrayMap(x -> x.2, top) AS tn FROM (
        SELECT src, key, sum(c) AS n, countIf(v IS NOT NULL) AS d,
          arraySlice(arraySort(x -> (-toInt64(x.2), x.1),
            groupArrayIf((assumeNotNull(v), c), v IS NOT NULL AND lengthUTF8(assumeNotNull(v)) <= {maxlen:UInt64})), 1, {top:UInt64}) AS top,
          count() OVER () AS total
        FROM (
          SELECT src, key, v, count() AS c FROM (
            SELECT kv.1 AS src, kv.2 AS key, ${rawAsText('kv.3')} AS v
            FROM (
              SELECT arrayJoin(arrayConcat(
                arrayMap(x -> ('attributes', x.1, x.2), JSONExtractKeysAndValuesRaw(attributes)),
                arrayMap(x -> ('resource_attributes', x.1, x.2), JSONExtractKeysAndValuesRaw(resource_attributes)))) AS kv
              FROM (SELECT attributes, resource_attributes FROM ${TABLE} WHERE ${conds} ORDER BY ts_us DESC, log_id DESC LIMIT {sample:UInt64})))
          ${contentFilter}
          GROUP BY src, key, v)
        GROUP BY src, key)
      ORDER BY n DESC, key, src
      LIMIT {maxkeys:UInt64}
      ${JSON_SETTINGS}`;
    const countSql = `SELECT count() AS n FROM (SELECT 1 FROM ${TABLE} WHERE ${conds} LIMIT {more:UInt64}) ${JSON_SETTINGS}`;
    const [{ n: matched }] = await this.query(countSql, params);
    const r = await this.query(sql, params);
    const fields: FieldRow[] = r.map((x) => {
      const values = (x.tv as string[] | null) ?? [];
      const counts = (x.tn as (string | number)[] | null) ?? [];
      return {
        source: x.src as FieldRow['source'],
        key: String(x.key),
        count: num(x.n),
        distinctValues: num(x.d),
        top: values.map((value, i) => ({ value, count: num(counts[i]) })),
      };
    });
    return {
      fields,
      totalKeys: r.length ? num(r[0].total) : 0,
      scanned: Math.min(num(matched), q.sample),
      sampled: num(matched) > q.sample,
    };
  }

  async bodies(q: { projectId: string; filter: LogFilter; fromUs: number; toUs: number; limit: number; bodyChars: number }): Promise<BodySample[]> {
    const params: QueryParams = { lim: q.limit + 1, chars: q.bodyChars };
    const conds = conditions(q.projectId, q.filter, params, q);
    const sql = `SELECT log_id, ts_us, service_name, ${SEV_RANK} AS sev, substringUTF8(ifNull(body, ''), 1, {chars:UInt64}) AS b, body_class,
        length(ifNull(body, '')) AS bytes
      FROM ${TABLE} WHERE ${conds.join(' AND ')} ORDER BY ts_us DESC, log_id DESC LIMIT {lim:UInt64} ${JSON_SETTINGS}`;
    return (await this.query(sql, params)).map((r) => ({
      logId: String(r.log_id),
      tsUs: num(r.ts_us),
      serviceName: str(r.service_name),
      severityRank: numOrNull(r.sev),
      body: String(r.b),
      bodyClass: str(r.body_class),
      bodyBytes: num(r.bytes),
    }));
  }

  /**
   * Counts the matching rows, then deletes them with one lightweight DELETE. The DELETE's condition runs as
   * a mutation with the server's JSON parser (simdjson, whatever the query says): with attribute filters,
   * the rows it could not read are looked for again (rapidjson) and deleted by id.
   */
  delete(q: { projectId: string; filter: LogFilter; fromUs?: number; toUs?: number }): Promise<number> {
    return serialized(this.db, async () => {
      const params: QueryParams = {};
      const where = conditions(q.projectId, q.filter, params, q).join(' AND ');
      const [{ n }] = await this.query(`SELECT count() AS n FROM ${TABLE} WHERE ${where} ${JSON_SETTINGS}`, params);
      const count = num(n);
      if (count === 0) return 0;
      const target = this.db.deleteTarget(TABLE);
      await this.db.client.command(`DELETE FROM ${target} WHERE ${where}`, params);
      if (q.filter.attrs.length) {
        const left = (await this.query(`SELECT log_id FROM ${TABLE} WHERE ${where} ${JSON_SETTINGS}`, params)).map((r) => String(r.log_id));
        for (let i = 0; i < left.length; i += DELETE_ID_CHUNK)
          await this.db.client.command(`DELETE FROM ${target} WHERE project_id = {project:String} AND has({ids:Array(String)}, log_id)`, {
            project: q.projectId,
            ids: left.slice(i, i + DELETE_ID_CHUNK),
          });
      }
      return count;
    });
  }

  async maxIngested(projectId: string): Promise<number | null> {
    const [r] = await this.query(`SELECT maxOrNull(ingested_at_us) AS m FROM ${TABLE} WHERE project_id = {project:String}`, { project: projectId });
    return r === undefined ? null : numOrNull(r.m);
  }

  async idsIngestedBetween(projectId: string, afterUs: number, upToUs: number): Promise<{ logId: string; ingestedUs: number }[]> {
    const sql = `SELECT log_id, ingested_at_us FROM ${TABLE}
      WHERE project_id = {project:String} AND ingested_at_us > {after:Int64} AND ingested_at_us <= {upto:Int64}`;
    return (await this.query(sql, { project: projectId, after: afterUs, upto: upToUs })).map((r) => ({ logId: String(r.log_id), ingestedUs: num(r.ingested_at_us) }));
  }

  async tail(q: { projectId: string; filter: LogFilter; afterUs: number; upToUs: number; exclude: string[]; limit: number }): Promise<LogRow[]> {
    const params: QueryParams = { after: q.afterUs, upto: q.upToUs };
    const conds = conditions(q.projectId, q.filter, params);
    conds.push('ingested_at_us > {after:Int64}', 'ingested_at_us <= {upto:Int64}');
    // Few excluded ids go with the query; many are left out here (read as many more rows, then drop them).
    const inQuery = q.exclude.reduce((n, id) => n + encodeURIComponent(id).length + 9, 0) <= MAX_EXCLUDE_PARAM_CHARS;
    if (q.exclude.length && inQuery) {
      conds.push('NOT has({exclude:Array(String)}, log_id)');
      params.exclude = q.exclude;
    }
    params.lim = inQuery ? q.limit : q.limit + q.exclude.length;
    const sql = `SELECT ${COLUMNS} FROM ${TABLE} WHERE ${conds.join(' AND ')} ORDER BY ingested_at_us, ts_us, log_id LIMIT {lim:UInt64} ${JSON_SETTINGS}`;
    const rows = (await this.query(sql, params)).map(logRow);
    if (inQuery) return rows;
    const excluded = new Set(q.exclude);
    return rows.filter((r) => !excluded.has(r.logId)).slice(0, q.limit);
  }
}
