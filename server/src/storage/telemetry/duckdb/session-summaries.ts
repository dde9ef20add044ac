/**
 * Keeps `session_summaries` (one row per session key carried by a run: run count, distinct turns, first
 * start, last end, and its model calls summed by model: domains/agent-runs/call-totals.ts) up to date as the
 * runs of its sessions change, inside the span commit's transaction (summaries-writer.ts). A session row is
 * a function of its runs' (turn, start, end, usage); the writer keeps those of recently touched sessions in
 * memory with the row's running figures (least recently touched out first, bounded by runs), and reads any
 * other stored session's runs from `run_summaries`, before the commit changes them. A Bloom filter of the
 * stored sessions tells a new session without a lookup.
 *
 * A commit takes the entries it changes out of memory and puts them back only after COMMIT: a rolled-back
 * commit leaves them out, and the next commit that needs them reads them again from what is committed.
 */
import { LIST, VARCHAR, listValue, type DuckDBConnection } from '@duckdb/node-api';
import { BloomFilter } from '../../../lib/bloom.js';
import { addCalls, noCalls, totalsText, type CallTotals } from '../../../domains/agent-runs/call-totals.js';
import type { ModelUsageRow } from '../../../domains/agent-runs/store.js';
import { usageOf } from '../row-mappers.js';
import { appendChunks, rowChunks, type ColumnGetters, type TableLayout } from './rows-writer.js';

/** What a session row reads of one run. */
export interface RunBrief {
  turnId: string | null;
  startUs: number;
  endUs: number;
  usage: readonly Omit<ModelUsageRow, 'traceId'>[];
}

/** A run's place before and after a commit (null: in no session, or no run). */
export interface RunMove {
  projectId: string;
  traceId: string;
  from: string | null;
  to: string | null;
  brief: RunBrief | null;
}

/** A session's runs and the figures of its row, kept as runs come and go. */
class SessionEntry {
  readonly runs = new Map<string, RunBrief>();
  private readonly turns = new Map<string, number>();
  private startUs = Number.POSITIVE_INFINITY;
  private endUs = Number.NEGATIVE_INFINITY;
  /** A run that held the first start or the last end went: both are read again from the runs. */
  private rescan = false;
  private readonly totals: CallTotals = noCalls();

  constructor(
    readonly projectId: string,
    readonly sessionKey: string,
  ) {}

  set(traceId: string, brief: RunBrief): void {
    const had = this.runs.get(traceId);
    if (had) {
      // A run that grows keeps the bounds it held: only a start moved later or an end moved earlier rescans.
      if ((had.startUs === this.startUs && brief.startUs > had.startUs) || (had.endUs === this.endUs && brief.endUs < had.endUs)) this.rescan = true;
      this.untrack(had);
    }
    this.runs.set(traceId, brief);
    if (brief.startUs < this.startUs) this.startUs = brief.startUs;
    if (brief.endUs > this.endUs) this.endUs = brief.endUs;
    if (brief.turnId !== null) this.turns.set(brief.turnId, (this.turns.get(brief.turnId) ?? 0) + 1);
    addCalls(this.totals, brief.usage, 1);
  }

  delete(traceId: string): void {
    const had = this.runs.get(traceId);
    if (!had) return;
    this.runs.delete(traceId);
    if (had.startUs === this.startUs || had.endUs === this.endUs) this.rescan = true;
    this.untrack(had);
  }

  private untrack(b: RunBrief): void {
    if (b.turnId !== null) {
      const n = this.turns.get(b.turnId)! - 1;
      if (n === 0) this.turns.delete(b.turnId);
      else this.turns.set(b.turnId, n);
    }
    addCalls(this.totals, b.usage, -1);
  }

  /** The session's row; null when no run carries it any more. */
  row(): SessionRow | null {
    if (this.runs.size === 0) return null;
    if (this.rescan) {
      this.startUs = Number.POSITIVE_INFINITY;
      this.endUs = Number.NEGATIVE_INFINITY;
      for (const r of this.runs.values()) {
        if (r.startUs < this.startUs) this.startUs = r.startUs;
        if (r.endUs > this.endUs) this.endUs = r.endUs;
      }
      this.rescan = false;
    }
    return { sessionKey: this.sessionKey, runCount: this.runs.size, turnCount: this.turns.size, startUs: this.startUs, endUs: this.endUs, callTotals: totalsText(this.totals) };
  }
}

interface SessionRow {
  sessionKey: string;
  runCount: number;
  turnCount: number;
  startUs: number;
  endUs: number;
  callTotals: string;
}

const keyOf = (projectId: string, sessionKey: string) => `${projectId}\u0000${sessionKey}`;

const sessionColumns = (projectId: string): ColumnGetters<SessionRow> => ({
  project_id: () => projectId,
  session_key: (r) => r.sessionKey,
  run_count: (r) => r.runCount,
  turn_count: (r) => r.turnCount,
  start_us: (r) => r.startUs,
  end_us: (r) => r.endUs,
  call_totals: (r) => r.callTotals,
});

/** The stored runs of these sessions of one project, into their entries (`entryOf` gives the entry of a key). */
async function loadRuns(c: DuckDBConnection, projectId: string, keys: Iterable<string>, entryOf: (sessionKey: string) => SessionEntry): Promise<void> {
  const r = await c.runAndReadAll(
    'SELECT session_key, trace_id, turn_id, start_us, end_us, usage FROM run_summaries WHERE project_id = $p AND session_key IN (SELECT unnest($keys))',
    { p: projectId, keys: listValue([...keys]) },
  );
  const [sessions, traces, turns, starts, ends, usages] = r.getColumns() as unknown[][];
  for (let i = 0; i < r.currentRowCount; i++) {
    entryOf(String(sessions[i])).set(String(traces[i]), {
      turnId: turns[i] === null ? null : String(turns[i]),
      startUs: Number(starts[i]),
      endUs: Number(ends[i]),
      usage: usageOf(String(usages[i])),
    });
  }
}

let layout: Promise<TableLayout> | null = null;
async function tableLayout(c: DuckDBConnection): Promise<TableLayout> {
  // Every store has the same session_summaries columns (schema.ts): the layout is read once per process.
  layout ??= c.run('SELECT * FROM session_summaries LIMIT 0').then((r) => ({ names: r.columnNames(), types: r.columnTypes() }));
  return layout.catch((e) => {
    layout = null;
    throw e;
  });
}

/** Replaces the rows of these sessions of one project (`stored`: the keys that have one) with the entries' rows. */
async function writeRows(c: DuckDBConnection, projectId: string, stored: string[], entries: Iterable<SessionEntry>): Promise<void> {
  // A new session has no row to replace (most commits of new conversations delete nothing).
  // list_contains: half the cost of `IN (SELECT unnest(...))` (no semi-join to plan and run), same rows.
  if (stored.length) await c.run('DELETE FROM session_summaries WHERE project_id = $p AND list_contains($keys, session_key)', { p: projectId, keys: listValue(stored) }, { keys: LIST(VARCHAR) });
  const rows: SessionRow[] = [];
  for (const e of entries) {
    const row = e.row();
    if (row) rows.push(row);
  }
  await appendChunks(c, 'session_summaries', rowChunks(await tableLayout(c), sessionColumns(projectId), rows));
}

/** Recomputes the rows of these sessions from their runs (a session no run carries any more goes). */
export async function recomputeSessions(c: DuckDBConnection, sessions: { map: Map<string, Set<string>> }): Promise<void> {
  for (const [projectId, keys] of sessions.map) {
    const entries = new Map([...keys].map((k) => [k, new SessionEntry(projectId, k)]));
    await loadRuns(c, projectId, keys, (k) => entries.get(k)!);
    await writeRows(c, projectId, [...keys], entries.values());
  }
}

/** Recomputes every session row (the one-time upgrade that adds `call_totals`, a backfill). */
export async function recomputeAllSessions(c: DuckDBConnection): Promise<void> {
  const r = await c.runAndReadAll('SELECT DISTINCT project_id, session_key FROM run_summaries WHERE session_key IS NOT NULL');
  const byProject = new Map<string, Set<string>>();
  const [projects, keys] = r.getColumns() as string[][];
  for (let i = 0; i < r.currentRowCount; i++) {
    let set = byProject.get(projects[i]);
    if (!set) byProject.set(projects[i], (set = new Set()));
    set.add(keys[i]);
  }
  await c.run('DELETE FROM session_summaries');
  for (const [projectId, set] of byProject) {
    const all = [...set];
    // In slices, so one project of many sessions does not read all its runs at once.
    for (let i = 0; i < all.length; i += 1_000) {
      const slice = all.slice(i, i + 1_000);
      const entries = new Map(slice.map((k) => [k, new SessionEntry(projectId, k)]));
      await loadRuns(c, projectId, slice, (k) => entries.get(k)!);
      await writeRows(c, projectId, [], entries.values());
    }
  }
}

export class SessionUpkeep {
  private readonly cache = new Map<string, SessionEntry>();
  private cachedRuns = 0;
  private known: BloomFilter | null = null;

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
        // Out of memory until COMMIT (see the header).
        this.drop(k);
        next.set(k, had);
        stored.add(k);
        return;
      }
      next.set(k, new SessionEntry(projectId, sessionKey));
      if (known.has(k)) {
        let set = toLoad.get(projectId);
        if (!set) toLoad.set(projectId, (set = new Set()));
        set.add(sessionKey);
      }
    };
    for (const m of moves) {
      want(m.projectId, m.from);
      want(m.projectId, m.to);
    }
    if (next.size === 0) return () => undefined;
    for (const [projectId, keys] of toLoad) {
      await loadRuns(c, projectId, keys, (sessionKey) => {
        const k = keyOf(projectId, sessionKey);
        stored.add(k);
        return next.get(k)!;
      });
    }
    for (const m of moves) {
      if (m.from !== null && m.from !== m.to) next.get(keyOf(m.projectId, m.from))!.delete(m.traceId);
      if (m.to !== null) {
        const e = next.get(keyOf(m.projectId, m.to))!;
        if (m.brief) e.set(m.traceId, m.brief);
        else e.delete(m.traceId);
      }
    }
    const byProject = new Map<string, { stored: string[]; entries: SessionEntry[] }>();
    for (const [k, e] of next) {
      let p = byProject.get(e.projectId);
      if (!p) byProject.set(e.projectId, (p = { stored: [], entries: [] }));
      if (stored.has(k)) p.stored.push(e.sessionKey);
      p.entries.push(e);
    }
    for (const [projectId, p] of byProject) await writeRows(c, projectId, p.stored, p.entries);
    return () => {
      for (const [k, e] of next) {
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
}
