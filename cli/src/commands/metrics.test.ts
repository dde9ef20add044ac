import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from '../testing/cli-test-env.js';
import { runInProcess, stderrJson } from '../testing/fake-api.js';

const NOW = new Date('2024-06-01T12:00:00.000Z');

let api: CliTestEnv['api'];
let tmp: CliTestEnv['tmp'];
let env: CliTestEnv['env'];
beforeEach(async () => {
  ({ api, tmp, env } = await startCliTestEnv());
});
afterEach(() => stopCliTestEnv({ api, tmp }));

const svc = (args: string[], opts: { stdoutTTY?: boolean; env?: Record<string, string> } = {}) =>
  runInProcess(args, { env: opts.env ?? env, now: NOW, stdoutTTY: opts.stdoutTTY });

describe('svc metrics', () => {
  it('list sends project_id, start_time and end_time only when set', async () => {
    const body = { metrics: [{ name: 'http.requests', type: 'sum' }, { name: 'cpu' }], total_count: 2, retrieved_at: 'x' };
    api.on('GET', '/metrics/names', { body });
    const r = await svc(['metrics', 'list', '--project', 'p1', '--since', '6h', '--until', '2024-06-01T11:00:00+00:00']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(body);
    expect(api.requests[0].query).toEqual({
      project_id: ['p1'],
      start_time: ['2024-06-01T06:00:00.000Z'],
      end_time: ['2024-06-01T11:00:00+00:00'],
    });
    await svc(['metrics', 'list']);
    expect(api.requests[1].search).toBe('');
    const t = await svc(['metrics', 'list', '--no-color'], { stdoutTTY: true });
    expect(t.stdout).toBe(['NAME           TYPE', 'http.requests  sum', 'cpu            -', ''].join('\n'));
  });

  it('labels url-encodes the metric name', async () => {
    api.on('GET', '/metrics/a/b c/labels', { body: { labels: [{ name: 'env', values: ['prod', 'dev'] }] } });
    const r = await svc(['metrics', 'labels', 'a/b c', '--since', '1d', '-o', 'table']);
    expect(r.code).toBe(0);
    expect(api.requests[0].path).toBe('/api/v1/metrics/a%2Fb%20c/labels');
    expect(api.requests[0].query).toEqual({ start_time: ['2024-05-31T12:00:00.000Z'] });
    expect(r.stdout).toBe(['LABEL  VALUES', 'env    prod, dev', ''].join('\n'));
  });

  it('query posts the full aggregate body and forwards --since/--until/--interval', async () => {
    const series = [
      { labels: { service: 'api', env: 'prod' }, points: [{ timestamp: '2024-06-01T10:00:00Z', value: 1.5 }, { timestamp: '2024-06-01T10:15:00Z', value: 2 }] },
      { labels: { service: 'web' }, points: [{ timestamp: '2024-06-01T10:00:00Z', value: null }] },
    ];
    api.on('POST', '/metrics/aggregate', { body: { series } });
    const r = await svc([
      'metrics', 'query', 'http.duration', '--project', 'p1', '--agg', 'p95', '--interval', '15m',
      '--group-by', 'service', '--group-by', 'env', '--filter', 'region=eu', '--filter', 'env=prod', '--filter', 'region=us',
      '--service', 'checkout', '--env', 'prod', '--since', '2h', '--until', '30m',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ series });
    const req = api.requests[0];
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/api/v1/metrics/aggregate');
    expect(req.search).toBe('project_id=p1');
    expect(req.body).toEqual({
      metric_name: 'http.duration',
      step: '15m',
      aggregation: 'p95',
      time_range: { start: '2024-06-01T10:00:00.000Z', end: '2024-06-01T11:30:00.000Z' },
      group_by: ['service', 'env'],
      filters: [
        { key: 'region', values: ['eu', 'us'] },
        { key: 'env', values: ['prod'] },
      ],
      service_name: 'checkout',
      environment: 'prod',
    });
    const t = await svc(['metrics', 'query', 'http.duration', '--group-by', 'service', '-o', 'table']);
    expect(t.stdout).toBe(
      [
        'SERVICE  ENV   TIMESTAMP             VALUE',
        'api      prod  2024-06-01T10:00:00Z  1.5',
        'api      prod  2024-06-01T10:15:00Z  2',
        'web      -     2024-06-01T10:00:00Z  -',
        '',
      ].join('\n'),
    );
  });

  it('query defaults: avg, 5m, the last 24h, no project_id when none is active', async () => {
    api.on('POST', '/metrics/aggregate', { body: { series: [] } });
    const r = await svc(['metrics', 'query', 'cpu']);
    expect(r.code).toBe(0);
    expect(api.requests[0].search).toBe('');
    expect(api.requests[0].body).toEqual({
      metric_name: 'cpu',
      step: '5m',
      aggregation: 'avg',
      time_range: { start: '2024-05-31T12:00:00.000Z', end: '2024-06-01T12:00:00.000Z' },
    });
  });

  it('validates enumerated and structured flag values client-side (exit 2, allowed values named)', async () => {
    const cases: [string[], RegExp][] = [
      [['metrics', 'query', 'cpu', '--agg', 'median'], /avg, sum, min, max, count, p50, p95, p99, stddev, variance/],
      [['metrics', 'query', 'cpu', '--interval', '2m'], /1s, 5s, 10s, 30s, 1m, 5m, 10m, 15m, 30m, 1h, 6h, 12h, 1d, 7d/],
      [['metrics', 'query', 'cpu', '--step', '2d'], /1s, 5s, 10s, 30s, 1m, 5m, 10m, 15m, 30m, 1h, 6h, 12h, 1d, 7d/],
      [['metrics', 'query', 'cpu', '--step', '1m', '--interval', '5m'], /contradict/],
      [['metrics', 'forecast', 'cpu', '--interval', '3h'], /1m, 5m, 10m, 15m, 30m, 1h, 6h, 12h, 1d/],
      [['metrics', 'forecast', 'cpu', '--interval', '7d'], /1m, 5m, 10m, 15m, 30m, 1h, 6h, 12h, 1d/],
      [['metrics', 'histogram'], /missing required argument/],
      [['metrics', 'histogram', 'lat', '--step', '2m'], /1s, 5s, 10s, 30s, 1m, 5m, 10m/],
      [['metrics', 'histogram', 'lat', '--since', 'yesterday'], /--since/],
      [['metrics', 'histogram', 'lat', '--env', ''], /--env must not be empty/],
      [['metrics', 'query', 'cpu', '--group-by', 'a', '--group-by', 'b', '--group-by', 'c'], /at most 2/],
      [['metrics', 'query', 'cpu', '--filter', 'novalue'], /key=value/],
      [['metrics', 'query', 'cpu', '--since', '3 days'], /--since/],
      [['metrics', 'query', 'cpu', '--since', '1h', '--until', '2h'], /before/],
      [['metrics', 'list', '--until', '2024-06-01'], /--until/],
      [['metrics', 'forecast', 'cpu', '--horizon', '0'], /positive integer/],
      [['metrics', 'forecast', 'cpu', '--horizon', '1001'], /at most 1000/],
      [['metrics', 'forecast', 'cpu', '--sensitivity', 'high'], /integer between 0 and 10/],
      [['metrics', 'forecast', 'cpu', '--sensitivity', '2.5'], /integer between 0 and 10/],
      [['metrics', 'forecast', 'cpu', '--sensitivity', '11'], /integer between 0 and 10/],
      [['metrics', 'query', 'cpu', '--filter', 'env='], /non-empty value/],
      [['metrics', 'delete', 'cpu'], /--yes/],
    ];
    for (const [args, message] of cases) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
      const err = stderrJson(r);
      expect(err.error).toBe('usage_error');
      expect(err.message).toMatch(message);
    }
    expect(api.requests).toHaveLength(0);
  });

  it('forecast puts project_id and the time range in the body and prints status and rows', async () => {
    const res = {
      metric_name: 'cpu',
      interval: '1h',
      horizon: 12,
      status: 'FORECAST_FIT_STATUS_READY',
      status_reason: 'enough history',
      confidence: 0.9,
      forecast: [{ timestamp: '2024-06-01T13:00:00Z', expected: 3, lower: 2, upper: 4 }],
    };
    api.on('POST', '/metrics/forecast', { body: res });
    const r = await svc(['metrics', 'forecast', 'cpu', '--since', '7d', '--env', 'prod', '--horizon', '12', '--sensitivity', '3', '--interval', '10m'], {
      env: { ...env, SVC_PROJECT: 'p9' },
    });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(res);
    expect(api.requests[0].search).toBe('');
    expect(api.requests[0].body).toEqual({
      metric_name: 'cpu',
      interval: '10m',
      horizon: 12,
      sensitivity: 3,
      environment: 'prod',
      project_id: 'p9',
      time_range: { start: '2024-05-25T12:00:00.000Z', end: '2024-06-01T12:00:00.000Z' },
    });
    await svc(['metrics', 'forecast', 'cpu']);
    expect(api.requests[1].body).toEqual({ metric_name: 'cpu', interval: '1h', horizon: 24, sensitivity: 0 });
    const t = await svc(['metrics', 'forecast', 'cpu', '-o', 'table']);
    expect(t.stdout).toBe(
      [
        'Status: FORECAST_FIT_STATUS_READY',
        'Reason: enough history',
        'Confidence: 0.9',
        'TIMESTAMP             EXPECTED  LOWER  UPPER',
        '2024-06-01T13:00:00Z  3         2      4',
        '',
      ].join('\n'),
    );
  });

  it('delete --yes sends DELETE with project_id', async () => {
    api.on('DELETE', '/metrics/http.requests', { status: 204 });
    const r = await svc(['metrics', 'delete', 'http.requests', '--yes', '--project', 'p1']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ deleted: true, metric_name: 'http.requests' });
    expect(`${api.requests[0].method} ${api.requests[0].path}?${api.requests[0].search}`).toBe(
      'DELETE /api/v1/metrics/http.requests?project_id=p1',
    );
  });

  // Spec: "`svc metrics query` must pass every one of these through (today it offers a subset)".
  it('query passes every aggregation and every step the aggregate API accepts', async () => {
    api.on('POST', '/metrics/aggregate', { body: { series: [] } });
    const aggregations = ['avg', 'sum', 'min', 'max', 'count', 'p50', 'p95', 'p99', 'stddev', 'variance'];
    const steps = ['1s', '5s', '10s', '30s', '1m', '5m', '10m', '15m', '30m', '1h', '6h', '12h', '1d', '7d'];
    for (const agg of aggregations) expect((await svc(['metrics', 'query', 'cpu', '--agg', agg])).code, agg).toBe(0);
    for (const step of steps) expect((await svc(['metrics', 'query', 'cpu', '--step', step])).code, step).toBe(0);
    expect((await svc(['metrics', 'query', 'cpu', '--interval', '7d'])).code).toBe(0);
    const bodies = api.requests.map((r) => r.body as { aggregation: string; step: string });
    expect(bodies.slice(0, aggregations.length).map((b) => b.aggregation)).toEqual(aggregations);
    expect(bodies.slice(aggregations.length).map((b) => b.step)).toEqual([...steps, '7d']);
  });

  it('histogram posts metric_name, step, time_range and environment, with project_id in the query string', async () => {
    const cells = [
      { timestamp: '2024-06-01T11:00:00Z', upper_bound: 10, upper_bound_infinite: false, count: 2 },
      { timestamp: '2024-06-01T11:00:00Z', upper_bound: 100, upper_bound_infinite: true, count: '9007199254740993' },
    ];
    api.on('POST', '/metrics/histogram', { body: { metric_name: 'lat', step: '1h', cells } });
    const r = await svc(['metrics', 'histogram', 'lat', '--project', 'p1', '--step', '1s', '--since', '2h', '--until', '1h', '--env', 'prod']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ metric_name: 'lat', step: '1h', cells });
    expect(api.requests[0]).toMatchObject({ method: 'POST', path: '/api/v1/metrics/histogram', search: 'project_id=p1' });
    expect(api.requests[0].body).toEqual({
      metric_name: 'lat',
      step: '1s',
      time_range: { start: '2024-06-01T10:00:00.000Z', end: '2024-06-01T11:00:00.000Z' },
      environment: 'prod',
    });
    // defaults are the server's: only the name is sent
    await svc(['metrics', 'histogram', 'a/b']);
    expect(api.requests[1]).toMatchObject({ search: '', body: { metric_name: 'a/b' } });
    const t = await svc(['metrics', 'histogram', 'lat', '-o', 'table']);
    expect(t.stdout).toBe(
      ['TIMESTAMP             UPPER_BOUND  COUNT', '2024-06-01T11:00:00Z  10           2', '2024-06-01T11:00:00Z  +Inf         9007199254740993', ''].join('\n'),
    );
  });

  it('histogram maps API errors to exit codes (404 -> 5, 400 -> 1 with status)', async () => {
    api.on('POST', '/metrics/histogram', { status: 404, body: { error: 'not_found', message: 'project not found' } });
    const nf = await svc(['metrics', 'histogram', 'lat', '--project', 'gone']);
    expect(nf.code).toBe(5);
    expect(stderrJson(nf)).toEqual({ error: 'not_found', message: 'project not found', exit_code: 5, status: 404 });
    api.on('POST', '/metrics/histogram', { status: 400, body: { error: 'invalid_request', message: 'lat is not a histogram' } });
    const bad = await svc(['metrics', 'histogram', 'lat', '--project', 'p1']);
    expect(bad.code).toBe(1);
    expect(stderrJson(bad)).toMatchObject({ error: 'invalid_request', status: 400, exit_code: 1 });
  });
});
