/** GET /metrics/names and GET /metrics/{metric_name}/labels over HTTP (spec 1, "Metrics endpoints", "Label rules", "Limits"). */
import { allowAllContent } from '../../testing/content-policy.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { insertHistograms, insertManyNames, insertMetric, insertSeries, insertTombstone } from './test-data.js';

const NOW = '2024-06-01T12:00:00.000Z';

describe('metric names', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock(NOW) });
  });
  afterAll(async () => t.close());

  const names = (key: string, qs = '') => t.call({ method: 'GET', url: `/api/v1/metrics/names${qs}`, key });
  const fresh = () => projectWithKey(t, ['metrics:read']);

  it('"Response {metrics:[{name,type}], total_count:int, retrieved_at:timestamp}. Alphabetical"', async () => {
    const { projectId, key } = await fresh();
    for (const name of ['zeta', 'Alpha', 'beta', 'a b.c/d', 'alpha']) await insertMetric(t, { projectId, name, type: 'gauge' }, [['2024-06-01T01:00:00Z', 1]]);
    const r = await names(key);
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      metrics: ['Alpha', 'a b.c/d', 'alpha', 'beta', 'zeta'].map((name) => ({ name, type: 'gauge' })),
      total_count: 5,
      retrieved_at: NOW,
    });
  });

  it('"`type` (counter, gauge, histogram or summary; present when the ingested data supplies one)"', async () => {
    const { projectId, key } = await fresh();
    const at = '2024-06-01T01:00:00Z';
    await insertMetric(t, { projectId, name: 'c', type: 'counter' }, [[at, 1]]);
    await insertMetric(t, { projectId, name: 'g', type: 'gauge' }, [[at, 1]]);
    await insertMetric(t, { projectId, name: 'h', type: 'histogram' }, [[at, 1]]);
    await insertMetric(t, { projectId, name: 's', type: 'summary' }, [[at, 1]]);
    await insertMetric(t, { projectId, name: 'untyped', type: null }, [[at, 1]]);
    const r = await names(key);
    expect(r.json().metrics).toEqual([
      { name: 'c', type: 'counter' },
      { name: 'g', type: 'gauge' },
      { name: 'h', type: 'histogram' },
      { name: 's', type: 'summary' },
      { name: 'untyped' },
    ]);
    expect('type' in r.json().metrics[4]).toBe(false);
  });

  it('"Metric names returned: 1,000": capped alphabetically, total_count counts every name and truncated says the cap cut it', async () => {
    const { projectId, key } = await fresh();
    await insertManyNames(t, projectId, 'm', 1003, '2024-06-01T01:00:00Z');
    const r = await names(key);
    const body = r.json();
    expect(body.metrics).toHaveLength(1000);
    expect(body.metrics[0]).toEqual({ name: 'm0000', type: 'gauge' });
    expect(body.metrics[999]).toEqual({ name: 'm0999', type: 'gauge' });
    expect(body.total_count).toBe(1003);
    expect(body.truncated).toBe(true);
  });

  it('exactly 1,000 names is not truncated (no `truncated` key)', async () => {
    const { projectId, key } = await fresh();
    await insertManyNames(t, projectId, 'n', 1000, '2024-06-01T01:00:00Z');
    const body = (await names(key)).json();
    expect(body.metrics).toHaveLength(1000);
    expect(body.total_count).toBe(1000);
    expect('truncated' in body).toBe(false);
  });

  it('"optional `start_time`, `end_time` (RFC 3339)": the window filters on datapoint times (closed); no window means all data', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'early' }, [['2024-05-01T00:00:00Z', 1]]);
    await insertMetric(t, { projectId, name: 'edge' }, [['2024-06-01T00:00:00Z', 1]]);
    await insertMetric(t, { projectId, name: 'late' }, [['2024-06-01T11:00:00Z', 1]]);
    const list = async (qs: string) => (await names(key, qs)).json().metrics.map((m: { name: string }) => m.name);
    expect(await list('')).toEqual(['early', 'edge', 'late']);
    expect(await list('?start_time=2024-06-01T00:00:00Z')).toEqual(['edge', 'late']);
    expect(await list('?end_time=2024-06-01T00:00:00Z')).toEqual(['early', 'edge']);
    expect(await list('?start_time=2024-05-15T00:00:00Z&end_time=2024-06-01T10:00:00Z')).toEqual(['edge']);
    expect((await names(key, '?start_time=2024-06-01T00:00:00Z')).json().total_count).toBe(2);
  });

  it('a histogram-only name (buckets but no mean point) is listed too', async () => {
    const { projectId, key } = await fresh();
    const seriesId = await insertSeries(t, { projectId, name: 'latency', type: 'histogram' });
    await insertHistograms(t, { projectId, name: 'latency', seriesId }, [{ at: '2024-06-01T01:00:00Z', temporality: 'delta', bounds: [1], counts: [1, 0] }]);
    expect((await names(key)).json().metrics).toEqual([{ name: 'latency', type: 'histogram' }]);
  });

  it('a name whose datapoints are all at or before its tombstone is not listed', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'gone' }, [
      ['2024-06-01T01:00:00Z', 1],
      ['2024-06-01T02:00:00Z', 1],
    ]);
    await insertMetric(t, { projectId, name: 'back' }, [
      ['2024-06-01T01:00:00Z', 1],
      ['2024-06-01T03:00:00Z', 1],
    ]);
    await insertTombstone(t, projectId, 'gone', '2024-06-01T02:00:00Z');
    await insertTombstone(t, projectId, 'back', '2024-06-01T02:00:00Z');
    expect((await names(key)).json()).toMatchObject({ metrics: [{ name: 'back' }], total_count: 1 });
  });

  it('a present-but-invalid time is 400; start_time after end_time is 400', async () => {
    const { key } = await fresh();
    for (const qs of ['?start_time=yesterday', '?end_time=', '?start_time=2024-06-01', '?start_time=2024-06-01T00:00:00Z&end_time=2024-05-01T00:00:00Z']) {
      const r = await names(key, qs);
      expect(r.statusCode, qs).toBe(400);
      expect(r.json().error).toBe('invalid_request');
    }
    expect((await names(key, '?start_time=2024-06-01T00:00:00Z&end_time=2024-05-01T00:00:00Z')).json().message).toContain('must not be after');
    expect((await names(key, '?start_time=2024-06-01T00:00:00Z&start_time=2024-06-02T00:00:00Z')).statusCode).toBe(400);
  });

  it('a leap second or an offset timestamp is read as the instant it names', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'x' }, [['2017-01-01T00:00:00Z', 1]]);
    expect((await names(key, '?start_time=2016-12-31T23:59:60Z')).json().metrics).toEqual([{ name: 'x' }]);
    expect((await names(key, '?end_time=2017-01-01T00:59:59%2B01:00')).json().metrics).toEqual([]);
  });
});

describe('metric labels', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock(NOW) });
  });
  afterAll(async () => t.close());

  const labels = (key: string, encodedName: string, qs = '') => t.call({ method: 'GET', url: `/api/v1/metrics/${encodedName}/labels${qs}`, key });
  const fresh = (scopes = ['metrics:read']) => projectWithKey(t, scopes);

  it('"Response {labels:[{name, values:[string]}]}": keys and values sorted and distinct', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'cpu', labels: { host: 'b', region: 'eu' } }, [['2024-06-01T01:00:00Z', 1]]);
    await insertMetric(t, { projectId, name: 'cpu', labels: { host: 'a', region: 'eu', az: '1' } }, [['2024-06-01T01:00:00Z', 1]]);
    await insertMetric(t, { projectId, name: 'cpu', labels: {} }, [['2024-06-01T01:00:00Z', 1]]);
    const r = await labels(key, 'cpu');
    expect(r.statusCode).toBe(200);
    expect(r.json()).toEqual({
      labels: [
        { name: 'az', values: ['1'] },
        { name: 'host', values: ['a', 'b'] },
        { name: 'region', values: ['eu'] },
      ],
    });
  });

  it('"Keys and values are scoped to the project, the metric and the window"', async () => {
    const { projectId, key } = await fresh();
    const other = await fresh();
    await insertMetric(t, { projectId, name: 'cpu', labels: { host: 'old' } }, [['2024-05-01T00:00:00Z', 1]]);
    await insertMetric(t, { projectId, name: 'cpu', labels: { host: 'new', zone: 'z' } }, [['2024-06-01T01:00:00Z', 1]]);
    await insertMetric(t, { projectId, name: 'mem', labels: { host: 'memhost', kind: 'rss' } }, [['2024-06-01T01:00:00Z', 1]]);
    await insertMetric(t, { projectId: other.projectId, name: 'cpu', labels: { host: 'foreign', team: 'x' } }, [['2024-06-01T01:00:00Z', 1]]);
    // A series of the metric whose only point lies outside the window contributes nothing.
    expect((await labels(key, 'cpu')).json().labels).toEqual([
      { name: 'host', values: ['new', 'old'] },
      { name: 'zone', values: ['z'] },
    ]);
    expect((await labels(key, 'cpu', '?start_time=2024-06-01T00:00:00Z')).json().labels).toEqual([
      { name: 'host', values: ['new'] },
      { name: 'zone', values: ['z'] },
    ]);
    expect((await labels(key, 'cpu', '?end_time=2024-05-01T00:00:00Z')).json().labels).toEqual([{ name: 'host', values: ['old'] }]);
    expect((await labels(key, 'nothing')).json()).toEqual({ labels: [] });
  });

  it('labels are datapoint attributes only: service_name and environment are not listed', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'svc', serviceName: 'api', environment: 'prod', labels: { route: '/x' } }, [['2024-06-01T01:00:00Z', 1]]);
    expect((await labels(key, 'svc')).json().labels).toEqual([{ name: 'route', values: ['/x'] }]);
  });

  it('"metric name is URL-encoded in the path": names with /, ., spaces, % and non-ASCII characters', async () => {
    const { projectId, key } = await fresh();
    const tricky = ['a/b', 'http.server duration', '100%', 'naïve/€', 'names', 'labels'];
    for (const [i, name] of tricky.entries()) await insertMetric(t, { projectId, name, labels: { i: String(i) } }, [['2024-06-01T01:00:00Z', 1]]);
    for (const [i, name] of tricky.entries()) {
      const r = await labels(key, encodeURIComponent(name));
      expect(r.statusCode, name).toBe(200);
      expect(r.json().labels, name).toEqual([{ name: 'i', values: [String(i)] }]);
    }
    // Lower-case escapes decode the same way.
    expect((await labels(key, 'a%2fb')).json().labels).toEqual([{ name: 'i', values: ['0'] }]);
  });

  it('labels of a deleted metric stamped at or before the tombstone are hidden', async () => {
    const { projectId, key } = await fresh();
    await insertMetric(t, { projectId, name: 'del', labels: { gen: 'old' } }, [['2024-06-01T01:00:00Z', 1]]);
    await insertMetric(t, { projectId, name: 'del', labels: { gen: 'new' } }, [['2024-06-01T03:00:00Z', 1]]);
    await insertTombstone(t, projectId, 'del', '2024-06-01T02:00:00Z');
    expect((await labels(key, 'del')).json().labels).toEqual([{ name: 'gen', values: ['new'] }]);
  });

  it('"a label named after a recorded-content convention is omitted with all its values unless the credential holds `agents:content:read`"', async () => {
    const plain = await fresh();
    const content = await fresh(['metrics:read', 'agents:content:read']);
    const contentLabels = {
      'gen_ai.prompt': 'p',
      'gen_ai.completion': 'c',
      'gen_ai.input.messages': 'im',
      'gen_ai.output.messages': 'om',
      'gen_ai.system_instructions': 'si',
      'gen_ai.tool.call.arguments': 'ta',
      'gen_ai.tool.call.result': 'tr',
      'gen_ai.prompt.0.content': 'p0',
      'gen_ai.completion.0.content': 'c0',
      'GEN_AI.PROMPT': 'P',
    };
    await allowAllContent(t, content.projectId);
    for (const p of [plain, content])
      await insertMetric(t, { projectId: p.projectId, name: 'tokens', labels: { ...contentLabels, 'gen_ai.request.model': 'm1' } }, [['2024-06-01T01:00:00Z', 1]]);
    expect((await labels(plain.key, 'tokens')).json().labels).toEqual([{ name: 'gen_ai.request.model', values: ['m1'] }]);
    const all = (await labels(content.key, 'tokens')).json().labels.map((l: { name: string }) => l.name);
    expect(all).toEqual([...Object.keys(contentLabels), 'gen_ai.request.model'].sort());
  });

  it('bad window values are 400; an unknown query parameter is 400', async () => {
    const { key } = await fresh();
    expect((await labels(key, 'cpu', '?start_time=nope')).statusCode).toBe(400);
    expect((await labels(key, 'cpu', '?start_time=2024-06-02T00:00:00Z&end_time=2024-06-01T00:00:00Z')).statusCode).toBe(400);
    expect((await labels(key, 'cpu', '?service_name=api')).statusCode).toBe(400);
  });
});
