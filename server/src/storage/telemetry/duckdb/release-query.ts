/**
 * DuckDB read of the release a run declares (domains/evaluations/scoring/facts.ts `RunReleaseReader`): its
 * root span's `gen_ai.agent.version` attribute, else the root's `service.version` resource attribute
 * (RELEASE_KEYS). A span stored more than once is read as its first ingested copy, as the agent reads do.
 * A text or number value is a release (a number as its text); an absent, empty, boolean or structured
 * value is none, and the next key is asked.
 */
import type { RunReleaseReader } from '../../../domains/evaluations/scoring/facts.js';
import { SPAN_ROWS, traceRows } from './agent-runs-query.js';
import type { TelemetryDb } from './open.js';

/** JSON types a release may have (`json_type` names). */
const SCALAR_TYPES = new Set(['VARCHAR', 'BIGINT', 'UBIGINT', 'DOUBLE']);

export class DuckDbReleaseQuery implements RunReleaseReader {
  constructor(private readonly db: TelemetryDb) {}

  async rootRelease(projectId: string, runId: string, rootSpanId: string): Promise<string | null> {
    // Through the index on the trace id, the root span's first ingested copy (agent-runs-query.ts `traceRows`).
    const rows = await this.db.read((c) =>
      traceRows(
        c,
        'spans',
        `span_id, start_us, ingested_at_us,
         json_extract_string(attributes, '$."gen_ai.agent.version"') AS agent_release, json_type(attributes, '$."gen_ai.agent.version"') AS agent_type,
         json_extract_string(resource_attributes, '$."service.version"') AS release, json_type(resource_attributes, '$."service.version"') AS type`,
        projectId,
        runId,
        SPAN_ROWS,
      ),
    );
    const row = rows.find((r) => r.span_id === rootSpanId);
    if (!row) return null;
    const valid = (v: unknown, type: unknown) => (typeof v === 'string' && v !== '' && SCALAR_TYPES.has(String(type)) ? v : null);
    return valid(row.agent_release, row.agent_type) ?? valid(row.release, row.type);
  }
}
