/**
 * ClickHouse read of the release a run declares (domains/evaluations/scoring/facts.ts `RunReleaseReader`), as the
 * embedded one (duckdb/release-query.ts): its root span's `service.version` resource attribute. The root is one
 * point of the `spans` ordering key (project, trace, span); a span stored more than once is read as its first
 * ingested copy, and a deleted trace (a `trace_tombstones` row) declares none. A text or number value is the
 * release (a number as its JSON text); an absent, empty, boolean, null or structured value is no release.
 */
import type { RunReleaseReader } from '../../../domains/evaluations/scoring/facts.js';
import { ChParams, LOCAL_SUBQUERIES, notTombstoned } from './agent-runs-sql.js';
import type { ChTelemetryDb } from './db.js';

/** `JSONType` names of the values that are a release. */
const NUMBER_TYPES = new Set(['Int64', 'UInt64', 'Double']);

export class ChReleaseQuery implements RunReleaseReader {
  constructor(private readonly db: ChTelemetryDb) {}

  async rootRelease(projectId: string, runId: string, rootSpanId: string): Promise<string | null> {
    const p = new ChParams();
    const project = p.str(projectId);
    const key = p.str('service.version');
    const sql = `
      SELECT JSONType(resource_attributes, ${key}) AS type,
             JSONExtractString(resource_attributes, ${key}) AS text,
             JSONExtractRaw(resource_attributes, ${key}) AS raw
      FROM spans
      WHERE project_id = ${project} AND trace_id = ${p.str(runId)} AND span_id = ${p.str(rootSpanId)} AND ${notTombstoned(project)}
      ORDER BY ingested_at_us, start_us
      LIMIT 1 ${LOCAL_SUBQUERIES}`;
    const [row] = await this.db.client.query<{ type: string; text: string; raw: string }>(sql, p.values);
    if (!row) return null;
    const release = row.type === 'String' ? row.text : NUMBER_TYPES.has(row.type) ? row.raw : '';
    return release === '' ? null : release;
  }
}
