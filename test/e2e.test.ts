/**
 * End to end over real HTTP: the service started as a user starts it, the official OpenTelemetry
 * metrics SDK exporting to it, and the `svc` binary reading the values back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { spawnSvc, tempConfigHome } from '../cli/src/testing/fake-api.js';
import { startServer, stopServer, type ServerProcess } from '../server/src/testing/server-process.js';


describe('first start, restart and shutdown', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-boot-'));
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('first start creates an org, a project and an owner key printed once; a later start never changes them; SIGTERM exits cleanly', async () => {
    const first = await startServer({ SVC_DATA_DIR: dataDir });
    const key = /^export SVC_API_KEY=(svc_\S+)$/m.exec(first.stderr())?.[1];
    expect(key).toBeDefined();
    const headers = { 'x-svc-api-key': key! };
    expect((await (await fetch(`${first.base}/readyz`)).json()).status).toBe('ready');
    const projects = await (await fetch(`${first.base}/api/v1/projects`, { headers })).json();
    expect(projects.projects).toHaveLength(1);
    first.child.kill('SIGTERM');
    expect(await first.exited).toEqual({ code: 0, signal: null });

    const second = await startServer({ SVC_DATA_DIR: dataDir, SVC_INIT_API_KEY: 'svc_a_different_key_0123456789', SVC_INIT_PROJECT_ID: 'other' });
    try {
      expect(second.stderr()).not.toContain('SVC_API_KEY');
      expect((await fetch(`${second.base}/api/v1/projects`, { headers })).status).toBe(200);
      const again = await (await fetch(`${second.base}/api/v1/projects`, { headers })).json();
      expect(again.projects).toEqual(projects.projects);
      const other = await fetch(`${second.base}/api/v1/projects`, { headers: { 'x-svc-api-key': 'svc_a_different_key_0123456789' } });
      expect(other.status).toBe(401);
    } finally {
      second.child.kill('SIGTERM');
      await second.exited;
    }
  });
});

describe('OpenTelemetry SDK -> service -> svc', () => {
  const KEY = 'svc_e2e_owner_key_0123456789abcdef';
  const PROJECT = '6f1c1d7e-9b5a-4c2e-8f7a-0a1b2c3d4e5f';
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-e2e-'));
  const home = tempConfigHome();
  let server: ServerProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    server = await startServer({ SVC_DATA_DIR: dataDir, SVC_INIT_API_KEY: KEY, SVC_INIT_PROJECT_ID: PROJECT });
    env = { ...home.env, SVC_API_URL: server.base, SVC_API_KEY: KEY, SVC_PROJECT: PROJECT };

    const provider = new MeterProvider({
      resource: resourceFromAttributes({ 'service.name': 'checkout', 'deployment.environment.name': 'prod' }),
      readers: [
        new PeriodicExportingMetricReader({
          exporter: new OTLPMetricExporter({ url: `${server.base}/v1/metrics?project_id=${PROJECT}`, headers: { 'x-svc-api-key': KEY } }),
          exportIntervalMillis: 60_000,
        }),
      ],
    });
    const meter = provider.getMeter('e2e');
    const requests = meter.createCounter('http.requests');
    requests.add(3, { route: '/pay' });
    requests.add(4, { route: '/cart' });
    const latency = meter.createHistogram('http.latency', { unit: 'ms', description: 'time to answer a request', advice: { explicitBucketBoundaries: [10, 100] } });
    for (const v of [5, 50, 500, 7]) latency.record(v, { route: '/pay' });
    meter.createObservableGauge('queue.depth').addCallback((r) => r.observe(42, { queue: 'emails' }));
    await provider.forceFlush();
    await provider.shutdown();
  });

  afterAll(async () => {
    await stopServer(server, dataDir);
    home.cleanup();
  });

  it('svc metrics list shows every metric with its type, and the unit and description its instrument sent', async () => {
    const r = await spawnSvc(['metrics', 'list'], env);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.metrics).toEqual([
      { name: 'http.latency', type: 'histogram', unit: 'ms', description: 'time to answer a request' },
      { name: 'http.requests', type: 'counter' },
      { name: 'queue.depth', type: 'gauge' },
    ]);
  });

  it('svc metrics query reads the counter grouped by a label', async () => {
    const r = await spawnSvc(['metrics', 'query', 'http.requests', '--agg', 'sum', '--interval', '1m', '--group-by', 'route', '--since', '10m'], env);
    expect(r.code).toBe(0);
    const series = JSON.parse(r.stdout).series as { labels: Record<string, string>; points: { value: number }[] }[];
    const byRoute = Object.fromEntries(series.map((s) => [s.labels.route, s.points.reduce((a, p) => a + p.value, 0)]));
    expect(byRoute).toEqual({ '/cart': 4, '/pay': 3 });
  });

  it('svc metrics labels lists label keys and values', async () => {
    const r = await spawnSvc(['metrics', 'labels', 'queue.depth'], env);
    expect(JSON.parse(r.stdout)).toEqual({ labels: [{ name: 'queue', values: ['emails'] }] });
  });

  it('the histogram reads back with its buckets through the API', async () => {
    const now = Date.now();
    const res = await fetch(`${server.base}/api/v1/metrics/histogram?project_id=${PROJECT}`, {
      method: 'POST',
      headers: { 'x-svc-api-key': KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ metric_name: 'http.latency', step: '1h', time_range: { start: new Date(now - 3_600_000).toISOString(), end: new Date(now).toISOString() } }),
    });
    const cells = (await res.json()).cells as { upper_bound: number; upper_bound_infinite: boolean; count: number }[];
    const total = (pred: (c: (typeof cells)[0]) => boolean) => cells.filter(pred).reduce((a, c) => a + Number(c.count), 0);
    expect(total((c) => !c.upper_bound_infinite && c.upper_bound === 10)).toBe(2);
    expect(total((c) => !c.upper_bound_infinite && c.upper_bound === 100)).toBe(1);
    expect(total((c) => c.upper_bound_infinite)).toBe(1);
  });

  it('the SDK\'s histogram aggregates from its count, sum and buckets: count is the 4 recordings, not the number of exports', async () => {
    const read = async (agg: string) => {
      const r = await spawnSvc(['metrics', 'query', 'http.latency', '--agg', agg, '--interval', '1h', '--since', '10m'], env);
      expect(r.code, r.stderr).toBe(0);
      return JSON.parse(r.stdout);
    };
    const total = (body: { series: { points: { value: number }[] }[] }) => body.series.flatMap((s) => s.points).reduce((a, p) => a + p.value, 0);
    const count = await read('count');
    expect(count).toMatchObject({ type: 'histogram', unit: 'ms', description: 'time to answer a request', estimated: false });
    expect(total(count)).toBe(4);
    expect(total(await read('sum'))).toBe(5 + 50 + 500 + 7);
    const p50 = await read('p50');
    expect(p50.estimated).toBe(true);
  });

  it('svc metrics histogram reads the same buckets (per bucket, not cumulative)', async () => {
    const r = await spawnSvc(['metrics', 'histogram', 'http.latency', '--step', '1h', '--since', '1h', '--env', 'prod'], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    const cells = JSON.parse(r.stdout).cells as { upper_bound: number; upper_bound_infinite: boolean; count: number }[];
    const total = (pred: (c: (typeof cells)[0]) => boolean) => cells.filter(pred).reduce((a, c) => a + Number(c.count), 0);
    expect([10, 100].map((b) => total((c) => !c.upper_bound_infinite && c.upper_bound === b))).toEqual([2, 1]);
    expect(total((c) => c.upper_bound_infinite)).toBe(1);
  });

  it('the gauge value reads back through svc with the environment filter', async () => {
    const r = await spawnSvc(['metrics', 'query', 'queue.depth', '--agg', 'max', '--env', 'prod', '--since', '10m'], env);
    const points = JSON.parse(r.stdout).series[0].points;
    expect(points.map((p: { value: number }) => p.value)).toEqual([42]);
  });

  it('a project-bound key conflicting with the active project exits 4 with HTTP 403', async () => {
    const minted = await (
      await fetch(`${server.base}/api/v1/projects`, { method: 'POST', headers: { 'x-svc-api-key': KEY, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'other' }) })
    ).json();
    const key = await (
      await fetch(`${server.base}/api/v1/account/api-keys`, {
        method: 'POST',
        headers: { 'x-svc-api-key': KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bound', scopes: ['metrics:read'], project_id: minted.id }),
      })
    ).json();
    const r = await spawnSvc(['metrics', 'list'], { ...env, SVC_API_KEY: key.key });
    expect(r.code).toBe(4);
    expect(JSON.parse(r.stderr)).toMatchObject({ error: 'permission_denied', status: 403, exit_code: 4 });
  });

  it('svc metrics delete --yes removes the metric durably', async () => {
    expect((await spawnSvc(['metrics', 'delete', 'queue.depth'], env)).code).toBe(2);
    const r = await spawnSvc(['metrics', 'delete', 'queue.depth', '--yes'], env);
    expect(r.code).toBe(0);
    const names = JSON.parse((await spawnSvc(['metrics', 'list'], env)).stdout).metrics.map((m: { name: string }) => m.name);
    expect(names).toEqual(['http.latency', 'http.requests']);
  });
});
