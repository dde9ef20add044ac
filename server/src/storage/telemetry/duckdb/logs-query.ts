/**
 * DuckDB adapter of the logs store port (domains/logs/store.ts): log search, context, aggregate, fields,
 * body samples for patterns, the delete and the live tail's polls. Every user value is a bound parameter;
 * attribute keys reach `json_extract_string` as bound JSON paths built from keys that passed the key pattern.
 */
import { listValue } from '@duckdb/node-api';
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
import type { TelemetryDb } from './open.js';
import { deleteQueue, exec, rows, type Params } from './statements.js';
import { attrConditions, attrPath, inTransaction, num, str } from './traces-query.js';

const textCases = Object.entries(SEVERITY_TEXT_RANKS)
  .map(([text, rank]) => `WHEN '${text.replace(/'/g, "''")}' THEN ${rank}`)
  .join(' ');

/** The severity rank 1..6 of a row (see domains/logs/severity.ts), or NULL. */
const SEV_RANK = `(CASE WHEN severity_number BETWEEN 1 AND 24 THEN (severity_number - 1) // 4 + 1
  ELSE (CASE regexp_replace(lower(trim(severity_text)), '[0-9]+$', '') ${textCases} ELSE NULL END) END)`;

const COLUMNS = `log_id, ts_us, observed_us, severity_number, severity_text, ${SEV_RANK} AS sev, body, trace_id, span_id,
  service_name, environment, scope_name, attributes, resource_attributes, ingested_at_us, body_class`;

function logRow(r: unknown[]): LogRow {
  return {
    logId: r[0] as string,
    tsUs: num(r[1]),
    observedUs: r[2] === null ? null : num(r[2]),
    severityNumber: r[3] === null ? null : num(r[3]),
    severityText: str(r[4]),
    severityRank: r[5] === null ? null : num(r[5]),
    body: str(r[6]),
    traceId: str(r[7]),
    spanId: str(r[8]),
    serviceName: str(r[9]),
    environment: str(r[10]),
    scopeName: str(r[11]),
    attributes: r[12] as string,
    resourceAttributes: r[13] as string,
    ingestedUs: num(r[14]),
    bodyClass: str(r[15]),
  };
}

/** The conditions of a filter (plus the project), filling `params`. */
function conditions(projectId: string, f: LogFilter, params: Params, window?: { fromUs?: number; toUs?: number }): string[] {
  params.project = projectId;
  const conds = ['project_id = $project'];
  if (window?.fromUs !== undefined) {
    conds.push('ts_us >= $lo');
    params.lo = BigInt(window.fromUs);
  }
  if (window?.toUs !== undefined) {
    conds.push('ts_us <= $hi');
    params.hi = BigInt(window.toUs);
  }
  if (f.notBeforeUs !== undefined) {
    conds.push('ts_us >= $notbefore');
    params.notbefore = BigInt(f.notBeforeUs);
  }
  if (f.serviceNames?.length) {
    conds.push('list_contains($services, service_name)');
    params.services = listValue(f.serviceNames);
  }
  if (f.minSeverity !== undefined) {
    conds.push(`${SEV_RANK} >= $minsev`);
    params.minsev = f.minSeverity;
  }
  if (f.text !== undefined) {
    conds.push('strpos(lower(coalesce(body, \'\')), $text) > 0');
    params.text = f.text;
    // A content body matches only when the reader is served its class in full.
    const readable = f.readableBodyClasses ?? [];
    if (readable.length) {
      conds.push('(body_class IS NULL OR list_contains($bodyclasses, body_class))');
      params.bodyclasses = listValue([...readable]);
    } else conds.push('body_class IS NULL');
  }
  if (f.traceId !== undefined) {
    conds.push('trace_id = $trace');
    params.trace = f.traceId;
  }
  if (f.logId !== undefined) {
    conds.push('log_id = $logid');
    params.logid = f.logId;
  }
  conds.push(...attrConditions(f.attrs, params, 'a'));
  return conds;
}

function groupExpr(g: LogAggregateQuery['groupBy'][number], i: number, params: Params): string {
  if (g.kind === 'service') return 'service_name';
  if (g.kind === 'severity') return `CAST(${SEV_RANK} AS VARCHAR)`;
  params[`g${i}k`] = attrPath(g.key);
  return `coalesce(json_extract_string(attributes, $g${i}k), json_extract_string(resource_attributes, $g${i}k))`;
}

export class DuckDbLogsQuery implements LogsStore {
  constructor(private readonly db: TelemetryDb) {}

  search(q: LogSearch): Promise<LogRow[]> {
    const params: Params = { limit: BigInt(q.limit) };
    const conds = conditions(q.projectId, q.filter, params, q);
    const dir = q.order === 'asc' ? 'ASC' : 'DESC';
    if (q.after) {
      const op = q.order === 'asc' ? '>' : '<';
      conds.push(`(ts_us ${op} $cts OR (ts_us = $cts AND log_id ${op} $cid))`);
      params.cts = BigInt(q.after.tsUs);
      params.cid = q.after.logId;
    }
    const sql = `SELECT ${COLUMNS} FROM logs WHERE ${conds.join(' AND ')} ORDER BY ts_us ${dir}, log_id ${dir} LIMIT $limit`;
    return this.db.read(async (c) => (await rows(c, sql, params)).map(logRow));
  }

  get(projectId: string, logId: string): Promise<LogRow | null> {
    const sql = `SELECT ${COLUMNS} FROM logs WHERE project_id = $project AND log_id = $id ORDER BY ingested_at_us LIMIT 1`;
    return this.db.read(async (c) => {
      const r = await rows(c, sql, { project: projectId, id: logId });
      return r.length ? logRow(r[0]) : null;
    });
  }

  neighbours(projectId: string, serviceName: string | null, at: LogPosition, side: 'before' | 'after', n: number): Promise<LogRow[]> {
    if (n === 0) return Promise.resolve([]);
    const op = side === 'before' ? '<' : '>';
    const dir = side === 'before' ? 'DESC' : 'ASC';
    const params: Params = { project: projectId, ts: BigInt(at.tsUs), id: at.logId, n: BigInt(n) };
    let svc = 'service_name IS NULL';
    if (serviceName !== null) {
      svc = 'service_name = $svc';
      params.svc = serviceName;
    }
    const sql = `SELECT ${COLUMNS} FROM logs
      WHERE project_id = $project AND ${svc} AND (ts_us ${op} $ts OR (ts_us = $ts AND log_id ${op} $id))
      ORDER BY ts_us ${dir}, log_id ${dir} LIMIT $n`;
    return this.db.read(async (c) => (await rows(c, sql, params)).map(logRow));
  }

  aggregate(q: LogAggregateQuery): Promise<LogAggregateResult> {
    const params: Params = { more: BigInt(q.maxSeries + 1) };
    const conds = conditions(q.projectId, q.filter, params, q);
    const groups = q.groupBy.map((g, i) => `${groupExpr(g, i, params)} AS g${i}`);
    const names = q.groupBy.map((_, i) => `g${i}`);
    let bucket = '';
    if (q.stepUs !== undefined) {
      const step = BigInt(q.stepUs);
      const lo = BigInt(q.fromUs);
      params.step = step;
      params.origin = lo - (((lo % step) + step) % step);
      bucket = '(ts_us - $origin) // $step AS b';
    }
    const cols = [...groups, bucket].filter(Boolean);
    const f = `WITH f AS (SELECT ${cols.length ? cols.join(', ') : '1 AS one'} FROM logs WHERE ${conds.join(' AND ')})`;
    const keys = [...names, ...(bucket ? ['b'] : [])];
    const order = [...names.map((g) => `${g} ASC NULLS LAST`), ...(bucket ? ['b'] : [])];
    const select = `${f} SELECT ${[...keys, 'count(*)'].join(', ')} FROM f ${keys.length ? `GROUP BY ${keys.join(', ')} ORDER BY ${order.join(', ')}` : ''}`;
    return this.db.read(async (c) => {
      if (names.length) {
        const [[groupCount]] = await rows(c, `${f} SELECT count(*) FROM (SELECT DISTINCT ${names.join(', ')} FROM f LIMIT $more)`, params);
        if (num(groupCount) > q.maxSeries) return { kind: 'too_many_series' };
      }
      const r = await rows(c, select, params);
      const n = names.length;
      const originUs = params.origin !== undefined ? Number(params.origin as bigint) : 0;
      return {
        kind: 'rows',
        rows: r.map((row) => ({
          group: row.slice(0, n).map((v) => str(v)),
          ...(bucket ? { bucketUs: originUs + num(row[n]) * q.stepUs! } : {}),
          count: num(row[bucket ? n + 1 : n]),
        })),
      };
    });
  }

  fields(q: FieldsQuery): Promise<FieldsResult> {
    const params: Params = {
      sample: BigInt(q.sample),
      more: BigInt(q.sample + 1),
      maxkeys: BigInt(q.maxKeys),
      top: BigInt(q.topValues),
      maxlen: BigInt(q.maxValueLength),
    };
    const conds = conditions(q.projectId, q.filter, params, q).join(' AND ');
    let contentFilter = '';
    if (q.hideContentKeys) {
      params.ckeys = listValue([...CONTENT_EXACT_KEYS]);
      CONTENT_KEY_PREFIXES.forEach((p, i) => (params[`cp${i}`] = p));
      const prefixes = CONTENT_KEY_PREFIXES.map((_, i) => `starts_with(lower(key), $cp${i})`);
      contentFilter = `WHERE NOT (list_contains($ckeys, lower(key))${prefixes.map((p) => ` OR ${p}`).join('')})`;
    }
    const sql = `
      WITH f AS (SELECT attributes, resource_attributes FROM logs WHERE ${conds} ORDER BY ts_us DESC, log_id DESC LIMIT $sample),
      kv0 AS (
        SELECT 'attributes' AS src, je.key AS key, json_extract_string(je.value, '$') AS v FROM f, json_each(f.attributes::JSON) je
        UNION ALL
        SELECT 'resource_attributes' AS src, je.key AS key, json_extract_string(je.value, '$') AS v FROM f, json_each(f.resource_attributes::JSON) je),
      kv AS (SELECT * FROM kv0 ${contentFilter}),
      k AS (SELECT src, key, count(*) AS n, count(DISTINCT v) AS d FROM kv GROUP BY src, key),
      kc AS (SELECT src, key, n, d, count(*) OVER () AS total FROM k ORDER BY n DESC, key, src LIMIT $maxkeys),
      tv AS (
        SELECT kv.src, kv.key, kv.v, count(*) AS n FROM kv SEMI JOIN kc ON kv.src = kc.src AND kv.key = kc.key
        WHERE kv.v IS NOT NULL AND length(kv.v) <= $maxlen
        GROUP BY kv.src, kv.key, kv.v
        QUALIFY row_number() OVER (PARTITION BY kv.src, kv.key ORDER BY count(*) DESC, kv.v) <= $top)
      SELECT kc.src, kc.key, kc.n, kc.d, kc.total,
        list(tv.v ORDER BY tv.n DESC, tv.v) FILTER (WHERE tv.v IS NOT NULL),
        list(tv.n ORDER BY tv.n DESC, tv.v) FILTER (WHERE tv.v IS NOT NULL)
      FROM kc LEFT JOIN tv ON tv.src = kc.src AND tv.key = kc.key
      GROUP BY kc.src, kc.key, kc.n, kc.d, kc.total
      ORDER BY kc.n DESC, kc.key, kc.src`;
    const countSql = `SELECT count(*) FROM (SELECT 1 FROM logs WHERE ${conds} LIMIT $more)`;
    return this.db.read(async (c) => {
      const [[matched]] = await rows(c, countSql, params);
      const r = await rows(c, sql, params);
      const fields: FieldRow[] = r.map((x) => {
        const values = (x[5] as string[] | null) ?? [];
        const counts = (x[6] as (bigint | number)[] | null) ?? [];
        return {
          source: x[0] as FieldRow['source'],
          key: x[1] as string,
          count: num(x[2]),
          distinctValues: num(x[3]),
          top: values.map((value, i) => ({ value, count: num(counts[i]) })),
        };
      });
      return {
        fields,
        totalKeys: r.length ? num(r[0][4]) : 0,
        scanned: Math.min(num(matched), q.sample),
        sampled: num(matched) > q.sample,
      };
    });
  }

  bodies(q: { projectId: string; filter: LogFilter; fromUs: number; toUs: number; limit: number; bodyChars: number }): Promise<BodySample[]> {
    const params: Params = { limit: BigInt(q.limit + 1), chars: BigInt(q.bodyChars) };
    const conds = conditions(q.projectId, q.filter, params, q);
    const sql = `SELECT log_id, ts_us, service_name, ${SEV_RANK}, left(coalesce(body, ''), $chars), body_class, strlen(coalesce(body, ''))
      FROM logs WHERE ${conds.join(' AND ')} ORDER BY ts_us DESC, log_id DESC LIMIT $limit`;
    return this.db.read(async (c) =>
      (await rows(c, sql, params)).map((r) => ({
        logId: r[0] as string,
        tsUs: num(r[1]),
        serviceName: str(r[2]),
        severityRank: r[3] === null ? null : num(r[3]),
        body: r[4] as string,
        bodyClass: str(r[5]),
        bodyBytes: num(r[6]),
      })),
    );
  }

  delete(q: { projectId: string; filter: LogFilter; fromUs?: number; toUs?: number }): Promise<number> {
    const params: Params = {};
    const conds = conditions(q.projectId, q.filter, params, q);
    return deleteQueue(this.db).run(() => inTransaction(this.db, (c) => exec(c, `DELETE FROM logs WHERE ${conds.join(' AND ')}`, params)));
  }

  maxIngested(projectId: string): Promise<number | null> {
    return this.db.read(async (c) => {
      const [[m]] = await rows(c, 'SELECT max(ingested_at_us) FROM logs WHERE project_id = $project', { project: projectId });
      return m === null ? null : num(m);
    });
  }

  idsIngestedBetween(projectId: string, afterUs: number, upToUs: number): Promise<{ logId: string; ingestedUs: number }[]> {
    const sql = 'SELECT log_id, ingested_at_us FROM logs WHERE project_id = $project AND ingested_at_us > $after AND ingested_at_us <= $upto';
    return this.db.read(async (c) =>
      (await rows(c, sql, { project: projectId, after: BigInt(afterUs), upto: BigInt(upToUs) })).map((r) => ({
        logId: r[0] as string,
        ingestedUs: num(r[1]),
      })),
    );
  }

  tail(q: { projectId: string; filter: LogFilter; afterUs: number; upToUs: number; exclude: string[]; limit: number }): Promise<LogRow[]> {
    const params: Params = { after: BigInt(q.afterUs), upto: BigInt(q.upToUs), limit: BigInt(q.limit) };
    const conds = conditions(q.projectId, q.filter, params);
    conds.push('ingested_at_us > $after', 'ingested_at_us <= $upto');
    if (q.exclude.length) {
      conds.push('NOT list_contains($exclude, log_id)');
      params.exclude = listValue(q.exclude);
    }
    const sql = `SELECT ${COLUMNS} FROM logs WHERE ${conds.join(' AND ')} ORDER BY ingested_at_us, ts_us, log_id LIMIT $limit`;
    return this.db.read(async (c) => (await rows(c, sql, params)).map(logRow));
  }
}
