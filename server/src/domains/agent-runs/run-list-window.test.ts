/**
 * The run list, newest first, whatever the window the store first looks in (docs/summaries.md "Reads": a
 * first page without `until` tries the hour before now, then the hour before the newest run, growing
 * eightfold): runs just now and hours ago, pages that end inside and outside that hour.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSpans, spanId, traceId } from '../../testing/agent-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

const MIN_US = 60_000_000;

describe('GET /agent-runs over runs started now and hours ago', () => {
  it('every page is the newest runs after its cursor, across the hour before now, without repeats', async () => {
    const p = await projectWithKey(t, ['agents:read']);
    const nowUs = Date.now() * 1000;
    // Three runs in the last hour, three from 3 to 5 hours ago.
    const agesMin = [5, 20, 50, 180, 240, 300];
    await insertSpans(
      t,
      p.projectId,
      agesMin.map((age, n) => ({ traceId: traceId(n + 1), spanId: spanId(n + 1), op: 'invoke_agent', agentName: 'bot', startUs: nowUs - age * MIN_US, endUs: nowUs - age * MIN_US + 1_000 })),
    );
    const newestFirst = agesMin.map((_, n) => traceId(n + 1));
    const ids = (body: { runs: { run_id: string }[] }) => body.runs.map((r) => r.run_id);
    const list = async (q: string) => {
      const res = await t.call({ method: 'GET', url: `/api/v1/agent-runs?project_id=${p.projectId}&${q}`, key: p.key });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    // A page the hour holds; a page that needs older runs.
    expect(ids(await list('limit=2'))).toEqual(newestFirst.slice(0, 2));
    expect(ids(await list('limit=5'))).toEqual(newestFirst.slice(0, 5));
    for (const limit of [1, 2, 4]) {
      const seen: string[] = [];
      let cursor: string | null = null;
      do {
        const body = await list(`limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
        seen.push(...ids(body));
        cursor = body.next_cursor;
      } while (cursor);
      expect(seen, `limit ${limit}`).toEqual(newestFirst);
    }
  });
});
