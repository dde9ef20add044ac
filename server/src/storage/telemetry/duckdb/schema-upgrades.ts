/**
 * One-time upgrades of a telemetry file written by an earlier version, run at open around the schema
 * statements (which only add what is missing).
 */
import { VARCHAR, listValue, LIST, type DuckDBConnection } from '@duckdb/node-api';
import { CONTENT_EVENTS } from '../../../domains/content/content-keys.js';
import { recomputeAllSessions } from './session-summaries.js';
import { transaction } from './traces-query.js';

/** Whether `table` exists and lacks `column` (read before the schema statements add it). */
export async function lacksColumn(c: DuckDBConnection, table: string, column: string): Promise<boolean> {
  const r = await c.runAndReadAll(
    `SELECT (SELECT count(*) FROM duckdb_tables() WHERE table_name = $t AND schema_name = 'main'),
            (SELECT count(*) FROM duckdb_columns() WHERE table_name = $t AND schema_name = 'main' AND column_name = $c)`,
    { t: table, c: column },
    { t: VARCHAR, c: VARCHAR },
  );
  const [tables, columns] = r.getRowsJS()[0] as [bigint, bigint];
  return tables > 0n && columns === 0n;
}

/** Adds `logs.body_class` to a file written before it existed and classifies the old rows, in one transaction. */
export async function addLogBodyClass(c: DuckDBConnection): Promise<number> {
  await c.run('BEGIN TRANSACTION');
  try {
    await c.run('ALTER TABLE logs ADD COLUMN body_class VARCHAR');
    const n = await classifyOldLogBodies(c);
    await c.run('COMMIT');
    return n;
  } catch (e) {
    await c.run('ROLLBACK').catch(() => undefined);
    throw e;
  }
}

/**
 * Logs stored before log bodies were classified have no `body_class`: a GenAI event's body among them would be
 * served as an ordinary log's. Those that name their event in the `event.name` attribute (the older
 * instrumentations' way) get their class here, once, when the column is added; the content policy then
 * governs their reads, body search and erasure like new ones. Records that named it only in the record's
 * `event_name` field cannot be told apart (that field was not stored then). Returns the rows classified.
 */
async function classifyOldLogBodies(c: DuckDBConnection): Promise<number> {
  const name = `lower(json_extract_string(attributes, '$."event.name"'))`;
  const cases = CONTENT_EVENTS.map((_, i) => `WHEN $e${i} THEN $c${i}`).join(' ');
  const values: Record<string, ReturnType<typeof listValue> | string> = { names: listValue(CONTENT_EVENTS.map((e) => e.eventName)) };
  const types: Record<string, typeof VARCHAR | ReturnType<typeof LIST>> = { names: LIST(VARCHAR) };
  CONTENT_EVENTS.forEach((e, i) => {
    values[`e${i}`] = e.eventName;
    values[`c${i}`] = e.contentClass;
    types[`e${i}`] = VARCHAR;
    types[`c${i}`] = VARCHAR;
  });
  const r = await c.run(
    `UPDATE logs SET body_class = CASE ${name} ${cases} END
     WHERE body_class IS NULL AND body IS NOT NULL AND list_contains($names, ${name})`,
    values,
    types,
  );
  return Number(r.rowsChanged);
}

/**
 * Adds `session_summaries.call_totals` (a session's model calls summed by model, priced when read) to a file
 * written before it existed, and computes it for every stored session from its runs, in one transaction.
 */
export async function addSessionCallTotals(c: DuckDBConnection): Promise<void> {
  await transaction(c, async () => {
    await c.run('ALTER TABLE session_summaries ADD COLUMN call_totals VARCHAR');
    await recomputeAllSessions(c);
  });
}
