/**
 * Deleting a project's telemetry on ClickHouse (project-data.ts): every row of the project goes from every table
 * of the schema, summaries too; another project's rows stay, in every table.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestChDb, type TestChDb } from '../../../testing/clickhouse.js';
import { deleteChProjectTelemetry } from './project-data.js';
import { TABLES } from './schema.js';

let db: TestChDb;
beforeAll(async () => {
  db = await openTestChDb();
});
afterAll(() => db?.drop());

/** Rows of the project in each table (every version and copy, not only those a read takes). */
async function rowsByTable(projectId: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const t of TABLES) {
    const [r] = await db.client.query<{ n: string }>(`SELECT count() AS n FROM ${t.name} WHERE project_id = {p:String}`, { p: projectId });
    out[t.name] = Number(r.n);
  }
  return out;
}

describe('deleteChProjectTelemetry', () => {
  it("removes every row of the project from every table and leaves another project's rows", async () => {
    // One row per table and project, the columns a row does not name at their defaults.
    for (const t of TABLES) await db.client.insert(t.name, [{ project_id: 'gone' }, { project_id: 'kept' }]);
    const one = Object.fromEntries(TABLES.map((t) => [t.name, 1]));
    expect(await rowsByTable('gone')).toEqual(one);
    expect(await rowsByTable('kept')).toEqual(one);

    await deleteChProjectTelemetry(db, 'gone');
    expect(await rowsByTable('gone')).toEqual(Object.fromEntries(TABLES.map((t) => [t.name, 0])));
    expect(await rowsByTable('kept')).toEqual(one);

    // Again: nothing left to delete, nothing else touched.
    await deleteChProjectTelemetry(db, 'gone');
    expect(await rowsByTable('kept')).toEqual(one);
  });
});
