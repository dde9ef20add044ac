/**
 * A telemetry file written before summaries existed (issue 21) gets them once, at open, in one transaction:
 * every stored span is read once, in (project, trace) order, folded into its trace's state and summarized
 * (domains/agent-runs/summary.ts), then the sessions are computed from the runs. Marked done in
 * `telemetry_upgrades`, so it never runs twice; a file created new is marked at once.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { TraceState, summarizeRun, summarizeTrace, type RunSummary, type TraceSummary } from '../../../domains/agent-runs/summary.js';
import { appendChunks, rowChunks, type TableLayout } from './rows-writer.js';
import { DIGEST_COLUMNS, digestsOf } from './span-digests.js';
import { runColumnGetters, traceColumnGetters } from './summaries-writer.js';
import { recomputeAllSessions } from './session-summaries.js';

const UPGRADE = 'summaries_v1';
/** Summary rows appended at a time. */
const FLUSH_ROWS = 20_000;

/**
 * `c` writes (in one transaction); `source` is another connection of the same instance that streams the spans
 * (a statement run on the streaming connection would end its stream).
 */
export async function backfillSummaries(c: DuckDBConnection, source: DuckDBConnection, log: (line: string) => void = () => undefined): Promise<boolean> {
  const done = await c.runAndReadAll(`SELECT count(*) FROM telemetry_upgrades WHERE name = '${UPGRADE}'`);
  if (Number(done.getRows()[0][0]) > 0) return false;
  const total = Number((await c.runAndReadAll('SELECT count(*) FROM spans')).getRows()[0][0]);
  await c.run('BEGIN TRANSACTION');
  try {
    if (total > 0) {
      log(`summaries: building run, trace and session summaries from ${total} stored spans (once, on upgrade)`);
      const layout = async (t: string): Promise<TableLayout> => {
        const r = await c.run(`SELECT * FROM ${t} LIMIT 0`);
        return { names: r.columnNames(), types: r.columnTypes() };
      };
      const traceLayout = await layout('trace_summaries');
      const runLayout = await layout('run_summaries');
      for (const t of ['trace_summaries', 'run_summaries', 'session_summaries']) await c.run(`DELETE FROM ${t}`);
      let project = '';
      let trace = '';
      let state = new TraceState();
      let traces: TraceSummary[] = [];
      let runs: RunSummary[] = [];
      let read = 0;
      let nextReport = 100_000;
      const flush = async () => {
        if (traces.length) await appendChunks(c, 'trace_summaries', rowChunks(traceLayout, traceColumnGetters(project), traces));
        if (runs.length) await appendChunks(c, 'run_summaries', rowChunks(runLayout, runColumnGetters(project), runs));
        traces = [];
        runs = [];
      };
      const close = () => {
        if (trace === '') return;
        const t = summarizeTrace(trace, state);
        if (t) traces.push(t);
        const r = summarizeRun(trace, state);
        if (r) runs.push(r);
      };
      const result = await source.stream(`SELECT project_id, ${DIGEST_COLUMNS} FROM spans ORDER BY project_id, trace_id`);
      for (;;) {
        const chunk = await result.fetchChunk();
        if (!chunk || chunk.rowCount === 0) break;
        const columns = chunk.getColumns() as unknown[][];
        const projects = columns[0] as string[];
        const digests = digestsOf(columns.slice(1), chunk.rowCount);
        for (let i = 0; i < digests.length; i++) {
          const d = digests[i];
          if (projects[i] !== project || d.traceId !== trace) {
            close();
            if (projects[i] !== project || traces.length + runs.length >= FLUSH_ROWS) await flush();
            project = projects[i];
            trace = d.traceId;
            state = new TraceState();
          }
          state.add(d);
        }
        read += chunk.rowCount;
        if (read >= nextReport) {
          log(`summaries: ${read} of ${total} spans read`);
          nextReport += 100_000;
        }
      }
      close();
      await flush();
      await recomputeAllSessions(c);
    }
    await c.run(`INSERT INTO telemetry_upgrades (name, done_at_us) VALUES ('${UPGRADE}', ${Date.now() * 1000})`);
    await c.run('COMMIT');
  } catch (e) {
    await c.run('ROLLBACK').catch(() => undefined);
    throw e;
  }
  if (total > 0) log('summaries: done');
  return total > 0;
}
