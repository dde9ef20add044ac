/**
 * DuckDB adapter of the model-call reads (domains/llm/calls-store.ts): the model calls of a project, inside
 * an agent run or not, listed or grouped by usage. A model call is what the agent reads count as one
 * (docs/agent-model.md "Model calls"): a usage step (`usageStep`) that reports no totals of usage steps
 * below it (`totalsAmong`), so both read the same calls. Each span is read once (`spansOnce`: the first
 * ingested copy of a span stored twice). Every user value is a bound parameter.
 */
import type { LlmCallFilter, LlmCallPosition, LlmCallRow, LlmCallsStore, LlmUsageRow } from '../../../domains/llm/calls-store.js';
import { Params, num, query, spansOnce, strOrNull } from './agent-runs-sql.js';
import { totalsAmong, usageOf, usageStep } from './model-calls-sql.js';
import type { TelemetryDb } from './open.js';


const USAGE_COLUMNS = 'provider, model, input_tokens, output_tokens, reported_cost_nanos';

/**
 * The CTEs `cand` (the usage steps the filter selects, each once, with `columns`), the totals among them
 * (`tot`, totalsAmong) and `calls` (the model calls: `cand` without the totals).
 */
function callsCte(p: Params, f: LlmCallFilter, columns: string, extra: string[] = []): string {
  const project = p.str(f.projectId);
  const where = [usageStep(), `start_us >= ${p.int(f.sinceUs)}`, `start_us <= ${p.int(f.untilUs)}`, ...extra];
  if (f.model !== undefined) where.push(`model = ${p.str(f.model)}`);
  if (f.provider !== undefined) where.push(`provider = ${p.str(f.provider)}`);
  if (f.serviceName !== undefined) where.push(`service_name = ${p.str(f.serviceName)}`);
  // Copies of one span share these columns, so the conditions pick every copy or none.
  const cols = [...new Set(['trace_id', 'span_id', ...columns.split(',').map((c) => c.trim())])].join(', ');
  return `
    cand AS MATERIALIZED (${spansOnce(project, where.join(' AND '), cols)}),
    ${totalsAmong(project, 'cand')},
    calls AS (SELECT * FROM cand ANTI JOIN tot USING (trace_id, span_id))`;
}

export class DuckDbLlmCallsQuery implements LlmCallsStore {
  constructor(private readonly db: TelemetryDb) {}

  async calls(f: LlmCallFilter, opts: { after?: LlmCallPosition; limit: number }): Promise<LlmCallRow[]> {
    const p = new Params();
    const after = opts.after
      ? [`(start_us, span_id, trace_id) < (${p.int(opts.after.startUs)}, ${p.str(opts.after.spanId)}, ${p.str(opts.after.traceId)})`]
      : [];
    const columns = `trace_id, span_id, start_us, end_us, canonical_operation, service_name, status_code, ${USAGE_COLUMNS}`;
    const sql = `
      WITH ${callsCte(p, f, columns, after)}
      SELECT ${columns} FROM calls
      ORDER BY start_us DESC, span_id DESC, trace_id DESC
      LIMIT ${p.int(opts.limit)}`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({
      traceId: String(r.trace_id),
      spanId: String(r.span_id),
      startUs: num(r.start_us),
      endUs: num(r.end_us),
      canonicalOperation: String(r.canonical_operation),
      serviceName: strOrNull(r.service_name),
      statusCode: String(r.status_code),
      ...usageOf(r),
    }));
  }

  async usage(f: LlmCallFilter): Promise<LlmUsageRow[]> {
    const p = new Params();
    const sql = `WITH ${callsCte(p, f, USAGE_COLUMNS)} SELECT ${USAGE_COLUMNS}, count(*) AS calls FROM calls GROUP BY ALL`;
    const rows = await this.db.read((c) => query(c, sql, p));
    return rows.map((r) => ({ ...usageOf(r), calls: num(r.calls) }));
  }
}
