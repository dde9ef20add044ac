/**
 * The traces port on ClickHouse (port: domains/traces/store.ts; the embedded reference: duckdb/traces-query.ts).
 * The list reads the trace summaries (summaries.ts), newest first; one trace's spans and events are one range
 * of their tables' ordering key. Of the copies of a span (retried exports) the first ingested is the one read.
 */
import type { ServiceRow, ServicesQuery, SpanConditions, SpanEventRow, SpanRow, TraceSearch, TraceSize, TraceSummaryRow, TracesStore } from '../../../domains/traces/store.js';
import { traceGate } from '../../../lib/one-at-a-time.js';
import type { QueryParams } from './client.js';
import type { ChTelemetryDb } from './db.js';
import { chAttrConditions, chNum, chStr, NOT_TOMBSTONED } from './sql.js';
import { endChSummaries } from './summaries.js';

function spanConditions(q: SpanConditions, params: QueryParams): string[] {
  const conds: string[] = [];
  if (q.serviceNames?.length) {
    conds.push('has({services:Array(String)}, service_name)');
    params.services = q.serviceNames;
  }
  if (q.name !== undefined) {
    conds.push('name = {name:String}');
    params.name = q.name;
  }
  if (q.status !== undefined) {
    conds.push('status_code = {status:String}');
    params.status = q.status;
  }
  conds.push(...chAttrConditions(q.attrs, params, 'a'));
  return conds;
}

export class ChTracesQuery implements TracesStore {
  constructor(private readonly db: ChTelemetryDb) {}

  /** With span conditions, a span of the trace must match them among the spans that started at or after the window's start. */
  async search(q: TraceSearch): Promise<TraceSummaryRow[]> {
    const params: QueryParams = { project: q.projectId, lo: q.fromUs, hi: q.toUs, limit: q.limit };
    const where = ['project_id = {project:String}', 'start_us BETWEEN {lo:Int64} AND {hi:Int64}'];
    const conds = spanConditions(q, params);
    if (conds.length) where.push(`trace_id IN (SELECT trace_id FROM spans WHERE project_id = {project:String} AND start_us >= {lo:Int64} AND ${conds.join(' AND ')})`);
    if (q.minDurationUs !== undefined) {
      where.push('end_us - start_us >= {mind:Int64}');
      params.mind = Math.ceil(q.minDurationUs);
    }
    if (q.maxDurationUs !== undefined) {
      where.push('end_us - start_us <= {maxd:Int64}');
      params.maxd = Math.floor(q.maxDurationUs);
    }
    if (q.after) {
      where.push('(start_us, trace_id) < ({cs:Int64}, {ct:String})');
      params.cs = q.after.startUs;
      params.ct = q.after.traceId;
    }
    const rows = await this.db.client.query(
      `SELECT trace_id, start_us, end_us, span_count, error_count, services, root_span_id, root_name, root_service, root_missing
       FROM trace_summaries FINAL WHERE ${where.join(' AND ')}
       ORDER BY start_us DESC, trace_id DESC
       LIMIT {limit:UInt32}${q.attrs.length ? ' SETTINGS allow_simdjson = 0' : ''}`,
      params,
    );
    return rows.map((r) => ({
      traceId: String(r.trace_id),
      startUs: chNum(r.start_us),
      endUs: chNum(r.end_us),
      spanCount: chNum(r.span_count),
      errorCount: chNum(r.error_count),
      services: (r.services as string[] | null) ?? [],
      rootSpanId: String(r.root_span_id),
      rootName: String(r.root_name),
      rootService: chStr(r.root_service),
      rootMissing: r.root_missing === true,
    }));
  }

  async size(projectId: string, traceId: string): Promise<TraceSize> {
    const p = { project: projectId, trace: traceId };
    const [summary] = await this.db.client.query('SELECT span_count, end_us FROM trace_summaries FINAL WHERE project_id = {project:String} AND trace_id = {trace:String}', p);
    if (!summary) return { spans: 0, events: 0, endUs: 0 };
    const [events] = await this.db.client.query(
      'SELECT count() AS n FROM (SELECT DISTINCT span_id, event_index FROM span_events WHERE project_id = {project:String} AND trace_id = {trace:String})',
      p,
    );
    return { spans: chNum(summary.span_count), events: chNum(events?.n), endUs: chNum(summary.end_us) };
  }

  async spans(projectId: string, traceId: string): Promise<SpanRow[]> {
    const rows = await this.db.client.query(
      `SELECT span_id, parent_span_id, name, kind, start_us, end_us, status_code, status_message, service_name,
              environment, scope_name, attributes, resource_attributes
       FROM (
         SELECT * FROM spans WHERE project_id = {project:String} AND trace_id = {trace:String} AND ${NOT_TOMBSTONED('project')}
         ORDER BY span_id, ingested_at_us, start_us LIMIT 1 BY span_id)
       ORDER BY start_us, span_id`,
      { project: projectId, trace: traceId },
    );
    return rows.map((r) => ({
      spanId: String(r.span_id),
      parentSpanId: r.parent_span_id === null || r.parent_span_id === '' ? null : String(r.parent_span_id),
      name: String(r.name),
      kind: String(r.kind),
      startUs: chNum(r.start_us),
      endUs: chNum(r.end_us),
      statusCode: String(r.status_code),
      statusMessage: chStr(r.status_message),
      serviceName: chStr(r.service_name),
      environment: chStr(r.environment),
      scopeName: chStr(r.scope_name),
      attributes: String(r.attributes),
      resourceAttributes: String(r.resource_attributes),
    }));
  }

  async events(projectId: string, traceId: string): Promise<SpanEventRow[]> {
    const rows = await this.db.client.query(
      `SELECT span_id, event_index, ts_us, name, attributes
       FROM span_events WHERE project_id = {project:String} AND trace_id = {trace:String} AND ${NOT_TOMBSTONED('project')}
       ORDER BY span_id, event_index, ts_us LIMIT 1 BY span_id, event_index`,
      { project: projectId, trace: traceId },
    );
    return rows.map((r) => ({ spanId: String(r.span_id), index: chNum(r.event_index), tsUs: chNum(r.ts_us), name: String(r.name), attributes: String(r.attributes) }));
  }

  /**
   * The tombstone first (ingestion on any node leaves the trace's spans out from then on, and every read
   * leaves out a copy that slipped in), then the rows (lightweight deletes), then the summaries end.
   */
  deleteTrace(projectId: string, traceId: string, atUs: number): Promise<{ spans: number; events: number }> {
    return traceGate(this.db).run(() => this.deleteNow(projectId, traceId, atUs));
  }

  private async deleteNow(projectId: string, traceId: string, atUs: number): Promise<{ spans: number; events: number }> {
    const p = { project: projectId, trace: traceId };
    const where = 'WHERE project_id = {project:String} AND trace_id = {trace:String}';
    const [[s], [e]] = await Promise.all([this.db.client.query(`SELECT count() AS n FROM spans ${where}`, p), this.db.client.query(`SELECT count() AS n FROM span_events ${where}`, p)]);
    const removed = { spans: chNum(s?.n), events: chNum(e?.n) };
    if (removed.spans + removed.events === 0) return removed;
    await this.db.client.insert('trace_tombstones', [{ project_id: projectId, trace_id: traceId, deleted_at_us: atUs }]);
    await this.db.client.command(`DELETE FROM ${this.db.deleteTarget('span_events')} ${where}`, p);
    await this.db.client.command(`DELETE FROM ${this.db.deleteTarget('spans')} ${where}`, p);
    await endChSummaries(this.db, projectId, [traceId]);
    return removed;
  }

  async services(q: ServicesQuery): Promise<{ rows: ServiceRow[]; total: number }> {
    // Each table from its own lower bound (retention may leave out more of one signal than of the other).
    const slo = Math.max(q.fromUs, q.notBeforeUs?.spans ?? q.fromUs);
    const llo = Math.max(q.fromUs, q.notBeforeUs?.logs ?? q.fromUs);
    const params: QueryParams = { project: q.projectId, slo, llo, hi: q.toUs, limit: q.limit };
    const parts: string[] = [];
    if (q.spans)
      parts.push(`SELECT service_name AS name, count() AS spans, countIf(status_code = 'error') AS errors, toUInt64(0) AS logs, min(start_us) AS first, max(start_us) AS last
         FROM spans WHERE project_id = {project:String} AND start_us BETWEEN {slo:Int64} AND {hi:Int64} AND service_name IS NOT NULL GROUP BY service_name`);
    if (q.logs)
      parts.push(`SELECT service_name AS name, toUInt64(0) AS spans, toUInt64(0) AS errors, count() AS logs, min(ts_us) AS first, max(ts_us) AS last
         FROM logs WHERE project_id = {project:String} AND ts_us BETWEEN {llo:Int64} AND {hi:Int64} AND service_name IS NOT NULL GROUP BY service_name`);
    if (parts.length === 0) return { rows: [], total: 0 };
    const rows = await this.db.client.query(
      `SELECT name, sum(spans) AS spans, sum(errors) AS errors, sum(logs) AS logs, min(first) AS first, max(last) AS last, count() OVER () AS total
       FROM (${parts.join(' UNION ALL ')}) GROUP BY name ORDER BY name LIMIT {limit:UInt32}`,
      params,
    );
    return {
      rows: rows.map((x) => ({
        name: String(x.name),
        spanCount: chNum(x.spans),
        errorSpanCount: chNum(x.errors),
        logCount: chNum(x.logs),
        firstSeenUs: chNum(x.first),
        lastSeenUs: chNum(x.last),
      })),
      total: rows.length ? chNum(rows[0].total) : 0,
    };
  }
}
