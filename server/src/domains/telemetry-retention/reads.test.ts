/**
 * Retention windows hide at once (docs/retention.md): with a window set, telemetry older than it leaves every
 * read of its signal, before any sweep, on both engines (this file runs in the clickhouse project too); other
 * projects and signals without a window are untouched; removing or lengthening a window hides nothing newer and
 * shows again what the sweep has not deleted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, testApp, type TestApp } from '../../testing/app.js';
import { ALL_SIGNALS, DAY, seedProject, setWindows, type Seeded } from './testing.js';

const NOW = '2026-03-10T12:00:00.000Z';
const nowMs = Date.parse(NOW);
const since = 'since=30d';

let t: TestApp;
let p: Seeded;
let q: Seeded;
beforeAll(async () => {
  t = await testApp({ clock: fixedClock(NOW) });
  p = await seedProject(t, nowMs);
  q = await seedProject(t, nowMs);
});
afterAll(async () => t.close());

const get = async (s: Seeded, url: string) => {
  const r = await t.call({ method: 'GET', url: `/api/v1${url}`, key: s.key });
  return { status: r.statusCode, body: r.statusCode === 200 ? r.json() : r.json() };
};
const post = async (s: Seeded, url: string, payload: object) => {
  const r = await t.call({ method: 'POST', url: `/api/v1${url}`, key: s.key, payload });
  return { status: r.statusCode, body: r.json() };
};
const window30d = { start: new Date(nowMs - 30 * DAY).toISOString(), end: NOW };

/** What every read of the project answers, reduced to what tells old data from new. */
async function everyRead(s: Seeded) {
  const traces = (await get(s, `/traces?${since}`)).body.traces.map((x: { trace_id: string }) => x.trace_id).sort();
  const services = (await get(s, `/services?${since}`)).body.services.map((x: { name: string; span_count: number; log_count: number }) => [x.name, x.span_count, x.log_count]);
  const runs = (await get(s, `/agent-runs?${since}`)).body.runs.map((r: { run_id: string }) => r.run_id).sort();
  const session = (await get(s, '/agent-sessions/s-1')).body;
  const sessions = (await get(s, `/agent-sessions?${since}`)).body.sessions.map((x: { session_key: string; run_count: number; started_at: string }) => [x.session_key, x.run_count, x.started_at]);
  const turns = (await get(s, '/agent-turns?session_key=s-1')).body.turns.map((x: { turn_id: string }) => x.turn_id).sort();
  const events = (await get(s, `/agent-events?session_key=s-1`)).body.events.map((e: { run_id: string }) => e.run_id);
  const calls = (await get(s, `/llm/calls?${since}`)).body.calls.map((c: { trace_id: string }) => c.trace_id);
  const usage = (await get(s, `/llm/usage?${since}`)).body.totals.model_calls;
  const memory = (await get(s, '/memory-items/mem-1/propagation')).body;
  const logs = (await get(s, `/logs?${since}`)).body.logs.map((l: { body: string }) => l.body).sort();
  const logCount = (await post(s, '/logs/aggregate', { since: '30d' })).body.series.map((x: { count: number }) => x.count);
  const fields = (await get(s, `/logs/fields?${since}`)).body;
  const patterns = (await get(s, `/logs/patterns?${since}`)).body.patterns.map((x: { count: number }) => x.count);
  const names = (await get(s, '/metrics/names?start_time=30d')).body.metrics.map((m: { name: string }) => m.name).sort();
  const labels = (await get(s, '/metrics/cpu/labels?start_time=30d')).body.labels;
  const total = (b: { series: { points: { value: number }[] }[] }) => b.series.flatMap((x) => x.points.map((pt) => pt.value)).reduce((a, v) => a + v, 0);
  const cpu = total((await post(s, '/metrics/aggregate', { metric_name: 'cpu', aggregation: 'sum', step: '7d', time_range: window30d })).body);
  const lat = (await post(s, '/metrics/histogram', { metric_name: 'lat', step: '7d', time_range: window30d })).body.cells.reduce((n: number, c: { count: number }) => n + Number(c.count), 0);
  const latCount = total((await post(s, '/metrics/aggregate', { metric_name: 'lat', aggregation: 'count', step: '7d', time_range: window30d })).body);
  return {
    traces,
    services,
    runs,
    session: session.run_count,
    sessions,
    turns,
    events,
    calls: calls.length,
    usage,
    memory: memory.entries?.length ?? memory,
    logs,
    logCount,
    logsScanned: fields.scanned,
    patterns,
    names,
    labels,
    cpu,
    lat,
    latCount,
  };
}

describe('a retention window hides what is older at once, on every read', () => {
  let before: Awaited<ReturnType<typeof everyRead>>;
  let other: Awaited<ReturnType<typeof everyRead>>;
  it('without a window everything is read (as today)', async () => {
    before = await everyRead(p);
    other = await everyRead(q);
    expect(before.traces).toEqual([p.old.traceId, p.fresh.traceId, p.across.traceId].sort());
    expect(before.runs).toEqual([p.old.traceId, p.fresh.traceId].sort());
    expect(before.session).toBe(2);
    expect(before.turns).toEqual(['turn-new', 'turn-old']);
    expect(before.events).toHaveLength(2);
    expect(before.calls).toBe(2);
    expect(before.usage).toBe(2);
    expect(before.memory).toBe(2);
    expect(before.logs).toEqual(['new line', 'old line']);
    expect(before.names).toEqual(['cpu', 'lat', 'old_only']);
    expect(before.cpu).toBe(101);
    expect(before.lat).toBe(12);
    expect(before.services).toEqual([['api', 8, 2]]);
    expect({ ...other, traces: [], runs: [], events: [] }).toEqual({ ...before, traces: [], runs: [], events: [] });
  });

  it('with a 7-day window on every signal, the old half leaves every read of the project at once; the new half and the other project stay', async () => {
    await setWindows(t, p, ALL_SIGNALS(7));
    const after = await everyRead(p);
    expect(after.traces).toEqual([p.fresh.traceId]); // the trace across the cut-off started before it
    expect(after.services).toEqual([['api', 4, 1]]); // spans that started since: 3 of the run, 1 of the trace across
    expect(after.runs).toEqual([p.fresh.traceId]);
    expect(after.session).toBe(1);
    expect(after.sessions).toEqual([['s-1', 1, new Date(p.fresh.atMs).toISOString().replace('Z', '000Z')]]);
    expect(after.turns).toEqual(['turn-new']);
    expect(after.events).toEqual([p.fresh.traceId]);
    expect(after.calls).toBe(1);
    expect(after.usage).toBe(1);
    expect(after.memory).toBe(1);
    expect(after.logs).toEqual(['new line']);
    expect(after.logsScanned).toBe(1);
    expect(after.patterns).toEqual([1]);
    expect(after.names).toEqual(['cpu', 'lat']);
    expect(after.labels).toEqual([{ name: 'host', values: ['new'] }]);
    expect(after.cpu).toBe(1);
    expect(after.lat).toBe(6);
    expect(after.latCount).toBe(6);
    expect(await everyRead(q)).toEqual(other);
  });

  it('detail reads of what is older are 404, as a deleted one; a trace across the cut-off shows its newer spans only', async () => {
    for (const url of [`/traces/${p.old.traceId}`, `/agent-runs/${p.old.traceId}`, `/agent-runs/${p.old.traceId}/graph`]) expect((await get(p, url)).status, url).toBe(404);
    expect((await get(p, `/agent-runs/${p.fresh.traceId}/graph`)).body.steps).toHaveLength(3);
    const across = (await get(p, `/traces/${p.across.traceId}`)).body;
    expect(across.spans.map((s: { span_id: string; orphan?: boolean }) => [s.span_id, s.orphan ?? false])).toEqual([[p.across.newSpanId, true]]);
    expect(across.span_count).toBe(1);
    const logs = (await get(p, `/logs?${since}`)).body.logs;
    const ctx = (await get(p, `/logs/${logs[0].log_id}/context`)).body;
    expect([...ctx.before, ...ctx.after].map((l: { body: string }) => l.body)).toEqual([]);
    const old = (await get(q, `/logs?${since}`)).body.logs.find((l: { body: string }) => l.body === 'old line');
    expect((await get(q, `/logs/${old.log_id}/context`)).status).toBe(200);
    // The old record of the windowed project, by id:
    const oldInP = await t.ctx.telemetry.logs.search({ projectId: p.projectId, filter: { attrs: [], text: 'old line' }, fromUs: 0, toUs: nowMs * 1000, order: 'desc', limit: 5 });
    expect(oldInP).toHaveLength(1);
    expect((await get(p, `/logs/${oldInP[0].logId}/context`)).status).toBe(404);
  });

  it('the live tail, the forecast history and the sampler scan start at the cut-off', async () => {
    const tail = await t.ctx.telemetryReads.logs.tail({ projectId: p.projectId, filter: { attrs: [] }, afterUs: 0, upToUs: Number.MAX_SAFE_INTEGER, exclude: [], limit: 10 });
    expect(tail.map((l) => l.body)).toEqual(['new line']);
    const untouched = await t.ctx.telemetryReads.logs.tail({ projectId: q.projectId, filter: { attrs: [] }, afterUs: 0, upToUs: Number.MAX_SAFE_INTEGER, exclude: [], limit: 10 });
    expect(untouched.map((l) => l.body).sort()).toEqual(['new line', 'old line']);
    const history = await t.ctx.telemetryReads.forecastHistory({ projectId: p.projectId, name: 'cpu', startMs: nowMs - 30 * DAY, endMs: nowMs, intervalMs: DAY });
    expect(history.map((o) => o.value)).toEqual([1]);
    const scan = await t.ctx.telemetryReads.agentRuns.runStarts(p.projectId, { after: { startUs: 0, traceId: '' }, beforeUs: nowMs * 1000, limit: 10 });
    expect(scan.map((r) => r.traceId)).toEqual([p.fresh.traceId]);
  });

  it('a window on one signal leaves the others as they are', async () => {
    await setWindows(t, p, [{ signal: 'SIGNAL_LOGS', retention_days: 7 }]);
    const r = await everyRead(p);
    expect(r.logs).toEqual(['new line']);
    expect(r.services).toEqual([['api', 8, 1]]);
    expect({ ...r, logs: before.logs, logCount: before.logCount, logsScanned: before.logsScanned, patterns: before.patterns, services: before.services }).toEqual(before);
  });

  it('removing or lengthening a window hides nothing newer and shows again what was only hidden (nothing was swept)', async () => {
    await setWindows(t, p, ALL_SIGNALS(30));
    expect(await everyRead(p)).toEqual(before);
    await setWindows(t, p, []);
    expect(await everyRead(p)).toEqual(before);
    expect((await get(p, `/projects/${p.projectId}/retention`)).body).toEqual({ project_id: p.projectId, windows: [] });
  });
});
