/**
 * DuckDB adapter of the agent-reads port (domains/agent-runs/store.ts). Runs, sessions and turns are read
 * from the summaries kept at ingest (`run_summaries`, `session_summaries`: summaries-writer.ts, rules in
 * domains/agent-runs/summary.ts), never from a scan of spans; a run's steps are read from `spans` through its index on
 * the trace id (`traceRows`). Agent events are read from `span_events` and take their run's session, turn and
 * observation key from its summary. Every user value is a bound parameter; the only text spliced into the
 * SQL is the model's constants and generated parameter names.
 *
 * A span stored more than once (each delivery of a retried export is stored) is read once, as its first
 * ingested copy: the summaries hold each span once, and the step read keeps the first copy.
 */
import { parseTotals } from '../../../domains/agent-runs/call-totals.js';
import type { DuckDBConnection } from '@duckdb/node-api';
import type {
  AgentRunsStore,
  EventFilter,
  EventPosition,
  EventRow,
  KeyPosition,
  ModelUsageRow,
  RunFilter,
  RunHealthRow,
  RunPosition,
  RunRow,
  SessionFilter,
  SessionRow,
  SessionUsage,
  SightingEnvironmentRow,
  SightingRow,
  StepRow,
  TurnRow,
} from '../../../domains/agent-runs/store.js';
import { Params, inList, num, numOrNull, query, strOrNull, toRunRow } from './agent-runs-sql.js';
import { RUN_COLUMNS, STEP_COLUMNS, healthOf, toStepRow, usageOf, usageRow, type UsageTuple } from '../row-mappers.js';
export { STEP_COLUMNS, healthOf, toStepRow } from '../row-mappers.js';
import type { TelemetryDb } from './open.js';

/** The first window a page of runs is looked for in (1 hour), and past which it covers everything (a year). */
const FIRST_WINDOW_US = 3_600_000_000;
const MAX_WINDOW_US = 366 * 86_400_000_000;

/** The conditions of a run filter on `run_summaries` columns. */
function runWhere(p: Params, f: RunFilter): string[] {
  const where = [`project_id = ${p.str(f.projectId)}`];
  if (f.traceIds) where.push(`trace_id ${inList(p, f.traceIds)}`);
  if (f.sessionKeys) where.push(`session_key ${inList(p, f.sessionKeys)}`);
  if (f.turnIds) where.push(`turn_id ${inList(p, f.turnIds)}`);
  if (f.observationKey !== undefined) where.push(`observation_key = ${p.str(f.observationKey)}`);
  if (f.sinceUs !== undefined) where.push(`start_us >= ${p.int(f.sinceUs)}`);
  if (f.untilUs !== undefined) where.push(`start_us <= ${p.int(f.untilUs)}`);
  if (f.statuses) where.push(`status ${inList(p, f.statuses)}`);
  return where;
}

/**
 * The summary row of one trace (or run) of the project: looked up by trace id alone, through the table's
 * index on it (DuckDB uses an index only for a filter on that column alone; with the project in the filter it
 * scans), and the project's row kept here. Another project's row with the same trace id is never returned.
 */
export async function byTrace(c: DuckDBConnection, table: 'trace_summaries' | 'run_summaries', columns: string, projectId: string, traceId: string): Promise<Record<string, unknown> | undefined> {
  const p = new Params();
  const rows = await query(c, `SELECT project_id AS of_project, ${columns} FROM ${table} WHERE trace_id = ${p.str(traceId)}`, p);
  return rows.find((r) => r.of_project === projectId);
}

/** How a trace's rows are deduplicated and ordered by `traceRows`. */
interface TraceRowsOf {
  /** Identifies a row across its stored copies (a retried export stores a span again). */
  copyOf: (r: Record<string, unknown>) => string;
  /** Orders copies: the first is kept. */
  firstCopy: (a: Record<string, unknown>, b: Record<string, unknown>) => number;
  /** The order of the answer. */
  order: (a: Record<string, unknown>, b: Record<string, unknown>) => number;
}

/** Spans: one per span id, its first ingested copy, in start order. */
export const SPAN_ROWS: TraceRowsOf = {
  copyOf: (r) => String(r.span_id),
  firstCopy: (a, b) => num(a.ingested_at_us) - num(b.ingested_at_us) || num(a.start_us) - num(b.start_us),
  order: (a, b) => num(a.start_us) - num(b.start_us) || codePoints(String(a.span_id), String(b.span_id)),
};

/** Span events: one per (span, position), its earliest copy, by span and position. */
export const EVENT_ROWS: TraceRowsOf = {
  copyOf: (r) => `${String(r.span_id)}\u0000${num(r.event_index)}`,
  firstCopy: (a, b) => num(a.ts_us) - num(b.ts_us),
  order: (a, b) => codePoints(String(a.span_id), String(b.span_id)) || num(a.event_index) - num(b.event_index),
};

const codePoints = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The rows of one trace in `spans` or `span_events` (with `columns`, which must name what `of` reads), found
 * through the table's index on the trace id: DuckDB uses an index only for a filter on its column alone, so
 * the statement asks by trace id and the project's rows are kept here (another project's trace with the same id
 * is never returned), each row once (its first copy), in the order `of` gives. About 1 ms for a trace of a few
 * dozen spans in a store of millions, against 3-4 ms for a scan of the trace's ingest range.
 */
export async function traceRows(c: DuckDBConnection, table: 'spans' | 'span_events', columns: string, projectId: string, traceId: string, of: TraceRowsOf): Promise<Record<string, unknown>[]> {
  const p = new Params();
  const rows = await query(c, `SELECT project_id AS of_project, ${columns} FROM ${table} WHERE trace_id = ${p.str(traceId)}`, p);
  const first = new Map<string, Record<string, unknown>>();
  for (const r of rows) {
    if (r.of_project !== projectId) continue;
    const k = of.copyOf(r);
    const had = first.get(k);
    if (!had || of.firstCopy(r, had) < 0) first.set(k, r);
  }
  return [...first.values()].sort(of.order);
}

/** A session's runs with model calls (`sessionUsage`): the same rows for the calls and their fingerprint. */
function sessionRunsWhere(p: Params, projectId: string, sessionKeys: string[], notBeforeUs?: number): string {
  const since = notBeforeUs !== undefined ? `AND start_us >= ${p.int(notBeforeUs)}` : '';
  return `project_id = ${p.str(projectId)} AND session_key ${inList(p, sessionKeys)} AND model_calls > 0 ${since}`;
}

/** Runs with model calls, and the sum of a 64-bit hash of each one's id and usage (order independent). */
const SESSION_FINGERPRINT = `count(*)::VARCHAR || ':' || sum(hash(trace_id || '|' || usage))::VARCHAR`;

export class DuckDbAgentRunsQuery implements AgentRunsStore {
  constructor(private readonly db: TelemetryDb) {}

  /**
   * A page is looked for among the runs that started within a window before its anchor (the cursor, the
   * filter's `until`, else the newest matching run), widened eightfold until it holds the page or covers
   * everything: DuckDB's top-N over every row of the project costs as much as sorting them all, while
   * the filter on `start_us` is a cheap scan and leaves a few rows to sort. Exact: a run outside the window
   * started before every run in it. A first page without `until` tries the hour before now first (no query
   * for the newest run when the project is live).
   */
  async runs(filter: RunFilter, opts: { after?: RunPosition; limit?: number }): Promise<RunRow[]> {
    return this.db.read(async (c) => {
      const page = (lowUs: number | null) => {
        const p = new Params();
        const where = runWhere(p, filter);
        if (opts.after) where.push(`(start_us, trace_id) < (${p.int(opts.after.startUs)}, ${p.str(opts.after.traceId)})`);
        if (lowUs !== null) where.push(`start_us >= ${p.int(lowUs)}`);
        const sql = `SELECT ${RUN_COLUMNS}, usage FROM run_summaries WHERE ${where.join(' AND ')}
          ORDER BY start_us DESC, trace_id DESC ${opts.limit !== undefined ? `LIMIT ${p.int(opts.limit)}` : ''}`;
        return query(c, sql, p);
      };
      let rows: Record<string, unknown>[];
      const only = filter.traceIds?.length === 1 && Object.keys(filter).every((k) => k === 'projectId' || k === 'traceIds' || filter[k as keyof RunFilter] === undefined);
      if (only && !opts.after) {
        // One run by id (the run read, the graph): through the index.
        const r = await byTrace(c, 'run_summaries', `${RUN_COLUMNS}, usage`, filter.projectId, filter.traceIds![0]);
        rows = r ? [r] : [];
      } else if (opts.limit === undefined || filter.traceIds) rows = await page(null);
      else {
        // The first page of a live project: the hour before now (the wall clock only picks the window; a
        // full page from it is exact whatever the clock says, as any run outside it started earlier).
        const given = opts.after?.startUs ?? filter.untilUs;
        rows = given === undefined ? await page(Date.now() * 1000 - FIRST_WINDOW_US) : [];
        if (rows.length < opts.limit) {
          const anchor = given ?? (await this.newestStart(c, filter));
          for (let window = FIRST_WINDOW_US; ; window *= 8) {
            const low = anchor === null ? null : anchor - window;
            const covers = low === null || (filter.sinceUs !== undefined && low <= filter.sinceUs) || window > MAX_WINDOW_US;
            rows = await page(covers ? null : low);
            if (covers || rows.length >= opts.limit) break;
          }
        }
      }
      return rows.map((r) => ({ ...toRunRow(r), usage: usageOf(String(r.usage)) }));
    });
  }

  /** The start of the newest run matching the filter (null: none). */
  private async newestStart(c: DuckDBConnection, filter: RunFilter): Promise<number | null> {
    const p = new Params();
    const [r] = await query(c, `SELECT max(start_us) AS m FROM run_summaries WHERE ${runWhere(p, filter).join(' AND ')}`, p);
    return r.m === null ? null : num(r.m);
  }

  async runStarts(projectId: string, opts: { after: RunPosition; beforeUs: number; limit: number }): Promise<RunPosition[]> {
    const p = new Params();
    const sql = `SELECT trace_id, start_us FROM run_summaries
      WHERE project_id = ${p.str(projectId)} AND (start_us, trace_id) > (${p.int(opts.after.startUs)}, ${p.str(opts.after.traceId)}) AND start_us < ${p.int(opts.beforeUs)}
      ORDER BY start_us, trace_id LIMIT ${p.int(opts.limit)}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({ traceId: String(r.trace_id), startUs: num(r.start_us) }));
  }

  async runHealth(projectId: string, observationKeys: string[], sinceUs: number): Promise<RunHealthRow[]> {
    if (observationKeys.length === 0) return [];
    const p = new Params();
    const sql = `SELECT observation_key, status, count(*) AS n, max(start_us) AS last_start FROM run_summaries
      WHERE project_id = ${p.str(projectId)} AND observation_key ${inList(p, observationKeys)} AND start_us >= ${p.int(sinceUs)}
      GROUP BY ALL`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return healthOf(rows);
  }

  async modelUsage(projectId: string, traceIds: string[]): Promise<ModelUsageRow[]> {
    if (traceIds.length === 0) return [];
    const p = new Params();
    const sql = `SELECT trace_id, usage FROM run_summaries WHERE project_id = ${p.str(projectId)} AND trace_id ${inList(p, traceIds)} AND model_calls > 0`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.flatMap((r) => usageOf(String(r.usage)).map((u) => ({ traceId: String(r.trace_id), ...u })));
  }

  async sessionUsage(projectId: string, sessionKeys: string[], notBeforeUs?: number): Promise<Map<string, SessionUsage>> {
    const out = new Map<string, SessionUsage>();
    if (sessionKeys.length === 0) return out;
    const p = new Params();
    // One JSON array per session: its runs' usage arrays joined (each run's groups are `[...]` items).
    const sql = `SELECT session_key, '[' || string_agg(usage, ',') || ']' AS usages, ${SESSION_FINGERPRINT} AS fingerprint
      FROM run_summaries WHERE ${sessionRunsWhere(p, projectId, sessionKeys, notBeforeUs)} GROUP BY session_key`;
    for (const r of await this.db.read((c) => query(c, sql, p))) {
      const calls: Omit<ModelUsageRow, 'traceId'>[] = [];
      for (const run of JSON.parse(String(r.usages)) as UsageTuple[][]) for (const t of run) calls.push(usageRow(t));
      out.set(String(r.session_key), { fingerprint: String(r.fingerprint), calls });
    }
    return out;
  }

  async sessionUsageFingerprints(projectId: string, sessionKeys: string[], notBeforeUs?: number): Promise<Map<string, string>> {
    if (sessionKeys.length === 0) return new Map();
    const p = new Params();
    const sql = `SELECT session_key, ${SESSION_FINGERPRINT} AS fingerprint FROM run_summaries
      WHERE ${sessionRunsWhere(p, projectId, sessionKeys, notBeforeUs)} GROUP BY session_key`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return new Map(rows.map((r) => [String(r.session_key), String(r.fingerprint)]));
  }

  async steps(projectId: string, traceId: string): Promise<StepRow[]> {
    const rows = await this.db.read((c) => traceRows(c, 'spans', `${STEP_COLUMNS}, ingested_at_us`, projectId, traceId, SPAN_ROWS));
    return rows.map(toStepRow);
  }

  /**
   * From `session_summaries`. With `notBeforeUs` (retention) a session is made of its runs that started at or
   * after it: a session that started at or after it is its stored row; one that started before and ended at or
   * after it (a run of it may have started since: the few sessions across the cut-off) is recomputed from those
   * runs, as the summary upkeep computes it (recomputeSessions); any other session has no such run.
   */
  async sessions(filter: SessionFilter, opts: { after?: KeyPosition; limit?: number }): Promise<SessionRow[]> {
    const p = new Params();
    const project = p.str(filter.projectId);
    const where = [`project_id = ${project}`];
    if (filter.sessionKeys) where.push(`session_key ${inList(p, filter.sessionKeys)}`);
    if (filter.sinceUs !== undefined) where.push(`start_us >= ${p.int(filter.sinceUs)}`);
    if (filter.untilUs !== undefined) where.push(`start_us <= ${p.int(filter.untilUs)}`);
    if (opts.after) where.push(`(start_us, session_key) < (${p.int(opts.after.startUs)}, ${p.str(opts.after.key)})`);
    let from = 'session_summaries';
    if (filter.notBeforeUs !== undefined) {
      const nb = p.int(filter.notBeforeUs);
      from = `(
        SELECT session_key, run_count, turn_count, start_us, end_us, call_totals FROM session_summaries WHERE project_id = ${project} AND start_us >= ${nb}
        UNION ALL
        SELECT session_key, count(*) AS run_count, count(DISTINCT turn_id) AS turn_count, min(start_us) AS start_us, max(end_us) AS end_us, NULL AS call_totals
        FROM run_summaries WHERE project_id = ${project} AND start_us >= ${nb} AND session_key IN (
          SELECT session_key FROM session_summaries WHERE project_id = ${project} AND start_us < ${nb} AND end_us >= ${nb})
        GROUP BY session_key) AS s`;
      where[0] = 'true';
    }
    const sql = `SELECT session_key, run_count, turn_count, start_us, end_us, call_totals FROM ${from} WHERE ${where.join(' AND ')}
      ORDER BY start_us DESC, session_key DESC ${opts.limit !== undefined ? `LIMIT ${p.int(opts.limit)}` : ''}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({
      sessionKey: String(r.session_key),
      runCount: num(r.run_count),
      turnCount: num(r.turn_count),
      startUs: num(r.start_us),
      endUs: num(r.end_us),
      // Absent for a session across the retention cut-off (its runs before it are left out) or not yet summed.
      ...(r.call_totals === null ? {} : { callTotals: parseTotals(String(r.call_totals))! }),
    }));
  }

  async turns(projectId: string, sessionKey: string, opts: { after?: KeyPosition; limit: number; notBeforeUs?: number }): Promise<TurnRow[]> {
    const p = new Params();
    const project = p.str(projectId);
    const key = p.str(sessionKey);
    const after = opts.after ? `WHERE (start_us, turn_id) < (${p.int(opts.after.startUs)}, ${p.str(opts.after.key)})` : '';
    const since = opts.notBeforeUs !== undefined ? `AND start_us >= ${p.int(opts.notBeforeUs)}` : '';
    const sql = `
      WITH t AS (
        SELECT turn_id, count(*) AS run_count, min(start_us) AS start_us, max(end_us) AS end_us
        FROM run_summaries WHERE project_id = ${project} AND session_key = ${key} AND turn_id IS NOT NULL ${since} GROUP BY turn_id
      )
      SELECT * FROM t ${after} ORDER BY start_us DESC, turn_id DESC LIMIT ${p.int(opts.limit)}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({ turnId: String(r.turn_id), runCount: num(r.run_count), startUs: num(r.start_us), endUs: num(r.end_us) }));
  }

  async events(f: EventFilter, opts: { after?: EventPosition; limit: number }): Promise<EventRow[]> {
    const p = new Params();
    const project = p.str(f.projectId);
    const runs: string[] = [`project_id = ${project}`];
    const where: string[] = [
      `e.project_id = ${project}`,
      'e.category IS NOT NULL',
      // A context event is an agent event only when accepted (it has its one typed detail).
      `(e.category <> 'context' OR (e.context_kind IS NOT NULL AND e.context_detail IS NOT NULL))`,
    ];
    if (f.traceId !== undefined) {
      const t = p.str(f.traceId);
      runs.push(`trace_id = ${t}`);
      where.push(`e.trace_id = ${t}`);
    }
    if (f.sessionKey !== undefined) runs.push(`session_key = ${p.str(f.sessionKey)}`);
    if (f.observationKey !== undefined) runs.push(`observation_key = ${p.str(f.observationKey)}`);
    if (f.sinceUs !== undefined) where.push(`e.ts_us >= ${p.int(f.sinceUs)}`);
    if (f.untilUs !== undefined) where.push(`e.ts_us <= ${p.int(f.untilUs)}`);
    if (f.categories) where.push(`e.category ${inList(p, f.categories)}`);
    if (f.canonicalOperations) where.push(`s.canonical_operation ${inList(p, f.canonicalOperations)}`);
    if (f.contextSourceId !== undefined) where.push(`list_contains(e.context_source_ids, ${p.str(f.contextSourceId)})`);
    if (opts.after) {
      const a = opts.after;
      where.push(`(e.ts_us, e.trace_id, e.span_id, e.event_index) < (${p.int(a.tsUs)}, ${p.str(a.traceId)}, ${p.str(a.spanId)}, ${p.int(a.index)})`);
    }
    // The events of the selected runs' traces only (a trace that is no run has no agent events).
    const sql = `
      WITH r AS MATERIALIZED (SELECT trace_id, session_key, turn_id, observation_key FROM run_summaries WHERE ${runs.join(' AND ')})
      SELECT e.trace_id, e.span_id, e.event_index, e.ts_us, e.name, e.category, e.context_kind, e.context_detail,
        s.canonical_operation, r.session_key, r.turn_id, r.observation_key
      FROM span_events e
      JOIN r ON r.trace_id = e.trace_id
      JOIN spans s ON s.project_id = e.project_id AND s.trace_id = e.trace_id AND s.span_id = e.span_id
      WHERE ${where.join(' AND ')} AND s.trace_id IN (SELECT trace_id FROM r)
      QUALIFY row_number() OVER (PARTITION BY e.trace_id, e.span_id, e.event_index ORDER BY s.ingested_at_us, s.start_us, e.ts_us) = 1
      ORDER BY e.ts_us DESC, e.trace_id DESC, e.span_id DESC, e.event_index DESC
      LIMIT ${p.int(opts.limit)}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({
      traceId: String(r.trace_id),
      spanId: String(r.span_id),
      index: num(r.event_index),
      tsUs: num(r.ts_us),
      name: String(r.name),
      category: String(r.category),
      contextKind: strOrNull(r.context_kind),
      contextDetail: strOrNull(r.context_detail),
      canonicalOperation: String(r.canonical_operation),
      sessionKey: strOrNull(r.session_key),
      turnId: strOrNull(r.turn_id),
      observationKey: strOrNull(r.observation_key),
    }));
  }

  async identityKeys(projectId: string, opts: { after?: string; limit: number }): Promise<string[]> {
    const p = new Params();
    const after = opts.after !== undefined ? `AND observation_key > ${p.str(opts.after)}` : '';
    const sql = `
      SELECT DISTINCT observation_key FROM agent_sightings WHERE project_id = ${p.str(projectId)} ${after}
      ORDER BY observation_key LIMIT ${p.int(opts.limit)}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => String(r.observation_key));
  }

  async sightings(projectId: string, observationKeys: string[]): Promise<SightingRow[]> {
    if (observationKeys.length === 0) return [];
    const p = new Params();
    const sql = `
      SELECT observation_key, source, api_key_id, first_seen_us, last_seen_us, sighting_count FROM agent_sightings
      WHERE project_id = ${p.str(projectId)} AND observation_key ${inList(p, observationKeys)}
      ORDER BY observation_key, first_seen_us, source, api_key_id`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({
      observationKey: String(r.observation_key),
      source: String(r.source),
      apiKeyId: String(r.api_key_id),
      firstSeenUs: num(r.first_seen_us),
      lastSeenUs: num(r.last_seen_us),
      sightingCount: num(r.sighting_count),
    }));
  }

  async sightingEnvironments(projectId: string, observationKeys: string[], perKey: number): Promise<SightingEnvironmentRow[]> {
    if (observationKeys.length === 0) return [];
    const p = new Params();
    const sql = `
      SELECT observation_key, environment, first_seen_us, last_seen_us FROM (
        SELECT *, row_number() OVER (PARTITION BY observation_key ORDER BY last_seen_us DESC, environment) AS rank
        FROM agent_sighting_environments
        WHERE project_id = ${p.str(projectId)} AND observation_key ${inList(p, observationKeys)})
      WHERE rank <= ${p.int(perKey)}
      ORDER BY observation_key, last_seen_us DESC, environment`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({
      observationKey: String(r.observation_key),
      environment: String(r.environment),
      firstSeenUs: num(r.first_seen_us),
      lastSeenUs: num(r.last_seen_us),
    }));
  }
}
