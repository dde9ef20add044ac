/**
 * Keeps `session_summaries` (one row per session key carried by a run: run count, distinct turns, first
 * start, last end) up to date as the runs of its sessions change, inside the span commit's transaction
 * (summaries-writer.ts). A session row is a function of its runs' (turn, start, end); the writer keeps
 * those of recently touched sessions in memory (least recently touched out first, bounded by runs) and
 * reads any other stored session's runs from `run_summaries`, before the commit changes them. A Bloom
 * filter of the stored sessions tells a new session without a lookup. Memory changes only after COMMIT.
 */
import { LIST, VARCHAR, listValue, type DuckDBConnection } from '@duckdb/node-api';
import { BloomFilter } from '../../../lib/bloom.js';
import { appendChunks, rowChunks, type ColumnGetters, type TableLayout } from './rows-writer.js';

/** What a session row reads of one run. */
export interface RunBrief {
  turnId: string | null;
  startUs: number;
  endUs: number;
}

/** A run's place before and after a commit (null: in no session, or no run). */
export interface RunMove {
  projectId: string;
  traceId: string;
  from: string | null;
  to: string | null;
  brief: RunBrief | null;
}

interface SessionEntry {
  projectId: string;
  sessionKey: string;
  runs: Map<string, RunBrief>;
}

interface SessionRow {
  sessionKey: string;
  runCount: number;
  turnCount: number;
  startUs: number;
  endUs: number;
}

const keyOf = (projectId: string, sessionKey: string) => `${projectId}\u0000${sessionKey}`;

const sessionColumns = (projectId: string): ColumnGetters<SessionRow> => ({
  project_id: () => projectId,
  session_key: (r) => r.sessionKey,
  run_count: (r) => r.runCount,
  turn_count: (r) => r.turnCount,
  start_us: (r) => r.startUs,
  end_us: (r) => r.endUs,
});

function rowOf(e: SessionEntry): SessionRow | null {
  if (e.runs.size === 0) return null;
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  const turns = new Set<string>();
  for (const r of e.runs.values()) {
    if (r.startUs < start) start = r.startUs;
    if (r.endUs > end) end = r.endUs;
    if (r.turnId !== null) turns.add(r.turnId);
  }
  return { sessionKey: e.sessionKey, runCount: e.runs.size, turnCount: turns.size, startUs: start, endUs: end };
}

export class SessionUpkeep {
  private readonly cache = new Map<string, SessionEntry>();
  private cachedRuns = 0;
  private known: BloomFilter | null = null;
  private layout: TableLayout | null = null;

  constructor(public maxCachedRuns = 50_000) {}

  /**
   * Applies the moves to the sessions they touch and rewrites those sessions' rows, in the caller's
   * transaction, BEFORE `run_summaries` is changed by the same commit. Returns the memory update.
   */
  async apply(c: DuckDBConnection, moves: RunMove[]): Promise<() => void> {
    const next = new Map<string, SessionEntry>();
    /** Sessions that have a stored row (remembered, or read back): only their rows are deleted. */
    const stored = new Set<string>();
    const toLoad = new Map<string, Set<string>>();
    const known = await this.knownSessions(c);
    const want = (projectId: string, sessionKey: string | null) => {
      if (sessionKey === null) return;
      const k = keyOf(projectId, sessionKey);
      if (next.has(k)) return;
      const had = this.cache.get(k);
      if (had) {
        next.set(k, { ...had, runs: new Map(had.runs) });
        stored.add(k);
      }
      else if (known.has(k)) {
        let set = toLoad.get(projectId);
        if (!set) toLoad.set(projectId, (set = new Set()));
        set.add(sessionKey);
        next.set(k, { projectId, sessionKey, runs: new Map() });
      } else next.set(k, { projectId, sessionKey, runs: new Map() });
    };
    for (const m of moves) {
      want(m.projectId, m.from);
      want(m.projectId, m.to);
    }
    if (next.size === 0) return () => undefined;
    for (const [projectId, keys] of toLoad) {
      const r = await c.runAndReadAll(
        'SELECT session_key, trace_id, turn_id, start_us, end_us FROM run_summaries WHERE project_id = $p AND session_key IN (SELECT unnest($keys))',
        { p: projectId, keys: listValue([...keys]) },
      );
      const [sessions, traces, turns, starts, ends] = r.getColumns() as unknown[][];
      for (let i = 0; i < r.currentRowCount; i++) {
        stored.add(keyOf(projectId, String(sessions[i])));
        next.get(keyOf(projectId, String(sessions[i])))!.runs.set(String(traces[i]), {
          turnId: turns[i] === null ? null : String(turns[i]),
          startUs: Number(starts[i]),
          endUs: Number(ends[i]),
        });
      }
    }
    for (const m of moves) {
      if (m.from !== null) next.get(keyOf(m.projectId, m.from))!.runs.delete(m.traceId);
      if (m.to !== null && m.brief) next.get(keyOf(m.projectId, m.to))!.runs.set(m.traceId, m.brief);
    }
    const byProject = new Map<string, { keys: string[]; rows: SessionRow[] }>();
    for (const [k, e] of next) {
      let p = byProject.get(e.projectId);
      if (!p) byProject.set(e.projectId, (p = { keys: [], rows: [] }));
      if (stored.has(k)) p.keys.push(e.sessionKey);
      const row = rowOf(e);
      if (row) p.rows.push(row);
    }
    for (const [projectId, p] of byProject) {
      // A new session has no row to replace (most commits of new conversations delete nothing).
      // list_contains: half the cost of `IN (SELECT unnest(...))` (no semi-join to plan and run), same rows.
      if (p.keys.length) await c.run('DELETE FROM session_summaries WHERE project_id = $p AND list_contains($keys, session_key)', { p: projectId, keys: listValue(p.keys) }, { keys: LIST(VARCHAR) });
      await appendChunks(c, 'session_summaries', rowChunks(await this.tableLayout(c), sessionColumns(projectId), p.rows));
    }
    return () => {
      for (const [k, e] of next) {
        this.drop(k);
        if (e.runs.size === 0) continue;
        this.cache.set(k, e);
        this.cachedRuns += e.runs.size;
        if (this.known && !this.known.has(k)) this.known.add(k);
      }
      for (const [k, e] of this.cache) {
        if (this.cachedRuns <= this.maxCachedRuns) break;
        this.cachedRuns -= e.runs.size;
        this.cache.delete(k);
      }
    };
  }

  /** Forgets sessions whose rows were rewritten another way (a trace delete, a rebuild). */
  forget(projectId: string, sessionKeys: Iterable<string>): void {
    for (const s of sessionKeys) this.drop(keyOf(projectId, s));
  }

  forgetProject(projectId: string): void {
    for (const e of [...this.cache.values()]) if (e.projectId === projectId) this.drop(keyOf(projectId, e.sessionKey));
  }

  private drop(k: string): void {
    const had = this.cache.get(k);
    if (!had) return;
    this.cachedRuns -= had.runs.size;
    this.cache.delete(k);
  }

  private async knownSessions(c: DuckDBConnection): Promise<BloomFilter> {
    if (this.known && this.known.count <= this.known.capacity) return this.known;
    const count = Number((await c.runAndReadAll('SELECT count(*) FROM session_summaries')).getRows()[0][0]);
    const bloom = new BloomFilter(Math.max(100_000, count * 2));
    const r = await c.runAndReadAll('SELECT project_id, session_key FROM session_summaries');
    const [projects, keys] = r.getColumns() as string[][];
    for (let i = 0; i < r.currentRowCount; i++) bloom.add(keyOf(projects[i], keys[i]));
    this.known = bloom;
    return bloom;
  }

  private async tableLayout(c: DuckDBConnection): Promise<TableLayout> {
    if (!this.layout) {
      const r = await c.run('SELECT * FROM session_summaries LIMIT 0');
      this.layout = { names: r.columnNames(), types: r.columnTypes() };
    }
    return this.layout;
  }
}
