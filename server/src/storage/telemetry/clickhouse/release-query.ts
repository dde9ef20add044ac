/**
 * ClickHouse read of the release a run declares (domains/evaluations/scoring/facts.ts `RunReleaseReader`), as the
 * embedded one (duckdb/release-query.ts): its root span's `gen_ai.agent.version` attribute, else its
 * `service.version` resource attribute. The root is one
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
    const agentKey = p.str('gen_ai.agent.version');
    const sql = `
      SELECT JSONType(resource_attributes, ${key}) AS type,
             JSONExtractString(resource_attributes, ${key}) AS text,
             JSONExtractRaw(resource_attributes, ${key}) AS raw,
             JSONType(attributes, ${agentKey}) AS agent_type,
             JSONExtractString(attributes, ${agentKey}) AS agent_text,
             JSONExtractRaw(attributes, ${agentKey}) AS agent_raw
      FROM spans
      WHERE project_id = ${project} AND trace_id = ${p.str(runId)} AND span_id = ${p.str(rootSpanId)} AND ${notTombstoned(project)}
      ORDER BY ingested_at_us, start_us
      LIMIT 1 ${LOCAL_SUBQUERIES}`;
    const [row] = await this.db.client.query<{ type: string; text: string; raw: string; agent_type: string; agent_text: string; agent_raw: string }>(sql, p.values);
    if (!row) return null;
    const valid = (type: string, text: string, raw: string) => {
      const release = type === 'String' ? text : NUMBER_TYPES.has(type) ? raw : '';
      return release === '' ? null : release;
    };
    return valid(row.agent_type, row.agent_text, row.agent_raw) ?? valid(row.type, row.text, row.raw);
  }
}
