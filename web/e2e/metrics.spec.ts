/**
 * Metrics sent by the OpenTelemetry JS metrics SDK (OTLP/HTTP protobuf), drawn by the metric explorer: the
 * test reads the data the chart drew (uPlot's own) and the heatmap's cells, never a screenshot.
 */
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BASE, expect, guard, owner, person, project, signIn, test, unique, ingestKey } from './fixtures.js';

let p: string;

test.beforeAll(async () => {
  p = await project();
  const key = await ingestKey(p);
  const reader = new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${BASE}/v1/metrics`, headers: { 'x-svc-api-key': key.key } }), exportIntervalMillis: 3_600_000 });
  const provider = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': 'checkout' }), readers: [reader] });
  const meter = provider.getMeter('ui-e2e');
  const queue = meter.createGauge('queue_depth', { unit: '{item}', description: 'items waiting' });
  queue.record(42, { region: 'eu' });
  queue.record(7, { region: 'us' });
  queue.record(13.5, { region: 'ap' });
  const latency = meter.createHistogram('request_duration', { unit: 'ms' });
  for (const v of [3, 4, 40, 45, 48, 700]) latency.record(v, { route: '/pay' });
  await provider.forceFlush();
  await provider.shutdown();
  await expect.poll(async () => (await owner<{ metrics: unknown[] }>('GET', `/metrics/names?project_id=${p}`)).metrics.length, { timeout: 15_000 }).toBe(2);
});

test('the chart draws the points the SDK sent, one series per group', async ({ page, context }) => {
  await signIn(context, await person('member'));
  const clean = guard(page);
  await page.goto(`/p/${p}/metrics`);
  await expect(page.getByRole('button', { name: 'queue_depth' })).toBeVisible();
  await expect(page.getByText('gauge, {item}')).toBeVisible();
  await page.getByRole('button', { name: 'queue_depth' }).click();
  await expect(page).toHaveURL(/name=queue_depth/);
  await page.getByLabel('Group by').fill('region');
  await page.getByLabel('Step').selectOption('1m');
  await page.getByLabel('Since').fill('1h');
  await page.getByRole('button', { name: 'Draw' }).click();
  await expect(page).toHaveURL(/group_by=region/);
  const chart = page.getByTestId('time-chart');
  await expect(chart).toBeVisible();
  // What uPlot drew (the chart redraws when the grouped answer arrives).
  const drawn = () =>
    chart.evaluate((el) => {
      const u = (el as HTMLElement & { __uplot: { data: (number | null)[][]; series: { label?: string }[] } }).__uplot;
      return u.series
        .slice(1)
        .map((s, i) => ({ label: s.label, values: u.data[i + 1].filter((v) => v !== null) }))
        .sort((a, b) => a.label!.localeCompare(b.label!));
    });
  await expect
    .poll(drawn)
    .toEqual([
      { label: 'region=ap', values: [13.5] },
      { label: 'region=eu', values: [42] },
      { label: 'region=us', values: [7] },
    ]);
  // The same numbers as a table.
  await page.getByRole('button', { name: 'Show as table' }).click();
  await expect(page.getByRole('region', { name: 'Chart data' })).toContainText('13.5');
  clean.expectNone();
});

test('a histogram shows its distribution as a heatmap of the recorded counts', async ({ page, context }) => {
  await signIn(context, await person('member'));
  const clean = guard(page);
  await page.goto(`/p/${p}/metrics?name=request_duration&step=1h`);
  await expect(page.getByText('Percentiles of a histogram are estimates')).toBeVisible();
  const heatmap = page.getByTestId('heatmap');
  await expect(heatmap).toBeVisible();
  const cells = await heatmap.evaluate((el) => (el as HTMLCanvasElement & { __cells: { count: number | string }[] }).__cells);
  expect(cells.reduce((n, c) => n + Number(c.count), 0)).toBe(6);
  clean.expectNone();
});

test('a refused setting shows the API\'s message beside the chart', async ({ page, context }) => {
  await signIn(context, await person('member'));
  await page.goto(`/p/${p}/metrics?name=queue_depth&group_by=a,b,c`);
  await expect(page.getByRole('alert')).toContainText('The chart could not be drawn');
});

test('a forecast without enough history says why, never an empty band', async ({ page, context }) => {
  await signIn(context, await person('member'));
  await page.goto(`/p/${p}/metrics?name=queue_depth&since=1h&step=1m&forecast=1`);
  await expect(page.getByRole('heading', { name: 'Forecast, 1m steps' })).toBeVisible();
  await expect(page.locator('.unavailable')).toContainText('unavailable:');
});
