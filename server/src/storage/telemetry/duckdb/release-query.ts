/**
 * DuckDB read of the release a run declares (domains/evaluations/scoring/facts.ts `RunReleaseReader`):
 * its root span's `service.version` resource attribute. A span stored more than once is read as its first
 * ingested copy, as the agent reads do. A text or number value is the release (a number as its text); an absent, empty, boolean or structured value is no release.
 */
import type { RunReleaseReader } from '../../../domains/evaluations/scoring/facts.js';
import { Params, query } from './agent-runs-sql.js';
import { ingestRange } from './agent-runs-query.js';
import type { TelemetryDb } from './open.js';

/** JSON types a release may have (`json_type` names). */
const SCALAR_TYPES = new Set(['VARCHAR', 'BIGINT', 'UBIGINT', 'DOUBLE']);

export class DuckDbReleaseQuery implements RunReleaseReader {
  constructor(private readonly db: TelemetryDb) {}

  async rootRelease(projectId: string, runId: string, rootSpanId: string): Promise<string | null> {
    const [row] = await this.db.read(async (c) => {
      // Only where the trace's copies were ingested (its summary says), not a scan of every span.
      const range = await ingestRange(c, projectId, runId);
      if (!range) return [];
      const p = new Params();
      const sql = `
        SELECT json_extract_string(resource_attributes, '$."service.version"') AS release,
               json_type(resource_attributes, '$."service.version"') AS type
        FROM spans
        WHERE project_id = ${p.str(projectId)} AND trace_id = ${p.str(runId)} AND span_id = ${p.str(rootSpanId)}
          AND ingested_at_us BETWEEN ${p.int(range.lo)} AND ${p.int(range.hi)}
        ORDER BY ingested_at_us, start_us
        LIMIT 1`;
      return query(c, sql, p);
    });
    if (!row || typeof row.release !== 'string' || row.release === '') return null;
    return SCALAR_TYPES.has(String(row.type)) ? row.release : null;
  }
}
