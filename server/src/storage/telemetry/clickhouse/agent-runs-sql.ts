/**
 * The SQL pieces of the ClickHouse agent reads (agent-runs-query.ts): bound `{name:Type}` parameters, the
 * conditions every read shares (tombstoned traces left out), and the row conversions. 64-bit integers come
 * back as JSON strings (client.ts): times and counts are below 2^53 and read as numbers.
 */
import type { RunFilter } from '../../../domains/agent-runs/store.js';
export { RUN_COLUMNS, STEP_COLUMNS, bool, healthOf, num, numOrNull, strOrNull, toRunRow, toStepRow, usageOf, usageRow, type UsageTuple } from '../row-mappers.js';

/** Bound parameters with generated names: each value is sent apart from the SQL and referenced by its name. */
export class ChParams {
  readonly values: Record<string, unknown> = {};
  private n = 0;
  private add(v: unknown, type: string): string {
    const k = `p${this.n++}`;
    this.values[k] = v;
    return `{${k}:${type}}`;
  }
  str(v: string): string {
    return this.add(v, 'String');
  }
  int(v: number): string {
    return this.add(Math.trunc(v), 'Int64');
  }
  strs(v: readonly string[]): string {
    return this.add([...v], 'Array(String)');
  }
}

/** A row count spliced into LIMIT (a number the code computed, never text). */
export const count = (n: number): string => String(Math.max(0, Math.trunc(n)));

/**
 * Where a subquery of a distributed table runs (cluster mode): every table is sharded by project and every
 * read is of one project, so the subqueries and joins read the shard's local tables. No effect on one server.
 */
export const LOCAL_SUBQUERIES = `SETTINGS distributed_product_mode = 'local'`;

/** `trace_id` is no deleted trace of the project (`project` is the bound project). */
export const notTombstoned = (project: string, column = 'trace_id'): string =>
  `${column} NOT IN (SELECT trace_id FROM trace_tombstones WHERE project_id = ${project})`;

/** The conditions of a run filter on `run_summaries` columns (read with FINAL). */
export function runWhere(p: ChParams, f: RunFilter): string[] {
  const project = p.str(f.projectId);
  const where = [`project_id = ${project}`];
  if (f.traceIds) where.push(`trace_id IN ${p.strs(f.traceIds)}`);
  if (f.sessionKeys) where.push(`session_key IN ${p.strs(f.sessionKeys)}`);
  if (f.turnIds) where.push(`turn_id IN ${p.strs(f.turnIds)}`);
  if (f.observationKey !== undefined) where.push(`observation_key = ${p.str(f.observationKey)}`);
  if (f.sinceUs !== undefined) where.push(`start_us >= ${p.int(f.sinceUs)}`);
  if (f.untilUs !== undefined) where.push(`start_us <= ${p.int(f.untilUs)}`);
  if (f.statuses) where.push(`status IN ${p.strs(f.statuses)}`);
  where.push(notTombstoned(project));
  return where;
}

