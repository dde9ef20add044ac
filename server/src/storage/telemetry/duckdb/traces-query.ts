/**
 * DuckDB adapter of the traces store port (domains/traces/store.ts): trace search, the span tree read,
 * the trace delete and the services list. Also the small SQL helpers the logs adapter shares. Every user
 * value is a bound parameter; attribute keys reach `json_extract_string` as bound JSON paths built from
 * keys that passed the key pattern.
 */
import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import type { AttrFilter } from '../../../domains/traces/query-rules.js';
import type {
  ServiceRow,
  ServicesQuery,
  SpanConditions,
  SpanEventRow,
  SpanRow,
  TraceSearch,
  TracesStore,
  TraceSize,
  TraceSummaryRow,
} from '../../../domains/traces/store.js';
import type { TelemetryDb } from './open.js';
import { rows, exec, type Params } from './statements.js';
import { traceDeleteGate } from './spans-writer.js';
import { summaryUpkeep } from './summaries-writer.js';
import { byTrace, EVENT_ROWS, SPAN_ROWS, traceRows } from './agent-runs-query.js';

const SAFE_KEY = /^[A-Za-z_][A-Za-z0-9_.-]{0,127}$/;

/** The JSON path of one attribute key. Keys are validated upstream; this refuses anything that could escape the quotes. */
export function attrPath(key: string): string {
  if (!SAFE_KEY.test(key)) throw new Error('attribute key is not safe for a JSON path');
  return `$."${key}"`;
}

export const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v as bigint | number));
export const str = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

const isConflict = (e: unknown) => e instanceof Error && /conflict/i.test(e.message);

/** Runs `fn` in a transaction on `c`, retrying a write-write conflict twice. */
export async function transaction<T>(c: DuckDBConnection, fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    await c.run('BEGIN TRANSACTION');
    try {
      const out = await fn(c);
      await c.run('COMMIT');
      return out;
    } catch (e) {
      await c.run('ROLLBACK').catch(() => undefined);
      if (attempt < 3 && isConflict(e)) continue;
      throw e;
    }
  }
}

/** Runs `fn` in a transaction on a reader connection, retrying a write-write conflict twice. */
export function inTransaction<T>(db: TelemetryDb, fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
  return db.read((c) => transaction(c, fn));
}

/**
 * SQL of attribute conditions on a row with `attributes` and `resource_attributes` columns (alias `t`):
 * the item's own attribute, else its resource attribute, equals one of the values.
 */
export function attrConditions(filters: AttrFilter[], params: Params, prefix: string, alias = ''): string[] {
  const a = alias ? `${alias}.` : '';
  return filters.map((f, i) => {
    params[`${prefix}${i}k`] = attrPath(f.key);
    params[`${prefix}${i}v`] = listValue(f.values);
    return `list_contains($${prefix}${i}v, coalesce(json_extract_string(${a}attributes, $${prefix}${i}k), json_extract_string(${a}resource_attributes, $${prefix}${i}k)))`;
  });
}

function spanConditions(q: SpanConditions, params: Params): string[] {
  const conds: string[] = [];
  if (q.serviceNames?.length) {
    conds.push('list_contains($services, service_name)');
    params.services = listValue(q.serviceNames);
  }
  if (q.name !== undefined) {
    conds.push('name = $name');
    params.name = q.name;
  }
  if (q.status !== undefined) {
    conds.push('status_code = $status');
    params.status = q.status;
  }
  conds.push(...attrConditions(q.attrs, params, 'a'));
  return conds;
}

export class DuckDbTracesQuery implements TracesStore {
  constructor(private readonly db: TelemetryDb) {}

  /**
   * From the trace summaries (summaries-writer.ts): the traces that started in the window, newest first. With
   * span conditions, a span of the trace must match them: those spans are looked for among the spans that
   * started at or after the window's start (every span of a trace starts at or after the trace does).
   */
  search(q: TraceSearch): Promise<TraceSummaryRow[]> {
    const params: Params = { project: q.projectId, lo: BigInt(q.fromUs), hi: BigInt(q.toUs), limit: BigInt(q.limit) };
    const where = ['project_id = $project', 'start_us BETWEEN $lo AND $hi'];
    const conds = spanConditions(q, params);
    if (conds.length) where.push(`trace_id IN (SELECT trace_id FROM spans WHERE project_id = $project AND start_us >= $lo AND ${conds.join(' AND ')})`);
    if (q.minDurationUs !== undefined) {
      where.push('end_us - start_us >= $mind');
      params.mind = BigInt(Math.ceil(q.minDurationUs));
    }
    if (q.maxDurationUs !== undefined) {
      where.push('end_us - start_us <= $maxd');
      params.maxd = BigInt(Math.floor(q.maxDurationUs));
    }
    if (q.after) {
      where.push('(start_us, trace_id) < ($cs, $ct)');
      params.cs = BigInt(q.after.startUs);
      params.ct = q.after.traceId;
    }
    const sql = `
      SELECT trace_id, start_us, end_us, span_count, error_count, services, root_span_id, root_name, root_service, root_missing
      FROM trace_summaries WHERE ${where.join(' AND ')}
      ORDER BY start_us DESC, trace_id DESC
      LIMIT $limit`;
    return this.db.read(async (c) =>
      (await rows(c, sql, params)).map((r) => ({
        traceId: r[0] as string,
        startUs: num(r[1]),
        endUs: num(r[2]),
        spanCount: num(r[3]),
        errorCount: num(r[4]),
        services: (r[5] as string[] | null) ?? [],
        rootSpanId: r[6] as string,
        rootName: r[7] as string,
        rootService: str(r[8]),
        rootMissing: Boolean(r[9]),
      })),
    );
  }

  size(projectId: string, traceId: string): Promise<TraceSize> {
    return this.db.read(async (c) => {
      const summary = await byTrace(c, 'trace_summaries', 'span_count, end_us', projectId, traceId);
      if (!summary) return { spans: 0, events: 0, endUs: 0 };
      const events = await traceRows(c, 'span_events', 'span_id, event_index, ts_us', projectId, traceId, EVENT_ROWS);
      return { spans: num(summary.span_count), events: events.length, endUs: num(summary.end_us) };
    });
  }

  /** Through the index on the trace id (agent-runs-query.ts `traceRows`), each span once: its first ingested copy. */
  async spans(projectId: string, traceId: string): Promise<SpanRow[]> {
    const columns = 'span_id, parent_span_id, name, kind, start_us, end_us, status_code, status_message, service_name, environment, scope_name, attributes, resource_attributes, ingested_at_us';
    const rows = await this.db.read((c) => traceRows(c, 'spans', columns, projectId, traceId, SPAN_ROWS));
    return rows.map((r) => ({
      spanId: r.span_id as string,
      parentSpanId: r.parent_span_id === null || r.parent_span_id === '' ? null : (r.parent_span_id as string),
      name: r.name as string,
      kind: r.kind as string,
      startUs: num(r.start_us),
      endUs: num(r.end_us),
      statusCode: r.status_code as string,
      statusMessage: str(r.status_message),
      serviceName: str(r.service_name),
      environment: str(r.environment),
      scopeName: str(r.scope_name),
      attributes: r.attributes as string,
      resourceAttributes: r.resource_attributes as string,
    }));
  }

  /** Through the index on the trace id, each event once (its earliest copy), by span and position. */
  async events(projectId: string, traceId: string): Promise<SpanEventRow[]> {
    const rows = await this.db.read((c) => traceRows(c, 'span_events', 'span_id, event_index, ts_us, name, attributes', projectId, traceId, EVENT_ROWS));
    return rows.map((r) => ({ spanId: r.span_id as string, index: num(r.event_index), tsUs: num(r.ts_us), name: r.name as string, attributes: r.attributes as string }));
  }

  /**
   * Durable (spans-writer.ts): under the store's trace-delete gate, so no ingest transaction is open
   * meanwhile; every ingest transaction after it sees the tombstone and leaves the trace's spans out.
   * The reader connection is taken before the gate, so the gate (which ingestion waits for) is never
   * held while waiting for a connection.
   */
  deleteTrace(projectId: string, traceId: string, atUs: number): Promise<{ spans: number; events: number }> {
    const p = { project: projectId, trace: traceId, at: BigInt(atUs) };
    const gate = traceDeleteGate(this.db);
    return this.db.read((conn) =>
      gate.run(async () => {
        const { after, ...removed } = await transaction(conn, async (c) => {
          const events = await exec(c, 'DELETE FROM span_events WHERE project_id = $project AND trace_id = $trace', p);
          const spans = await exec(c, 'DELETE FROM spans WHERE project_id = $project AND trace_id = $trace', p);
          if (spans + events > 0)
            await exec(c, 'INSERT INTO trace_tombstones (project_id, trace_id, deleted_at_us) VALUES ($project, $trace, $at) ON CONFLICT DO NOTHING', p);
          // The trace leaves every list with its spans (its run, and its session when it was the last run).
          const after = await summaryUpkeep(this.db).remove(c, projectId, [traceId]);
          return { spans, events, after };
        });
        after();
        if (removed.spans + removed.events > 0) gate.mayHaveTombstones = true;
        return removed;
      }),
    );
  }

  services(q: ServicesQuery): Promise<{ rows: ServiceRow[]; total: number }> {
    // Each table from its own lower bound (retention may leave out more of one signal than of the other).
    const slo = Math.max(q.fromUs, q.notBeforeUs?.spans ?? q.fromUs);
    const llo = Math.max(q.fromUs, q.notBeforeUs?.logs ?? q.fromUs);
    const params: Params = { project: q.projectId, slo: BigInt(slo), llo: BigInt(llo), hi: BigInt(q.toUs), limit: BigInt(q.limit) };
    const spans = q.spans
      ? `SELECT service_name AS name, count(*) AS spans, count(*) FILTER (WHERE status_code = 'error') AS errors, 0 AS logs,
                min(start_us) AS first, max(start_us) AS last
         FROM spans WHERE project_id = $project AND start_us BETWEEN $slo AND $hi AND service_name IS NOT NULL GROUP BY service_name`
      : undefined;
    const logs = q.logs
      ? `SELECT service_name AS name, 0 AS spans, 0 AS errors, count(*) AS logs, min(ts_us) AS first, max(ts_us) AS last
         FROM logs WHERE project_id = $project AND ts_us BETWEEN $llo AND $hi AND service_name IS NOT NULL GROUP BY service_name`
      : undefined;
    const parts = [spans, logs].filter((x) => x !== undefined);
    if (parts.length === 0) return Promise.resolve({ rows: [], total: 0 });
    const sql = `
      WITH u AS (${parts.join(' UNION ALL ')}),
      g AS (SELECT name, sum(spans) AS spans, sum(errors) AS errors, sum(logs) AS logs, min(first) AS first, max(last) AS last FROM u GROUP BY name)
      SELECT name, spans, errors, logs, first, last, count(*) OVER () AS total FROM g ORDER BY name LIMIT $limit`;
    return this.db.read(async (c) => {
      const r = await rows(c, sql, params);
      return {
        rows: r.map((x) => ({
          name: x[0] as string,
          spanCount: num(x[1]),
          errorSpanCount: num(x[2]),
          logCount: num(x[3]),
          firstSeenUs: num(x[4]),
          lastSeenUs: num(x[5]),
        })),
        total: r.length ? num(r[0][6]) : 0,
      };
    });
  }
}
