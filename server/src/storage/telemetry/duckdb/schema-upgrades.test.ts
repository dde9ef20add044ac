import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openTelemetryDb } from './open.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

/** A data dir whose file is as an earlier version left it: the current schema, with `before` run on it. */
async function olderFile(before: (db: Awaited<ReturnType<typeof openTelemetryDb>>) => Promise<void>): Promise<string> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-upgrade-'));
  dirs.push(dataDir);
  const db = await openTelemetryDb({ dataDir });
  await before(db);
  await db.close();
  return dataDir;
}

describe('a telemetry file written before log bodies were classified', () => {
  it('gets logs.body_class at open, and its GenAI event bodies named by the event.name attribute are classified; other logs stay ordinary', async () => {
    // The file as the previous version left it: the current schema without the column.
    const dataDir = await olderFile(async (db) => {
      await db.writer.run('ALTER TABLE logs DROP COLUMN body_class');
      const row = (id: string, body: string | null, attrs: object) =>
        `('p1', '${id}', 1, NULL, 9, 'INFO', ${body === null ? 'NULL' : `'${body}'`}, NULL, NULL, 'svc', NULL, NULL, '${JSON.stringify(attrs)}', '{}', 1)`;
      await db.writer.run(`INSERT INTO logs VALUES
        ${row('user', 'what is the weather', { 'event.name': 'gen_ai.user.message' })},
        ${row('choice', '{"message":"sunny"}', { 'event.name': 'GEN_AI.CHOICE' })},
        ${row('tool', '{"content":"22C"}', { 'event.name': 'gen_ai.tool.message' })},
        ${row('plain', 'GET /orders 200', { 'http.route': '/orders' })},
        ${row('other-event', 'clicked', { 'event.name': 'browser.click' })},
        ${row('no-body', null, { 'event.name': 'gen_ai.user.message' })}`);
    });

    let db = await openTelemetryDb({ dataDir });
    const classes = Object.fromEntries(
      (await db.writer.runAndReadAll('SELECT log_id, body_class FROM logs ORDER BY log_id')).getRowsJS().map(([id, c]) => [id, c]),
    );
    expect(classes).toEqual({ user: 'model_transcript', choice: 'model_transcript', tool: 'tool_arguments', plain: null, 'other-event': null, 'no-body': null });
    await db.close();

    // Opening again changes nothing (the upgrade ran once, in the transaction that added the column).
    db = await openTelemetryDb({ dataDir });
    expect((await db.writer.runAndReadAll("SELECT count(*) FROM logs WHERE body_class IS NOT NULL")).getRowsJS()).toEqual([[3n]]);
    await db.close();
  });
});

describe('a telemetry file written before sessions kept their model calls summed by model', () => {
  it('gets session_summaries.call_totals at open, computed from every session\'s runs, once', async () => {
    const dataDir = await olderFile(async (db) => {
      await db.writer.run('ALTER TABLE session_summaries DROP COLUMN call_totals');
      const run = (trace: string, session: string, usage: string) =>
        `('p1', '${trace}', 'r', 'bot', NULL, NULL, 'svc', NULL, '${session}', NULL, 'completed', NULL, 1, 2, 2, 0, 0, 1, 0, 0, '${usage}')`;
      await db.writer.run(`INSERT INTO run_summaries VALUES
        ${run('t1', 's1', '[["openai","m",10,2,null,1]]')},
        ${run('t2', 's1', '[["openai","m",5,null,null,2],[null,"x",null,null,7,1]]')},
        ${run('t3', 's2', '[]')}`);
      await db.writer.run("INSERT INTO session_summaries VALUES ('p1', 's1', 2, 0, 1, 2), ('p1', 's2', 1, 0, 1, 2)");
    });

    let db = await openTelemetryDb({ dataDir });
    const totals = async () => (await db.writer.runAndReadAll('SELECT session_key, call_totals, run_count FROM session_summaries ORDER BY session_key')).getRowsJS();
    expect(await totals()).toEqual([
      ['s1', '[7,1,0,[["openai","m",20,2,3]]]', 2n],
      ['s2', '[0,0,0,[]]', 1n],
    ]);
    await db.close();
    db = await openTelemetryDb({ dataDir });
    expect((await totals()).length).toBe(2);
    await db.close();
  });
});
