/**
 * ClickHouse read of the recorded operations of one memory item (domains/memory/store.ts, docs/memory.md), with
 * the observable behaviour of the embedded one (duckdb/memory-query.ts): the memory steps whose
 * `svc.memory.item.id` is the item key, each with its run's session and turn.
 *
 * - A span stored more than once is read once, as its first ingested copy (`LIMIT 1 BY`); steps of deleted
 *   traces (a `trace_tombstones` row) are left out.
 * - The run of a step's trace is its row in `run_summaries` (FINAL: the newest version, ended runs left out),
 *   which the spans writer keeps with the rules the embedded read applies to the spans (domains/agent-runs/
 *   summary.ts): whether the trace is a run, the root's observation key, and the session key and turn id with
 *   their fallbacks (the root's own, else the first span of the trace that has one). For a trace that is no
 *   run, the first span of the trace (by start, then span id) that has a session key or turn id gives them.
 * - The steps are found by a scan of the project's spans for the item id (the item id is no part of the
 *   ordering key); everything else is one range of the ordering key per trace of those steps.
 */
import { MEMORY_OPERATIONS } from '../../../domains/agent-runs/model.js';
import type { MemoryOperationRow, MemoryOperations, MemoryOperationsReader } from '../../../domains/memory/store.js';
import { ChParams, LOCAL_SUBQUERIES, count, notTombstoned, num, strOrNull } from './agent-runs-sql.js';
import type { ChTelemetryDb } from './db.js';

const lit = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
const MEMORY_OPS = MEMORY_OPERATIONS.map(lit).join(', ');
/** The operations that write an item (the recording agent is the one of the earliest of them). */
const WRITE_OPS = ['CREATE_MEMORY', 'UPDATE_MEMORY', 'UPSERT_MEMORY'].map((o) => lit(`CANONICAL_OPERATION_${o}`)).join(', ');

/** Unmatched rows of a LEFT JOIN read NULL (the run of a trace that is no run). */
const SETTINGS = `${LOCAL_SUBQUERIES}, join_use_nulls = 1`;

/**
 * The CTEs `mem` (the item's memory steps, each once), `rr` (their traces' runs), `firsts` (their traces' first
 * session key and turn id) and `entries` (the steps with run, session, turn and agent).
 */
function entriesCte(p: ChParams, projectId: string, itemKey: string, notBeforeUs?: number): string {
  const project = p.str(projectId);
  const key = p.str(itemKey);
  // Retention: a step that started before the cut-off is no operation any more.
  const since = notBeforeUs !== undefined ? `AND start_us >= ${p.int(notBeforeUs)}` : '';
  return `
    mem AS (
      SELECT trace_id, span_id, start_us, canonical_operation, memory_store, memory_provenance, memory_trust_label, observation_key
      FROM spans
      WHERE project_id = ${project} AND memory_item_id = ${key} AND canonical_operation IN (${MEMORY_OPS}) AND ${notTombstoned(project)} ${since}
      ORDER BY ingested_at_us, start_us LIMIT 1 BY trace_id, span_id
    ),
    rr AS (
      SELECT trace_id, session_key, turn_id, observation_key FROM run_summaries FINAL
      WHERE project_id = ${project} AND trace_id IN (SELECT trace_id FROM mem)
    ),
    firsts AS (
      SELECT trace_id,
        argMinIf(session_key, (start_us, span_id, ingested_at_us), session_key IS NOT NULL) AS first_session,
        argMinIf(turn_id, (start_us, span_id, ingested_at_us), turn_id IS NOT NULL) AS first_turn
      FROM spans
      WHERE project_id = ${project} AND trace_id IN (SELECT trace_id FROM mem) AND (session_key IS NOT NULL OR turn_id IS NOT NULL)
      GROUP BY trace_id
    ),
    entries AS (
      SELECT m.trace_id AS trace_id, m.span_id AS span_id, m.start_us AS start_us, m.canonical_operation AS canonical_operation,
        m.memory_store AS memory_store, m.memory_provenance AS memory_provenance, m.memory_trust_label AS memory_trust_label,
        rr.trace_id IS NOT NULL AS in_run,
        coalesce(rr.session_key, f.first_session) AS session_key,
        coalesce(rr.turn_id, f.first_turn) AS turn_id,
        coalesce(m.observation_key, rr.observation_key) AS agent_key
      FROM mem m LEFT JOIN rr ON rr.trace_id = m.trace_id LEFT JOIN firsts f ON f.trace_id = m.trace_id
    )`;
}

export class ChMemoryQuery implements MemoryOperationsReader {
  constructor(private readonly db: ChTelemetryDb) {}

  async operations(projectId: string, itemKey: string, limit: number, notBeforeUs?: number): Promise<MemoryOperations> {
    const p = new ChParams();
    // The session count is over every operation (a window over all of them), the rows only the first ones;
    // with no operation there are no sessions.
    const sql = `
      WITH ${entriesCte(p, projectId, itemKey, notBeforeUs)}
      SELECT *, uniqExact(session_key) OVER () AS distinct_sessions FROM entries
      ORDER BY start_us, trace_id, span_id
      LIMIT ${count(limit + 1)} ${SETTINGS}`;
    const rows = await this.db.client.query(sql, p.values);
    return { rows: rows.map(toRow), distinctSessions: rows.length ? num(rows[0].distinct_sessions) : 0 };
  }

  async recordingAgent(projectId: string, itemKey: string, notBeforeUs?: number): Promise<string | null> {
    const p = new ChParams();
    const sql = `
      WITH ${entriesCte(p, projectId, itemKey, notBeforeUs)}
      SELECT agent_key FROM entries WHERE agent_key IS NOT NULL
      ORDER BY canonical_operation IN (${WRITE_OPS}) DESC, start_us, trace_id, span_id
      LIMIT 1 ${SETTINGS}`;
    const rows = await this.db.client.query(sql, p.values);
    return rows.length ? strOrNull(rows[0].agent_key) : null;
  }
}

function toRow(r: Record<string, unknown>): MemoryOperationRow {
  return {
    traceId: String(r.trace_id),
    spanId: String(r.span_id),
    startUs: num(r.start_us),
    canonicalOperation: String(r.canonical_operation),
    store: strOrNull(r.memory_store),
    provenance: strOrNull(r.memory_provenance),
    declaredTrustLabel: strOrNull(r.memory_trust_label),
    sessionKey: strOrNull(r.session_key),
    turnId: strOrNull(r.turn_id),
    inRun: r.in_run === true || r.in_run === 1 || r.in_run === '1',
    observationKey: strOrNull(r.agent_key),
  };
}
