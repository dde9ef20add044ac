/**
 * DuckDB read of the recorded operations of one memory item (domains/memory/store.ts, docs/memory.md):
 * the memory steps whose `svc.memory.item.id` is the item key, each with its run's session and turn.
 * A span stored more than once is read once (its first ingested copy), as the agent reads do; the session
 * key and turn id of a step are those of its run (the root's own, else the first span of the trace that
 * has one, docs/agent-model.md), and for a trace that is no run, of the first span of the trace that has one.
 */
import { MEMORY_OPERATIONS } from '../../../domains/agent-runs/model.js';
import type { MemoryOperationRow, MemoryOperations, MemoryOperationsReader } from '../../../domains/memory/store.js';
import { Params, litList, num, query, rootRowsCte, strOrNull } from './agent-runs-sql.js';
import type { TelemetryDb } from './open.js';

const MEMORY_OPS = litList(MEMORY_OPERATIONS);
/** The operations that write an item (the recording agent is the one of the earliest of them). */
const WRITE_OPS = litList(['CREATE_MEMORY', 'UPDATE_MEMORY', 'UPSERT_MEMORY'].map((o) => `CANONICAL_OPERATION_${o}`));

/** The CTEs `mem` (the item's memory steps, each once) and `entries` (with run, session, turn and agent). */
function entriesCte(p: Params, projectId: string, itemKey: string, notBeforeUs?: number): string {
  const project = p.str(projectId);
  const key = p.str(itemKey);
  // Retention: a step that started before the cut-off is no operation any more (its copies all started then).
  const since = notBeforeUs !== undefined ? `AND start_us >= ${p.int(notBeforeUs)}` : '';
  return `
    mem AS MATERIALIZED (
      SELECT trace_id, span_id, start_us, canonical_operation, memory_store, memory_provenance, memory_trust_label, observation_key
      FROM spans WHERE project_id = ${project} AND memory_item_id = ${key} AND canonical_operation IN (${MEMORY_OPS}) ${since}
      QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY ingested_at_us, start_us) = 1
    ),
    ${rootRowsCte(project, 'trace_id IN (SELECT trace_id FROM mem)', ['session_key', 'turn_id', 'observation_key'], 'rr')},
    firsts AS (
      SELECT x.trace_id,
        first(x.session_key ORDER BY x.start_us, x.span_id, x.ingested_at_us) FILTER (WHERE x.session_key IS NOT NULL) AS session_key,
        first(x.turn_id ORDER BY x.start_us, x.span_id, x.ingested_at_us) FILTER (WHERE x.turn_id IS NOT NULL) AS turn_id
      FROM spans x
      WHERE x.project_id = ${project} AND x.trace_id IN (SELECT trace_id FROM mem) AND (x.session_key IS NOT NULL OR x.turn_id IS NOT NULL)
      GROUP BY x.trace_id
    ),
    entries AS (
      SELECT m.*, rr.trace_id IS NOT NULL AS in_run,
        coalesce(rr.r.session_key, f.session_key) AS session_key,
        coalesce(rr.r.turn_id, f.turn_id) AS turn_id,
        coalesce(m.observation_key, rr.r.observation_key) AS agent_key
      FROM mem m LEFT JOIN rr ON rr.trace_id = m.trace_id LEFT JOIN firsts f ON f.trace_id = m.trace_id
    )`;
}

export class DuckDbMemoryQuery implements MemoryOperationsReader {
  constructor(private readonly db: TelemetryDb) {}

  async operations(projectId: string, itemKey: string, limit: number, notBeforeUs?: number): Promise<MemoryOperations> {
    const p = new Params();
    const sql = `
      WITH ${entriesCte(p, projectId, itemKey, notBeforeUs)},
      sessions AS (SELECT count(DISTINCT session_key) AS n FROM entries)
      SELECT e.*, s.n AS distinct_sessions FROM entries e, sessions s
      ORDER BY e.start_us, e.trace_id, e.span_id
      LIMIT ${p.int(limit + 1)}`;
    const p2 = new Params();
    const countSql = `WITH ${entriesCte(p2, projectId, itemKey, notBeforeUs)} SELECT count(DISTINCT session_key) AS n FROM entries`;
    return this.db.read(async (c) => {
      const rows = await query(c, sql, p);
      // With no row the session count is read on its own (zero operations: zero sessions, answered).
      const distinctSessions = rows.length ? num(rows[0].distinct_sessions) : num((await query(c, countSql, p2))[0].n);
      return { rows: rows.map(toRow), distinctSessions };
    });
  }

  async recordingAgent(projectId: string, itemKey: string, notBeforeUs?: number): Promise<string | null> {
    const p = new Params();
    const sql = `
      WITH ${entriesCte(p, projectId, itemKey, notBeforeUs)}
      SELECT agent_key FROM entries WHERE agent_key IS NOT NULL
      ORDER BY canonical_operation IN (${WRITE_OPS}) DESC, start_us, trace_id, span_id
      LIMIT 1`;
    const rows = await this.db.read((c) => query(c, sql, p));
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
    inRun: r.in_run === true,
    observationKey: strOrNull(r.agent_key),
  };
}
