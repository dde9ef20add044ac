/**
 * ClickHouse adapter of the agent-reads port (domains/agent-runs/store.ts), with the observable behaviour of
 * the embedded one (duckdb/agent-runs-query.ts). Runs, sessions and turns are read from the run summaries the
 * spans writer keeps (`run_summaries FINAL`: the newest version of each run, ended runs left out; summaries.ts),
 * never from a scan of spans. There is no session table: a session is its runs grouped by session key at read
 * time (run count, distinct turns, first start, last end: what duckdb/session-summaries.ts stores). A run's
 * steps are one range of the `spans` ordering key (project, trace).
 *
 * A span stored more than once (each delivery of a retried export is stored, and a group-commit retry may store
 * a row twice) is read once, as its first ingested copy (lowest `ingested_at_us`, then earliest start): the
 * summaries hold each span once, and the step and event reads keep that copy with `LIMIT 1 BY`. Traces with a
 * `trace_tombstones` row (deleted) are left out of every read. Every user value is a bound parameter.
 */
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
import {
  ChParams,
  LOCAL_SUBQUERIES,
  RUN_COLUMNS,
  STEP_COLUMNS,
  count,
  healthOf,
  notTombstoned,
  num,
  runWhere,
  strOrNull,
  toRunRow,
  toStepRow,
  usageOf,
  usageRow,
  type UsageTuple,
} from './agent-runs-sql.js';
import type { ChTelemetryDb } from './db.js';

/** A session's runs with model calls (`sessionUsage`): the same rows for the calls and their fingerprint. */
function sessionRunsWhere(p: ChParams, projectId: string, sessionKeys: string[], notBeforeUs?: number): string {
  const project = p.str(projectId);
  const since = notBeforeUs !== undefined ? `AND start_us >= ${p.int(notBeforeUs)}` : '';
  return `project_id = ${project} AND session_key IN ${p.strs(sessionKeys)} AND model_calls > 0 AND ${notTombstoned(project)} ${since}`;
}

/** Runs with model calls, and the sum (mod 2^64) of a 64-bit hash of each one's id and usage (order independent). */
const SESSION_FINGERPRINT = `toString(count()) || ':' || toString(sum(cityHash64(trace_id, usage)))`;

export class ChAgentRunsQuery implements AgentRunsStore {
  constructor(private readonly db: ChTelemetryDb) {}

  private rows(sql: string, p: ChParams): Promise<Record<string, unknown>[]> {
    return this.db.client.query(sql, p.values);
  }

  async runs(filter: RunFilter, opts: { after?: RunPosition; limit?: number }): Promise<RunRow[]> {
    const p = new ChParams();
    const where = runWhere(p, filter);
    if (opts.after) where.push(`(start_us, trace_id) < (${p.int(opts.after.startUs)}, ${p.str(opts.after.traceId)})`);
    const sql = `SELECT ${RUN_COLUMNS}, usage FROM run_summaries FINAL WHERE ${where.join(' AND ')}
      ORDER BY start_us DESC, trace_id DESC ${opts.limit !== undefined ? `LIMIT ${count(opts.limit)}` : ''} ${LOCAL_SUBQUERIES}`;
    const rows = await this.rows(sql, p);
    return rows.map((r) => ({ ...toRunRow(r), usage: usageOf(String(r.usage)) }));
  }

  async runStarts(projectId: string, opts: { after: RunPosition; beforeUs: number; limit: number }): Promise<RunPosition[]> {
    const p = new ChParams();
    const project = p.str(projectId);
    const sql = `SELECT trace_id, start_us FROM run_summaries FINAL
      WHERE project_id = ${project} AND (start_us, trace_id) > (${p.int(opts.after.startUs)}, ${p.str(opts.after.traceId)}) AND start_us < ${p.int(opts.beforeUs)}
        AND ${notTombstoned(project)}
      ORDER BY start_us, trace_id LIMIT ${count(opts.limit)} ${LOCAL_SUBQUERIES}`;
    const rows = await this.rows(sql, p);
    return rows.map((r) => ({ traceId: String(r.trace_id), startUs: num(r.start_us) }));
  }

  async runHealth(projectId: string, observationKeys: string[], sinceUs: number): Promise<RunHealthRow[]> {
    if (observationKeys.length === 0) return [];
    const p = new ChParams();
    const project = p.str(projectId);
    const sql = `SELECT observation_key, status, count() AS n, max(start_us) AS last_start FROM run_summaries FINAL
      WHERE project_id = ${project} AND observation_key IN ${p.strs(observationKeys)} AND start_us >= ${p.int(sinceUs)} AND ${notTombstoned(project)}
      GROUP BY observation_key, status ${LOCAL_SUBQUERIES}`;
    return healthOf(await this.rows(sql, p));
  }

  async modelUsage(projectId: string, traceIds: string[]): Promise<ModelUsageRow[]> {
    if (traceIds.length === 0) return [];
    const p = new ChParams();
    const project = p.str(projectId);
    const sql = `SELECT trace_id, usage FROM run_summaries FINAL
      WHERE project_id = ${project} AND trace_id IN ${p.strs(traceIds)} AND model_calls > 0 AND ${notTombstoned(project)} ${LOCAL_SUBQUERIES}`;
    const rows = await this.rows(sql, p);
    return rows.flatMap((r) => usageOf(String(r.usage)).map((u) => ({ traceId: String(r.trace_id), ...u })));
  }

  async sessionUsage(projectId: string, sessionKeys: string[], notBeforeUs?: number): Promise<Map<string, SessionUsage>> {
    const out = new Map<string, SessionUsage>();
    if (sessionKeys.length === 0) return out;
    const p = new ChParams();
    // One array per session: its runs' usage JSON arrays, and their fingerprint from the same rows.
    const sql = `SELECT session_key, groupArray(usage) AS usages, ${SESSION_FINGERPRINT} AS fingerprint FROM run_summaries FINAL
      WHERE ${sessionRunsWhere(p, projectId, sessionKeys, notBeforeUs)} GROUP BY session_key ${LOCAL_SUBQUERIES}`;
    for (const r of await this.rows(sql, p)) {
      const calls: Omit<ModelUsageRow, 'traceId'>[] = [];
      for (const u of r.usages as string[]) for (const t of JSON.parse(u) as UsageTuple[]) calls.push(usageRow(t));
      out.set(String(r.session_key), { fingerprint: String(r.fingerprint), calls });
    }
    return out;
  }

  async sessionUsageFingerprints(projectId: string, sessionKeys: string[], notBeforeUs?: number): Promise<Map<string, string>> {
    if (sessionKeys.length === 0) return new Map();
    const p = new ChParams();
    const sql = `SELECT session_key, ${SESSION_FINGERPRINT} AS fingerprint FROM run_summaries FINAL
      WHERE ${sessionRunsWhere(p, projectId, sessionKeys, notBeforeUs)} GROUP BY session_key ${LOCAL_SUBQUERIES}`;
    return new Map((await this.rows(sql, p)).map((r) => [String(r.session_key), String(r.fingerprint)]));
  }

  async steps(projectId: string, traceId: string): Promise<StepRow[]> {
    const p = new ChParams();
    const project = p.str(projectId);
    const trace = p.str(traceId);
    const sql = `
      SELECT ${STEP_COLUMNS} FROM (
        SELECT ${STEP_COLUMNS}, ingested_at_us FROM spans
        WHERE project_id = ${project} AND trace_id = ${trace}
          AND trace_id NOT IN (SELECT trace_id FROM trace_tombstones WHERE project_id = ${project} AND trace_id = ${trace})
        ORDER BY ingested_at_us, start_us LIMIT 1 BY span_id)
      ORDER BY start_us, span_id ${LOCAL_SUBQUERIES}`;
    const rows = await this.rows(sql, p);
    return rows.map(toStepRow);
  }

  /** Sessions are their runs grouped by session key (no session table on ClickHouse). */
  async sessions(filter: SessionFilter, opts: { after?: KeyPosition; limit?: number }): Promise<SessionRow[]> {
    const p = new ChParams();
    const project = p.str(filter.projectId);
    const where = [`project_id = ${project}`, 'session_key IS NOT NULL', notTombstoned(project)];
    if (filter.sessionKeys) where.push(`session_key IN ${p.strs(filter.sessionKeys)}`);
    // Retention: a session is made of its runs that started at or after the cut-off.
    if (filter.notBeforeUs !== undefined) where.push(`start_us >= ${p.int(filter.notBeforeUs)}`);
    const having: string[] = [];
    if (filter.sinceUs !== undefined) having.push(`s_start >= ${p.int(filter.sinceUs)}`);
    if (filter.untilUs !== undefined) having.push(`s_start <= ${p.int(filter.untilUs)}`);
    if (opts.after) having.push(`(s_start, s_key) < (${p.int(opts.after.startUs)}, ${p.str(opts.after.key)})`);
    const sql = `
      SELECT assumeNotNull(session_key) AS s_key, count() AS s_runs, uniqExact(turn_id) AS s_turns, min(start_us) AS s_start, max(end_us) AS s_end
      FROM run_summaries FINAL WHERE ${where.join(' AND ')}
      GROUP BY s_key ${having.length ? `HAVING ${having.join(' AND ')}` : ''}
      ORDER BY s_start DESC, s_key DESC ${opts.limit !== undefined ? `LIMIT ${count(opts.limit)}` : ''} ${LOCAL_SUBQUERIES}`;
    const rows = await this.rows(sql, p);
    return rows.map((r) => ({
      sessionKey: String(r.s_key),
      runCount: num(r.s_runs),
      turnCount: num(r.s_turns),
      startUs: num(r.s_start),
      endUs: num(r.s_end),
    }));
  }

  async turns(projectId: string, sessionKey: string, opts: { after?: KeyPosition; limit: number; notBeforeUs?: number }): Promise<TurnRow[]> {
    const p = new ChParams();
    const project = p.str(projectId);
    const having = opts.after ? `HAVING (t_start, t_id) < (${p.int(opts.after.startUs)}, ${p.str(opts.after.key)})` : '';
    const since = opts.notBeforeUs !== undefined ? `AND start_us >= ${p.int(opts.notBeforeUs)}` : '';
    const sql = `
      SELECT assumeNotNull(turn_id) AS t_id, count() AS t_runs, min(start_us) AS t_start, max(end_us) AS t_end
      FROM run_summaries FINAL
      WHERE project_id = ${project} AND session_key = ${p.str(sessionKey)} AND turn_id IS NOT NULL AND ${notTombstoned(project)} ${since}
      GROUP BY t_id ${having}
      ORDER BY t_start DESC, t_id DESC LIMIT ${count(opts.limit)} ${LOCAL_SUBQUERIES}`;
    const rows = await this.rows(sql, p);
    return rows.map((r) => ({ turnId: String(r.t_id), runCount: num(r.t_runs), startUs: num(r.t_start), endUs: num(r.t_end) }));
  }

  async events(f: EventFilter, opts: { after?: EventPosition; limit: number }): Promise<EventRow[]> {
    const p = new ChParams();
    const project = p.str(f.projectId);
    const runs: string[] = [`project_id = ${project}`, notTombstoned(project)];
    const where: string[] = [
      `project_id = ${project}`,
      'category IS NOT NULL',
      // A context event is an agent event only when accepted (it has its one typed detail).
      `(category <> 'context' OR (context_kind IS NOT NULL AND context_detail IS NOT NULL))`,
      'trace_id IN (SELECT trace_id FROM r)',
    ];
    if (f.traceId !== undefined) {
      const t = p.str(f.traceId);
      runs.push(`trace_id = ${t}`);
      where.push(`trace_id = ${t}`);
    }
    if (f.sessionKey !== undefined) runs.push(`session_key = ${p.str(f.sessionKey)}`);
    if (f.observationKey !== undefined) runs.push(`observation_key = ${p.str(f.observationKey)}`);
    if (f.sinceUs !== undefined) where.push(`ts_us >= ${p.int(f.sinceUs)}`);
    if (f.untilUs !== undefined) where.push(`ts_us <= ${p.int(f.untilUs)}`);
    if (f.categories) where.push(`category IN ${p.strs(f.categories)}`);
    if (f.contextSourceId !== undefined) where.push(`has(context_source_ids, ${p.str(f.contextSourceId)})`);
    if (opts.after) {
      const a = opts.after;
      where.push(`(ts_us, trace_id, span_id, event_index) < (${p.int(a.tsUs)}, ${p.str(a.traceId)}, ${p.str(a.spanId)}, ${p.int(a.index)})`);
    }
    const ops = f.canonicalOperations ? `WHERE s.canonical_operation IN ${p.strs(f.canonicalOperations)}` : '';
    // The events of the selected runs' traces only (a trace that is no run has no agent events), each event
    // once (of its copies the earliest), with its span's operation from the span's first ingested copy; an
    // event whose span is not stored is left out.
    const sql = `
      WITH
        r AS (SELECT trace_id, session_key, turn_id, observation_key FROM run_summaries FINAL WHERE ${runs.join(' AND ')}),
        e AS (
          SELECT trace_id, span_id, event_index, ts_us, name, category, context_kind, context_detail FROM span_events
          WHERE ${where.join(' AND ')}
          ORDER BY ts_us LIMIT 1 BY trace_id, span_id, event_index
        ),
        s AS (
          SELECT trace_id, span_id, canonical_operation, ingested_at_us, start_us FROM spans
          WHERE project_id = ${project} AND (trace_id, span_id) IN (SELECT trace_id, span_id FROM e)
          ORDER BY ingested_at_us, start_us LIMIT 1 BY trace_id, span_id
        )
      SELECT e.trace_id AS trace_id, e.span_id AS span_id, e.event_index AS event_index, e.ts_us AS ts_us, e.name AS name, e.category AS category,
        e.context_kind AS context_kind, e.context_detail AS context_detail, s.canonical_operation AS canonical_operation,
        r.session_key AS session_key, r.turn_id AS turn_id, r.observation_key AS observation_key
      FROM e
      INNER JOIN s ON s.trace_id = e.trace_id AND s.span_id = e.span_id
      INNER JOIN r ON r.trace_id = e.trace_id
      ${ops}
      ORDER BY e.ts_us DESC, e.trace_id DESC, e.span_id DESC, e.event_index DESC
      LIMIT ${count(opts.limit)} ${LOCAL_SUBQUERIES}`;
    const rows = await this.rows(sql, p);
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
    const p = new ChParams();
    const after = opts.after !== undefined ? `AND observation_key > ${p.str(opts.after)}` : '';
    const sql = `
      SELECT DISTINCT observation_key FROM agent_sightings WHERE project_id = ${p.str(projectId)} ${after}
      ORDER BY observation_key LIMIT ${count(opts.limit)}`;
    const rows = await this.rows(sql, p);
    return rows.map((r) => String(r.observation_key));
  }

  /** The sightings table adds its rows up (min, max, sum): read with the same aggregates. */
  async sightings(projectId: string, observationKeys: string[]): Promise<SightingRow[]> {
    if (observationKeys.length === 0) return [];
    const p = new ChParams();
    const sql = `
      SELECT observation_key, source, api_key_id, min(first_seen_us) AS first_seen, max(last_seen_us) AS last_seen, sum(sighting_count) AS n
      FROM agent_sightings
      WHERE project_id = ${p.str(projectId)} AND observation_key IN ${p.strs(observationKeys)}
      GROUP BY observation_key, source, api_key_id
      ORDER BY observation_key, first_seen, source, api_key_id`;
    const rows = await this.rows(sql, p);
    return rows.map((r) => ({
      observationKey: String(r.observation_key),
      source: String(r.source),
      apiKeyId: String(r.api_key_id),
      firstSeenUs: num(r.first_seen),
      lastSeenUs: num(r.last_seen),
      sightingCount: num(r.n),
    }));
  }

  async sightingEnvironments(projectId: string, observationKeys: string[], perKey: number): Promise<SightingEnvironmentRow[]> {
    if (observationKeys.length === 0) return [];
    const p = new ChParams();
    const sql = `
      SELECT observation_key, environment, min(first_seen_us) AS first_seen, max(last_seen_us) AS last_seen
      FROM agent_sighting_environments
      WHERE project_id = ${p.str(projectId)} AND observation_key IN ${p.strs(observationKeys)}
      GROUP BY observation_key, environment
      ORDER BY observation_key, last_seen DESC, environment
      LIMIT ${count(perKey)} BY observation_key`;
    const rows = await this.rows(sql, p);
    return rows.map((r) => ({
      observationKey: String(r.observation_key),
      environment: String(r.environment),
      firstSeenUs: num(r.first_seen),
      lastSeenUs: num(r.last_seen),
    }));
  }
}
