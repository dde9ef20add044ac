/**
 * The retention sweep on DuckDB (domains/telemetry-retention/store.ts `TelemetryExpiry`, docs/retention.md):
 * a project's rows of one signal older than a cut-off are deleted in batches, each batch its own short
 * transaction, so ingest never waits long:
 *
 * - metric points, histogram samples and log records: at most BATCH_ROWS rows per transaction, one batch at a
 *   time with the store's other deletes (deleteQueue). Ingest appends meanwhile (appends never conflict).
 * - spans: first the traces whose every span ended before the cut-off, BATCH_TRACES per transaction, their
 *   spans, span events and summaries together (the summary upkeep's `remove`, which also recomputes their
 *   sessions), under the trace-delete gate as a trace delete runs, so no span commit interleaves and the
 *   summaries' memory stays what is committed. Then what is left older than the cut-off (the early spans and
 *   events of a trace still going on at the cut-off) row by row, under the gate too, and the summaries of those
 *   traces are made again from the spans they keep (the upkeep's `rebuild`): summaries follow their spans.
 *
 * The gate is released between batches: a span commit waits for one batch at most.
 */
import { listValue, type DuckDBConnection } from '@duckdb/node-api';
import { cutoffMs, type RetainedSignal } from '../../../domains/telemetry-retention/model.js';
import type { ExpiryCounts, TelemetryExpiry } from '../../../domains/telemetry-retention/store.js';
import type { TelemetryDb } from './open.js';
import { traceDeleteGate } from './spans-writer.js';
import { deleteQueue, exec, rows, type OneAtATime } from './statements.js';
import { summaryUpkeep } from './summaries-writer.js';
import { num, transaction } from './traces-query.js';

export const BATCH_ROWS = 50_000;
export const BATCH_TRACES = 2_000;

export class DuckDbExpiry implements TelemetryExpiry {
  constructor(
    private readonly db: TelemetryDb,
    private readonly batchRows = BATCH_ROWS,
    private readonly batchTraces = BATCH_TRACES,
  ) {}

  async expire(projectId: string, signal: RetainedSignal, beforeUs: number, abort?: AbortSignal): Promise<ExpiryCounts> {
    const queue = deleteQueue(this.db);
    const gate = traceDeleteGate(this.db);
    switch (signal) {
      case 'SIGNAL_METRICS': {
        const ms = cutoffMs(beforeUs);
        return {
          metric_points: await this.rowsBefore(queue, 'metric_points', 'ts', projectId, ms, abort),
          metric_histograms: await this.rowsBefore(queue, 'metric_histograms', 'ts', projectId, ms, abort),
        };
      }
      case 'SIGNAL_LOGS':
        return { logs: await this.rowsBefore(queue, 'logs', 'ts_us', projectId, beforeUs, abort) };
      case 'SIGNAL_SPANS': {
        const whole = await this.endedTraces(projectId, beforeUs, abort);
        const spans = await this.rowsBefore(gate, 'spans', 'start_us', projectId, beforeUs, abort);
        const events = await this.rowsBefore(gate, 'span_events', 'ts_us', projectId, beforeUs, abort);
        const across = await this.rebuildAcross(projectId, beforeUs, abort);
        return { traces: whole.traces, spans: whole.spans + spans, span_events: whole.events + events, traces_rebuilt: across };
      }
    }
  }

  /** Deletes the project's rows of `table` whose `column` is before `before`, a batch per transaction; returns how many. */
  private async rowsBefore(queue: OneAtATime, table: string, column: string, projectId: string, before: number, abort?: AbortSignal): Promise<number> {
    const p = { project: projectId, before: BigInt(before), n: BigInt(this.batchRows) };
    const sql = `DELETE FROM ${table} WHERE rowid IN (SELECT rowid FROM ${table} WHERE project_id = $project AND ${column} < $before LIMIT $n)`;
    let total = 0;
    while (!abort?.aborted) {
      // The connection is taken before the queue (or gate), so neither is held while waiting for one.
      const n = await this.db.read((conn) => queue.run(() => transaction(conn, (c) => exec(c, sql, p))));
      total += n;
      if (n < this.batchRows) break;
    }
    return total;
  }

  /**
   * Removes, a batch at a time, the traces whose every span ended before the cut-off: their spans (read only
   * where their copies were ingested), span events and summaries, in one transaction per batch.
   */
  private async endedTraces(projectId: string, beforeUs: number, abort?: AbortSignal): Promise<{ traces: number; spans: number; events: number }> {
    const gate = traceDeleteGate(this.db);
    const out = { traces: 0, spans: 0, events: 0 };
    const pick = `SELECT trace_id, first_ingested_us, last_ingested_us FROM trace_summaries
      WHERE project_id = $project AND end_us < $before ORDER BY first_ingested_us LIMIT $n`;
    while (!abort?.aborted) {
      const batch = await this.db.read((conn) =>
        gate.run(async () => {
          const { after, ...removed } = await transaction(conn, async (c: DuckDBConnection) => {
            const picked = await rows(c, pick, { project: projectId, before: BigInt(beforeUs), n: BigInt(this.batchTraces) });
            if (picked.length === 0) return { traces: 0, spans: 0, events: 0, after: () => undefined };
            const ids = picked.map((r) => r[0] as string);
            const lo = Math.min(...picked.map((r) => num(r[1])));
            const hi = Math.max(...picked.map((r) => num(r[2])));
            const p = { project: projectId, ids: listValue(ids), lo: BigInt(lo), hi: BigInt(hi) };
            const events = await exec(c, 'DELETE FROM span_events WHERE project_id = $project AND trace_id IN (SELECT unnest($ids))', p);
            const spans = await exec(c, 'DELETE FROM spans WHERE project_id = $project AND ingested_at_us BETWEEN $lo AND $hi AND trace_id IN (SELECT unnest($ids))', p);
            // The traces leave every list with their spans (their runs, and sessions left without a run).
            const after = await summaryUpkeep(this.db).remove(c, projectId, ids);
            return { traces: ids.length, spans, events, after };
          });
          after();
          return removed;
        }),
      );
      out.traces += batch.traces;
      out.spans += batch.spans;
      out.events += batch.events;
      if (batch.traces < this.batchTraces) break;
    }
    return out;
  }

  /**
   * The traces that started before the cut-off and are still summarized (their last span ended after it: they
   * lost their older spans above) are summarized again from the spans they keep, a batch per transaction under
   * the gate. Returns how many.
   */
  private async rebuildAcross(projectId: string, beforeUs: number, abort?: AbortSignal): Promise<number> {
    const gate = traceDeleteGate(this.db);
    const p = { project: projectId, before: BigInt(beforeUs) };
    const ids = (await this.db.read((c) => rows(c, 'SELECT trace_id FROM trace_summaries WHERE project_id = $project AND start_us < $before ORDER BY trace_id', p))).map(
      (r) => r[0] as string,
    );
    for (let off = 0; off < ids.length && !abort?.aborted; off += this.batchTraces) {
      const part = ids.slice(off, off + this.batchTraces);
      // It appends (summaries): a writer's transaction, never during a checkpoint (open.ts `busy`).
      await this.db.busy(() =>
        this.db.read((conn) =>
          gate.run(async () => {
            const after = await transaction(conn, (c) => summaryUpkeep(this.db).rebuild(c, projectId, part));
            after();
          }),
        ),
      );
    }
    return ids.length;
  }
}
