/**
 * The retention sweep on ClickHouse (domains/telemetry-retention/store.ts `TelemetryExpiry`, docs/retention.md,
 * docs/scale-out.md "Retention"): a project's rows of one signal older than a cut-off go with one lightweight
 * DELETE per table (to every shard's local table in cluster mode: `deleteTarget`), each with a fixed time
 * bound, so the statement is deterministic (replicas apply the same rows) and touches only the partitions
 * (months) before the cut-off. A table with nothing to delete gets no statement: an idle hour writes nothing.
 *
 * - metrics: `metric_points`, `metric_histograms` stamped before it;
 * - spans: `spans` that started before it, `span_events` that happened before it, and the summary rows of
 *   traces and runs that ended before it (`end_us`; a trace's versions only ever grow its end, so a trace
 *   still going on at the cut-off keeps its newest row). Rows that end a summary (`is_deleted`: a deleted
 *   trace) are kept, so a deleted trace stays deleted. A trace across the cut-off (it started before it and
 *   ended after) lost its older spans: its summary rows are deleted (by trace id, deterministic too) and
 *   written again from the spans it keeps (`refreshChSummaries`), so summaries follow their spans; the new
 *   rows' version counts fewer copies, which is why the old rows are deleted rather than outvoted;
 * - logs: `logs` stamped before it.
 *
 * Not a table TTL: the windows are per project and can change (docs/scale-out.md says why).
 */
import { cutoffMs, type RetainedSignal } from '../../../domains/telemetry-retention/model.js';
import type { ExpiryCounts, TelemetryExpiry } from '../../../domains/telemetry-retention/store.js';
import type { ChTelemetryDb } from './db.js';
import { chNum } from './sql.js';
import { refreshChSummaries } from './summaries.js';

/** Trace ids per statement (each id is 32 characters: the parameter stays far below the HTTP limits). */
const TRACES_PER_STATEMENT = 2_000;

interface Target {
  table: string;
  /** The condition on the table's own time (and more), with `{p:String}` the project and `{before:Int64}` the cut-off. */
  where: string;
  /** How the rows are counted (default: every row). */
  count?: string;
}

const TARGETS: Record<RetainedSignal, Target[]> = {
  SIGNAL_METRICS: [
    { table: 'metric_points', where: 'ts < {before:Int64}' },
    { table: 'metric_histograms', where: 'ts < {before:Int64}' },
  ],
  SIGNAL_SPANS: [
    { table: 'spans', where: 'start_us < {before:Int64}' },
    { table: 'span_events', where: 'ts_us < {before:Int64}' },
    { table: 'trace_summaries', where: 'end_us < {before:Int64} AND is_deleted = 0', count: 'uniqExact(trace_id)' },
    { table: 'run_summaries', where: 'end_us < {before:Int64} AND is_deleted = 0', count: 'uniqExact(trace_id)' },
  ],
  SIGNAL_LOGS: [{ table: 'logs', where: 'ts_us < {before:Int64}' }],
};

/** The names the counts are answered under (the DuckDB sweep's names). */
const COUNT_NAME: Record<string, string> = { trace_summaries: 'traces', run_summaries: 'runs' };

export class ChExpiry implements TelemetryExpiry {
  constructor(private readonly db: ChTelemetryDb) {}

  async expire(projectId: string, signal: RetainedSignal, beforeUs: number, abort?: AbortSignal): Promise<ExpiryCounts> {
    const before = signal === 'SIGNAL_METRICS' ? cutoffMs(beforeUs) : beforeUs;
    const out: ExpiryCounts = {};
    // Spans first, their summaries after: a summary goes only with (or after) its spans.
    for (const t of TARGETS[signal]) {
      if (abort?.aborted) return out;
      const p = { p: projectId, before };
      const where = `project_id = {p:String} AND ${t.where}`;
      const [r] = await this.db.client.query(`SELECT ${t.count ?? 'count()'} AS n FROM ${t.table} WHERE ${where}`, p);
      const n = chNum(r?.n);
      out[COUNT_NAME[t.table] ?? t.table] = n;
      if (n > 0) await this.db.client.command(`DELETE FROM ${this.db.deleteTarget(t.table)} WHERE ${where}`, p);
    }
    if (signal === 'SIGNAL_SPANS' && !abort?.aborted) out.traces_rebuilt = await this.rebuildAcross(projectId, beforeUs, abort);
    return out;
  }

  /** The summaries of the traces across the cut-off, made again from the spans they keep; returns how many. */
  private async rebuildAcross(projectId: string, beforeUs: number, abort?: AbortSignal): Promise<number> {
    const rows = await this.db.client.query<{ trace_id: string }>(
      'SELECT trace_id FROM trace_summaries FINAL WHERE project_id = {p:String} AND start_us < {before:Int64} ORDER BY trace_id',
      { p: projectId, before: beforeUs },
    );
    const ids = rows.map((r) => String(r.trace_id));
    for (let off = 0; off < ids.length && !abort?.aborted; off += TRACES_PER_STATEMENT) {
      const part = ids.slice(off, off + TRACES_PER_STATEMENT);
      const p = { p: projectId, t: part };
      // Every version, ended ones too (a run ended when its root moved may be a run again): none is a deleted
      // trace's (FINAL left those out above), and the rows are written again just below.
      for (const table of ['trace_summaries', 'run_summaries'])
        await this.db.client.command(`DELETE FROM ${this.db.deleteTarget(table)} WHERE project_id = {p:String} AND trace_id IN {t:Array(String)}`, p);
      await refreshChSummaries(this.db, new Map([[projectId, new Set(part)]]));
    }
    return ids.length;
  }
}
