/**
 * Keeps `trace_summaries`, `run_summaries` and `session_summaries` (schema.ts) up to date inside the
 * transaction that stores the spans changing them (spans-writer.ts) or removes them (a trace delete), so a
 * list reads a row per trace, run or session and never scans spans.
 *
 * A summary is a pure function of the trace's spans (domains/agent-runs/summary.ts), so the writer needs a
 * touched trace's earlier spans: it keeps the state of recently written traces still waiting for their root
 * in memory (`remembers`; least recently used out first, bounded by spans), and reads the state of any other stored trace from `spans` in the
 * transaction, only where that trace's copies were ingested (its summary's ingest range: the rows are
 * appended in ingest order, so DuckDB's min/max per row group skips the rest). A Bloom filter of the traces
 * stored tells a new trace (nearly always) without a lookup. Memory changes only after COMMIT, and every
 * upkeep of one store runs under its trace-delete gate (one at a time), so the memory always matches
 * what is committed. Sessions are recomputed from `run_summaries` for the sessions a commit touched.
 */
import { LIST, VARCHAR, listValue, type DuckDBConnection, type DuckDBValue } from '@duckdb/node-api';
import { TraceState, summarizeRun, summarizeTrace, type RunSummary, type SpanDigest, type TraceSummary } from '../../../domains/agent-runs/summary.js';
import { BloomFilter } from '../../../lib/bloom.js';
import type { TelemetryDb } from './open.js';
import { appendChunks, rowChunks, tableLayout, type ColumnGetters, type TableLayout } from './rows-writer.js';
import { SessionUpkeep, recomputeSessions, type RunMove } from './session-summaries.js';
import { DIGEST_COLUMNS, digestsOf } from './span-digests.js';
import { strOrNull } from './agent-runs-sql.js';

/** Spans (as digests) of one project to fold into the summaries. */
export interface ProjectSpans {
  projectId: string;
  spans: (SpanDigest & { traceId: string })[];
}

/** Applied after COMMIT. */
export type AfterCommit = () => void;

interface Entry {
  projectId: string;
  traceId: string;
  state: TraceState;
  /** The session of the trace's run as stored, null when none. */
  sessionKey: string | null;
}

const keyOf = (projectId: string, traceId: string) => `${projectId}\u0000${traceId}`;

export const traceColumnGetters = (projectId: string): ColumnGetters<TraceSummary> => ({
  project_id: () => projectId,
  trace_id: (r) => r.traceId,
  start_us: (r) => r.startUs,
  end_us: (r) => r.endUs,
  span_count: (r) => r.spanCount,
  error_count: (r) => r.errorCount,
  services: (r) => r.services,
  root_span_id: (r) => r.rootSpanId,
  root_name: (r) => r.rootName,
  root_service: (r) => r.rootService,
  root_missing: (r) => r.rootMissing,
  first_ingested_us: (r) => r.firstIngestedUs,
  last_ingested_us: (r) => r.lastIngestedUs,
});

export const runColumnGetters = (projectId: string): ColumnGetters<RunSummary> => ({
  project_id: () => projectId,
  trace_id: (r) => r.traceId,
  root_span_id: (r) => r.rootSpanId,
  agent_name: (r) => r.agentName,
  agent_id: (r) => r.agentId,
  observation_key: (r) => r.observationKey,
  service_name: (r) => r.serviceName,
  environment: (r) => r.environment,
  session_key: (r) => r.sessionKey,
  turn_id: (r) => r.turnId,
  status: (r) => r.status,
  terminal_reason: (r) => r.terminalReason,
  start_us: (r) => r.startUs,
  end_us: (r) => r.endUs,
  step_count: (r) => r.stepCount,
  error_steps: (r) => r.errorSteps,
  tool_calls: (r) => r.toolCalls,
  model_calls: (r) => r.modelCalls,
  safety_outcomes: (r) => r.safetyStepsWithOutcome,
  safety_errors: (r) => r.safetyErrorSteps,
  usage: (r) => r.usageText,
});

async function read(c: DuckDBConnection, sql: string, values: Record<string, DuckDBValue>): Promise<{ columns: unknown[][]; rows: number }> {
  const types = Object.fromEntries(Object.entries(values).map(([k, v]) => [k, typeof v === 'string' ? VARCHAR : typeof v === 'bigint' ? undefined : LIST(VARCHAR)]).filter(([, t]) => t)) as Record<string, typeof VARCHAR>;
  const r = await c.runAndReadAll(sql, values, types);
  return { columns: r.getColumns() as unknown[][], rows: r.currentRowCount };
}

/** Per project: a set of ids. */
class ByProject {
  readonly map = new Map<string, Set<string>>();
  add(projectId: string, id: string | null): void {
    if (id === null) return;
    let set = this.map.get(projectId);
    if (!set) this.map.set(projectId, (set = new Set()));
    set.add(id);
  }
}

export class SummaryUpkeep {
  private readonly cache = new Map<string, Entry>();
  private cachedSpans = 0;
  private known: BloomFilter | null = null;
  private layouts: Promise<{ trace: TableLayout; run: TableLayout }> | null = null;
  readonly sessions = new SessionUpkeep();

  constructor(
    private readonly db: TelemetryDb,
    /** Span digests kept in memory at most (whole traces are dropped, least recently written first). */
    public maxCachedSpans = 50_000,
  ) {}

  /**
   * Folds the spans into the summaries of their traces, in the caller's transaction on `c`, BEFORE the
   * spans themselves are appended (a stored trace's earlier spans are read from `spans`). Returns what to
   * apply to memory after COMMIT.
   */
  async update(c: DuckDBConnection, items: ProjectSpans[]): Promise<AfterCommit> {
    // The spans of each trace, by project then trace id (a key is made per trace, not per span).
    const touched = new Map<string, Map<string, SpanDigest[]>>();
    for (const it of items) {
      let traces = touched.get(it.projectId);
      if (!traces) touched.set(it.projectId, (traces = new Map()));
      for (const d of it.spans) {
        const spans = traces.get(d.traceId);
        if (spans) spans.push(d);
        else traces.set(d.traceId, [d]);
      }
    }
    if (touched.size === 0) return () => undefined;
    const known = await this.knownTraces(c);
    const next = new Map<string, Entry>();
    const stored = new ByProject(); // traces with rows to replace
    const toLoad = new ByProject();
    for (const [projectId, traces] of touched) {
      for (const traceId of traces.keys()) {
        const k = keyOf(projectId, traceId);
        const had = this.cache.get(k);
        if (had) {
          next.set(k, { ...had, state: new TraceState(had.state) });
          stored.add(projectId, traceId);
        } else if (known.has(k)) toLoad.add(projectId, traceId);
        else next.set(k, { projectId, traceId, state: new TraceState(), sessionKey: null });
      }
    }
    for (const [projectId, ids] of toLoad.map) {
      const loaded = await this.load(c, projectId, [...ids]);
      for (const id of ids) {
        const state = loaded.get(id);
        if (state) {
          const sessionKey = summarizeRun(id, state)?.sessionKey ?? null;
          next.set(keyOf(projectId, id), { projectId, traceId: id, state, sessionKey });
          stored.add(projectId, id);
        } else next.set(keyOf(projectId, id), { projectId, traceId: id, state: new TraceState(), sessionKey: null });
      }
    }
    for (const e of next.values()) for (const d of touched.get(e.projectId)!.get(e.traceId)!) e.state.add(d);
    return this.write(c, next, stored, true);
  }

  /**
   * Summarizes these traces again from every span stored (in the caller's transaction on `c`, under the
   * gate): for rows written beside the spans writer (test fixtures) or a repair.
   */
  async rebuild(c: DuckDBConnection, projectId: string, traceIds: string[]): Promise<AfterCommit> {
    const all = await this.load(c, projectId, traceIds, false);
    const next = new Map<string, Entry>();
    const stored = new ByProject();
    for (const id of traceIds) {
      stored.add(projectId, id);
      const state = all.get(id);
      if (state) next.set(keyOf(projectId, id), { projectId, traceId: id, state, sessionKey: null });
    }
    return this.write(c, next, stored, false, traceIds.filter((id) => !all.has(id)).map((id) => keyOf(projectId, id)));
  }

  /**
   * Replaces the rows of `stored` with the summaries of `next` and updates the sessions touched: from the
   * runs' moves when every entry knows the session its run had (`moves`), else recomputed from the runs.
   */
  private async write(c: DuckDBConnection, next: Map<string, Entry>, stored: ByProject, moves: boolean, gone: string[] = []): Promise<AfterCommit> {
    const traces = new Map<string, TraceSummary[]>();
    const runs = new Map<string, RunSummary[]>();
    const runMoves: RunMove[] = [];
    /** Traces kept in memory after the commit: those still waiting for their root (see `remembers`). */
    const open = new Set<string>();
    for (const [k, e] of next) {
      const t = summarizeTrace(e.traceId, e.state);
      if (t) push(traces, e.projectId, t);
      if (remembers(t)) open.add(k);
      const r = summarizeRun(e.traceId, e.state);
      const to = r?.sessionKey ?? null;
      runMoves.push({ projectId: e.projectId, traceId: e.traceId, from: e.sessionKey, to, brief: r && { turnId: r.turnId, startUs: r.startUs, endUs: r.endUs, usage: r.usage } });
      e.sessionKey = to;
      if (r) push(runs, e.projectId, r);
    }
    // Before run_summaries changes: a session not in memory is read from it as it was.
    const sessionsAfter = moves ? await this.sessions.apply(c, runMoves) : () => undefined;
    const old = await this.deleteRows(c, stored);
    const layouts = await this.tableLayouts();
    for (const [projectId, rows] of traces) await appendChunks(c, 'trace_summaries', rowChunks(layouts.trace, traceColumnGetters(projectId), rows));
    for (const [projectId, rows] of runs) await appendChunks(c, 'run_summaries', rowChunks(layouts.run, runColumnGetters(projectId), rows));
    if (!moves) {
      for (const m of runMoves) old.add(m.projectId, m.to);
      await recomputeSessions(c, old);
    }
    return () => {
      sessionsAfter();
      if (!moves) for (const [projectId, keys] of old.map) this.sessions.forget(projectId, keys);
      for (const k of gone) this.drop(k);
      for (const [k, e] of next) {
        this.drop(k);
        if (open.has(k)) {
          this.cache.set(k, e);
          this.cachedSpans += e.state.spans.size;
        }
        if (this.known && !this.known.has(k)) this.known.add(k);
      }
      this.evict();
    };
  }

  /** Removes the summaries of deleted traces (in the delete's transaction); returns what to apply after COMMIT. */
  async remove(c: DuckDBConnection, projectId: string, traceIds: string[]): Promise<AfterCommit> {
    const stored = new ByProject();
    for (const id of traceIds) stored.add(projectId, id);
    const sessions = await this.deleteRows(c, stored);
    await recomputeSessions(c, sessions);
    return () => {
      for (const [p, keys] of sessions.map) this.sessions.forget(p, keys);
      for (const id of traceIds) this.drop(keyOf(projectId, id));
    };
  }

  /** Forgets a deleted project's traces (its rows are deleted with the project's telemetry). */
  forgetProject(projectId: string): void {
    this.sessions.forgetProject(projectId);
    for (const e of [...this.cache.values()]) if (e.projectId === projectId) this.drop(keyOf(e.projectId, e.traceId));
  }

  private drop(k: string): void {
    const had = this.cache.get(k);
    if (!had) return;
    this.cachedSpans -= had.state.spans.size;
    this.cache.delete(k);
  }

  private evict(): void {
    // A Map iterates in insertion order: the least recently written trace first.
    for (const [k, e] of this.cache) {
      if (this.cachedSpans <= this.maxCachedSpans) break;
      this.cachedSpans -= e.state.spans.size;
      this.cache.delete(k);
    }
  }

  /** Deletes the summary rows of these traces; returns the sessions their runs belonged to. */
  private async deleteRows(c: DuckDBConnection, traces: ByProject): Promise<ByProject> {
    const sessions = new ByProject();
    for (const [projectId, ids] of traces.map) {
      const values = { p: projectId, ids: listValue([...ids]) };
      await read(c, 'DELETE FROM trace_summaries WHERE project_id = $p AND trace_id IN (SELECT unnest($ids))', values);
      const r = await read(c, 'DELETE FROM run_summaries WHERE project_id = $p AND trace_id IN (SELECT unnest($ids)) RETURNING session_key', values);
      for (let i = 0; i < r.rows; i++) sessions.add(projectId, strOrNull(r.columns[0][i]));
    }
    return sessions;
  }

  /** The stored states of these traces (those with a summary), read from `spans` where their copies were ingested. */
  private async load(c: DuckDBConnection, projectId: string, traceIds: string[], summarized = true): Promise<Map<string, TraceState>> {
    if (!summarized) return this.statesOf(c, projectId, traceIds, '');
    const ranges = await read(c, 'SELECT min(first_ingested_us), max(last_ingested_us), list(trace_id) FROM trace_summaries WHERE project_id = $p AND trace_id IN (SELECT unnest($ids))', {
      p: projectId,
      ids: listValue(traceIds),
    });
    const found = (ranges.columns[2][0] as { items: string[] } | null)?.items ?? [];
    if (found.length === 0) return new Map();
    return this.statesOf(c, projectId, found, `AND ingested_at_us BETWEEN ${BigInt(ranges.columns[0][0] as bigint)} AND ${BigInt(ranges.columns[1][0] as bigint)}`);
  }

  private async statesOf(c: DuckDBConnection, projectId: string, traceIds: string[], also: string): Promise<Map<string, TraceState>> {
    const out = new Map<string, TraceState>();
    const sql = `SELECT ${DIGEST_COLUMNS} FROM spans WHERE project_id = $p ${also} AND trace_id IN (SELECT unnest($ids))`;
    const r = await read(c, sql, { p: projectId, ids: listValue(traceIds) });
    for (const d of digestsOf(r.columns, r.rows)) {
      let st = out.get(d.traceId);
      if (!st) out.set(d.traceId, (st = new TraceState()));
      st.add(d);
    }
    return out;
  }

  /** The Bloom filter of stored traces, read from `trace_summaries` on first use (and again when it fills up). */
  private async knownTraces(c: DuckDBConnection): Promise<BloomFilter> {
    if (this.known && this.known.count <= this.known.capacity) return this.known;
    const count = Number((await c.runAndReadAll('SELECT count(*) FROM trace_summaries')).getRows()[0][0]);
    const bloom = new BloomFilter(Math.max(1_000_000, count * 2));
    const result = await c.stream('SELECT project_id, trace_id FROM trace_summaries');
    for (;;) {
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const [projects, traces] = chunk.getColumns() as string[][];
      for (let i = 0; i < chunk.rowCount; i++) bloom.add(keyOf(projects[i], traces[i]));
    }
    this.known = bloom;
    return bloom;
  }

  private tableLayouts(): Promise<{ trace: TableLayout; run: TableLayout }> {
    this.layouts ??= Promise.all([tableLayout(this.db, 'trace_summaries'), tableLayout(this.db, 'run_summaries')]).then(([trace, run]) => ({ trace, run }));
    return this.layouts.catch((e) => {
      this.layouts = null;
      throw e;
    });
  }
}

/**
 * Whether the writer keeps a trace's spans in memory after a commit: while its root (a span without a parent)
 * has not arrived. SDKs export a span when it ends, so a root usually comes last, and spans after it are
 * rare: a trace complete so far is read back from `spans` if one does come. Keeping only open traces spares
 * the memory, and the garbage collector the copying of every span digest of every trace written.
 */
function remembers(t: TraceSummary | null): boolean {
  return t === null || t.rootMissing;
}

function push<T>(m: Map<string, T[]>, k: string, v: T): void {
  const list = m.get(k);
  if (list) list.push(v);
  else m.set(k, [v]);
}

const upkeeps = new WeakMap<TelemetryDb, SummaryUpkeep>();

/** The summary upkeep of this store (one per TelemetryDb, shared by its spans writer and its trace deletes). */
export function summaryUpkeep(db: TelemetryDb): SummaryUpkeep {
  let u = upkeeps.get(db);
  if (!u) upkeeps.set(db, (u = new SummaryUpkeep(db)));
  return u;
}

/**
 * Summarizes these traces again from their stored spans, in a transaction of its own under the store's
 * trace-delete gate: for spans written beside the spans writer (test fixtures insert rows directly).
 */
export async function refreshSummaries(db: TelemetryDb, projectId: string, traceIds: string[]): Promise<void> {
  const { traceDeleteGate } = await import('./spans-writer.js');
  const ids = [...new Set(traceIds)];
  if (ids.length === 0) return;
  await db.busy(() => db.read((c) =>
    traceDeleteGate(db).run(async () => {
      await c.run('BEGIN TRANSACTION');
      try {
        const after = await summaryUpkeep(db).rebuild(c, projectId, ids);
        await c.run('COMMIT');
        after();
      } catch (e) {
        await c.run('ROLLBACK').catch(() => undefined);
        throw e;
      }
    }),
  ));
}
