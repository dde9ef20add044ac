/**
 * Summaries on ClickHouse (docs/scale-out.md "Summaries"): after the spans of a flush are stored, the writer
 * reads every stored copy of each touched trace (one range of the `spans` ordering key), folds them with the
 * same pure rules the embedded engine uses (domains/agent-runs/summary.ts), and inserts the trace's and the
 * run's row into their ReplacingMergeTree tables. Reads take the row of the highest version (FINAL).
 *
 * The version is the number of stored copies the writer read. Copies are only ever added (a trace delete ends
 * the rows with `is_deleted` at the top version), so of two writers summarizing one trace at once, on one node
 * or two, the one whose read came later saw every copy the other saw and more, or the same copies: its row has
 * the higher version, or an equal version and the same answer. No summary is ever replaced by a staler one.
 */
import { TraceState, summarizeRun, summarizeTrace, type RunSummary, type TraceSummary } from '../../../domains/agent-runs/summary.js';
import type { ChTelemetryDb } from './db.js';
import { DIGEST_COLUMNS, digestOfRecord } from '../row-mappers.js';

/** The version of a deleted trace's rows: above any count of copies. */
export const DELETED_VERSION = '9223372036854775807';

export function traceSummaryRow(projectId: string, t: TraceSummary, version: number | string, isDeleted = 0): Record<string, unknown> {
  return {
    project_id: projectId,
    trace_id: t.traceId,
    start_us: t.startUs,
    end_us: t.endUs,
    span_count: t.spanCount,
    error_count: t.errorCount,
    services: t.services,
    root_span_id: t.rootSpanId,
    root_name: t.rootName,
    root_service: t.rootService,
    root_missing: t.rootMissing,
    first_ingested_us: t.firstIngestedUs,
    last_ingested_us: t.lastIngestedUs,
    version: String(version),
    is_deleted: isDeleted,
  };
}

export function runSummaryRow(projectId: string, r: RunSummary, version: number | string, isDeleted = 0): Record<string, unknown> {
  return {
    project_id: projectId,
    trace_id: r.traceId,
    root_span_id: r.rootSpanId,
    agent_name: r.agentName,
    agent_id: r.agentId,
    observation_key: r.observationKey,
    service_name: r.serviceName,
    environment: r.environment,
    session_key: r.sessionKey,
    turn_id: r.turnId,
    status: r.status,
    terminal_reason: r.terminalReason,
    start_us: r.startUs,
    end_us: r.endUs,
    step_count: r.stepCount,
    error_steps: r.errorSteps,
    tool_calls: r.toolCalls,
    model_calls: r.modelCalls,
    safety_outcomes: r.safetyStepsWithOutcome,
    safety_errors: r.safetyErrorSteps,
    usage: r.usageText,
    version: String(version),
    is_deleted: isDeleted,
  };
}

/** Rows that end a trace's or run's summary (the other columns take their defaults: FINAL never returns them). */
const endedTrace = (projectId: string, traceId: string, version: number | string) => ({ project_id: projectId, trace_id: traceId, version: String(version), is_deleted: 1 });
const endedRun = endedTrace;

/** Trace ids per query (each id is 32 characters: the parameter stays far below the HTTP limits). */
const TRACES_PER_READ = 2_000;

/** Re-summarizes these traces of each project from every stored copy of their spans. */
export async function refreshChSummaries(db: ChTelemetryDb, touched: Map<string, Set<string>>): Promise<void> {
  const traceRows: Record<string, unknown>[] = [];
  const runRows: Record<string, unknown>[] = [];
  for (const [projectId, ids] of touched) {
    const all = [...ids];
    for (let off = 0; off < all.length; off += TRACES_PER_READ) {
      const part = all.slice(off, off + TRACES_PER_READ);
      const rows = await db.client.query(`SELECT ${DIGEST_COLUMNS} FROM spans WHERE project_id = {p:String} AND trace_id IN {t:Array(String)}`, { p: projectId, t: part });
      const states = new Map<string, { state: TraceState; copies: number }>();
      for (const r of rows) {
        const d = digestOfRecord(r);
        let e = states.get(d.traceId);
        if (!e) states.set(d.traceId, (e = { state: new TraceState(), copies: 0 }));
        e.state.add(d);
        e.copies++;
      }
      const runless: string[] = [];
      const versions = new Map<string, number>();
      for (const [traceId, { state, copies }] of states) {
        const t = summarizeTrace(traceId, state);
        if (t) traceRows.push(traceSummaryRow(projectId, t, copies));
        const run = summarizeRun(traceId, state);
        if (run) runRows.push(runSummaryRow(projectId, run, copies));
        else {
          runless.push(traceId);
          versions.set(traceId, copies);
        }
      }
      // A trace that no longer has a run (a later span changed its root) loses the run's row.
      if (runless.length > 0) {
        const had = await db.client.query<{ trace_id: string }>('SELECT DISTINCT trace_id FROM run_summaries WHERE project_id = {p:String} AND trace_id IN {t:Array(String)}', { p: projectId, t: runless });
        for (const { trace_id } of had) runRows.push(endedRun(projectId, trace_id, versions.get(trace_id)!));
      }
    }
  }
  await Promise.all([db.client.insert('trace_summaries', traceRows), db.client.insert('run_summaries', runRows)]);
}

/** Ends the summaries of deleted traces (a trace delete, a project delete). */
export async function endChSummaries(db: ChTelemetryDb, projectId: string, traceIds: readonly string[]): Promise<void> {
  await Promise.all([
    db.client.insert('trace_summaries', traceIds.map((t) => endedTrace(projectId, t, DELETED_VERSION))),
    db.client.insert('run_summaries', traceIds.map((t) => endedRun(projectId, t, DELETED_VERSION))),
  ]);
}
