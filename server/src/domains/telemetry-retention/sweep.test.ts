/**
 * The retention sweep (job `retention.sweep`, docs/retention.md) on both engines (this file runs in the
 * clickhouse project too): rows older than a project's window are deleted at rest, per signal; newer rows,
 * other projects and signals without a window stay; summaries follow their spans; a second run finds nothing;
 * lengthening a window afterwards brings nothing back and hides nothing newer; time moving on ages rows out.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../jobs/testing.js';
import { fixedClock, testApp, type TestApp } from '../../testing/app.js';
import { rows } from '../../testing/rows-at-rest.js';
import { duckOf } from '../../testing/clickhouse.js';
import { logRequest, postLogs } from '../../ingest/otlp/traces-fixtures.js';
import { ns } from '../../ingest/otlp/test-fixtures.js';
import { DuckDbExpiry } from '../../storage/telemetry/duckdb/expiry.js';
import { ALL_SIGNALS, DAY, HOUR, seedProject, setWindows, type Seeded } from './testing.js';

const NOW = '2026-03-10T12:00:00.000Z';
const clock = fixedClock(NOW);
const nowMs = Date.parse(NOW);

let t: TestApp;
let p: Seeded;
let q: Seeded;
beforeAll(async () => {
  t = await testApp({ clock });
  p = await seedProject(t, nowMs);
  q = await seedProject(t, nowMs);
});
afterAll(async () => t.close());

const list = async (sql: string, projectId: string, column: string) => (await rows(t, sql, { p: projectId })).map((r) => String(r[column])).sort();

/** What is stored of the project, per table. */
async function atRest(s: Seeded) {
  return {
    spans: await list('SELECT span_id FROM spans WHERE project_id = $p', s.projectId, 'span_id'),
    spanEvents: (await rows(t, 'SELECT count(*) AS n FROM span_events WHERE project_id = $p', { p: s.projectId }))[0].n,
    traces: await list('SELECT trace_id FROM trace_summaries WHERE project_id = $p', s.projectId, 'trace_id'),
    runs: await list('SELECT trace_id FROM run_summaries WHERE project_id = $p', s.projectId, 'trace_id'),
    logs: await list('SELECT body FROM logs WHERE project_id = $p', s.projectId, 'body'),
    points: await list('SELECT value FROM metric_points WHERE project_id = $p', s.projectId, 'value'),
    histograms: (await rows(t, 'SELECT count(*) AS n FROM metric_histograms WHERE project_id = $p', { p: s.projectId }))[0].n,
  };
}

const sweep = () => t.ctx.telemetryRetention.sweep(clock.now(), t.ctx.telemetry.expiry);
const get = async (s: Seeded, url: string) => (await t.call({ method: 'GET', url: `/api/v1${url}`, key: s.key })).json();

describe('the retention sweep', () => {
  let other: Awaited<ReturnType<typeof atRest>>;

  it('without a window nothing is deleted', async () => {
    other = await atRest(q);
    expect(other.spans).toHaveLength(8);
    await sweep();
    expect(await atRest(p)).toMatchObject({ spans: expect.any(Array), logs: ['new line', 'old line'] });
    expect((await atRest(p)).spans).toHaveLength(8);
  });

  it('the hourly job deletes every row older than the window; newer rows and the other project stay; summaries follow their spans', async () => {
    await setWindows(t, p, ALL_SIGNALS(7));
    t.ctx.jobs.start();
    await waitFor(async () => (await t.ctx.jobs.list({ kind: 'retention.sweep', statuses: ['done'] })).length > 0, 'the retention sweep', 20_000);
    const stored = await atRest(p);
    const freshSpans = (await rows(t, 'SELECT span_id FROM spans WHERE project_id = $p AND trace_id = $t', { p: p.projectId, t: p.fresh.traceId })).map((r) => String(r.span_id));
    expect(freshSpans).toHaveLength(3);
    expect(stored.spans).toEqual([...freshSpans, p.across.newSpanId].sort());
    expect(Number(stored.spanEvents)).toBe(1);
    // The trace across the cut-off is summarized again from the span it keeps.
    expect(stored.traces).toEqual([p.fresh.traceId, p.across.traceId].sort());
    expect(stored.runs).toEqual([p.fresh.traceId]);
    const [across] = await rows(t, 'SELECT span_count, start_us FROM trace_summaries WHERE project_id = $p AND trace_id = $t', { p: p.projectId, t: p.across.traceId });
    expect(Number(across.span_count)).toBe(1);
    expect(Number(across.start_us)).toBe((nowMs - HOUR) * 1000);
    expect(stored.logs).toEqual(['new line']);
    expect(stored.points).toEqual(['1']);
    expect(Number(stored.histograms)).toBe(1);
    const duck = duckOf(t.ctx.telemetry);
    if (duck) {
      const sessions = await duck.read(async (c) => (await c.runAndReadAll(`SELECT run_count, start_us FROM session_summaries WHERE project_id = '${p.projectId}'`)).getRowObjectsJson());
      expect(sessions).toEqual([{ run_count: '1', start_us: String((nowMs - HOUR) * 1000) }]);
    }
    expect(await atRest(q)).toEqual(other);
    // Reads answer what they answered before the sweep (plus the trace across, now listed by the start it keeps).
    const listed = (await get(p, '/traces?since=30d')).traces.map((x: { trace_id: string; span_count: number }) => [x.trace_id, x.span_count]);
    expect(listed.sort()).toEqual([[p.across.traceId, 1], [p.fresh.traceId, 3]].sort());
    const session = await get(p, '/agent-sessions/s-1');
    expect(session.run_count).toBe(1);
  });

  it('a second run finds nothing to delete', async () => {
    const again = (await sweep()).filter((o) => o.projectId === p.projectId);
    expect(again.map((o) => o.signal)).toEqual(['SIGNAL_METRICS', 'SIGNAL_SPANS', 'SIGNAL_LOGS']);
    for (const o of again) for (const [table, n] of Object.entries(o.removed)) expect(n, `${o.signal} ${table}`).toBe(0);
  });

  it('lengthening the window afterwards brings back nothing deleted and hides nothing newer', async () => {
    await setWindows(t, p, ALL_SIGNALS(30));
    // A record 10 days old, inside the new window: kept by reads and by the sweep.
    const sent = await postLogs(t, logRequest({ 'service.name': 'api' }, [{ timeUnixNano: ns(nowMs - 10 * DAY), severityNumber: 9, body: { stringValue: 'late line' } }]), {
      format: 'json',
      key: p.key,
    });
    expect(sent.statusCode).toBe(200);
    await sweep();
    expect((await get(p, '/logs?since=30d')).logs.map((l: { body: string }) => l.body).sort()).toEqual(['late line', 'new line']);
    expect((await get(p, `/traces/${p.old.traceId}`)).error).toBe('not_found');
    expect((await get(p, '/agent-runs?since=30d')).runs.map((r: { run_id: string }) => r.run_id)).toEqual([p.fresh.traceId]);
    expect((await atRest(p)).logs).toEqual(['late line', 'new line']);
  });

  it('as time moves on, what ages past the window is hidden at once and deleted by the next sweep', async () => {
    await setWindows(t, p, ALL_SIGNALS(7));
    clock.advance(8 * DAY);
    expect((await get(p, '/logs?since=30d')).logs).toEqual([]);
    expect((await get(p, '/agent-runs?since=30d')).runs).toEqual([]);
    await sweep();
    expect(await atRest(p)).toEqual({ spans: [], spanEvents: expect.anything(), traces: [], runs: [], logs: [], points: [], histograms: expect.anything() });
    expect(Number((await atRest(p)).spanEvents)).toBe(0);
    expect(Number((await atRest(p)).histograms)).toBe(0);
    // The other project has no window: nothing of it went, however old.
    expect(await atRest(q)).toEqual(other);
  });
});

describe.skipIf(process.env.SVC_TEST_TELEMETRY === 'clickhouse')('the DuckDB sweep works in batches', () => {
  it('deletes every old row in batches of the given size, and the traces a batch at a time', async () => {
    const s = await seedProject(t, clock.now().getTime(), 20 * DAY);
    const expiry = new DuckDbExpiry(duckOf(t.ctx.telemetry)!, 2, 1);
    const cut = (clock.now().getTime() - 7 * DAY) * 1000;
    expect(await expiry.expire(s.projectId, 'SIGNAL_SPANS', cut)).toEqual({ traces: 1, spans: 4, span_events: 1, traces_rebuilt: 1 });
    expect(await expiry.expire(s.projectId, 'SIGNAL_METRICS', cut)).toEqual({ metric_points: 2, metric_histograms: 1 });
    expect(await expiry.expire(s.projectId, 'SIGNAL_LOGS', cut)).toEqual({ logs: 1 });
    expect(await expiry.expire(s.projectId, 'SIGNAL_SPANS', cut)).toEqual({ traces: 0, spans: 0, span_events: 0, traces_rebuilt: 0 });
  });
});
