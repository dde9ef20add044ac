/** `svc metrics list|labels|query|forecast|delete`, scoped to the active project when there is one. */
import { Option, type Command } from 'commander';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { collect, integerInRange, nonEmpty, parseFilters, positiveInt, requireYes } from '../flags.js';
import { renderObjects, renderTable, type Cell } from '../output.js';
import { resolveTimeRange } from '../time.js';

export const AGGREGATIONS = ['avg', 'sum', 'min', 'max', 'count', 'p50', 'p95', 'p99'] as const;
export const INTERVALS = ['1m', '5m', '15m', '30m', '1h', '6h', '12h', '1d'] as const;
/** The forecast endpoint also accepts 10m. */
export const FORECAST_INTERVALS = ['1m', '5m', '10m', '15m', '30m', '1h', '6h', '12h', '1d'] as const;
export const MAX_HORIZON = 1000;
export const MAX_SENSITIVITY = 10;
export const MAX_GROUP_BY = 2;

interface MetricNames {
  metrics: { name: string; type?: string }[];
  total_count?: number;
  truncated?: boolean;
  retrieved_at?: string;
}

interface MetricLabels {
  labels: { name: string; values: string[] }[];
}

interface Series {
  labels?: Record<string, string>;
  points?: { timestamp: string | number; value: number | null }[];
}

interface TimeOpts {
  since?: string;
  until?: string;
}

const metricPath = (name: string, suffix = '') => `/metrics/${encodeURIComponent(name)}${suffix}`;

const addTimeFlags = (cmd: Command, sinceDefault?: string) =>
  cmd
    .option(
      '--since <time>',
      `start: a duration before now (30m, 6h, 7d; s, m, h, d, w) or an RFC 3339 timestamp${sinceDefault ? ` (default: ${sinceDefault})` : ''}`,
    )
    .option('--until <time>', 'end: a duration before now or an RFC 3339 timestamp (default: now)');

export function registerMetrics(program: Command, ctx: Context): void {
  const metrics = program.command('metrics').description('explore, query, forecast and delete metrics');
  const projectId = () => ctx.activeProject()?.value;

  addTimeFlags(metrics.command('list').description('list metric names'))
    .action(async (opts: TimeOpts) => {
      const range = resolveTimeRange(opts, ctx.now);
      const client = ctx.client();
      const res = await client.get<MetricNames>('/metrics/names', {
        query: { project_id: projectId(), start_time: range.start?.rfc3339, end_time: range.end?.rfc3339 },
      });
      ctx.print(res, () =>
        renderTable(['NAME', 'TYPE'], (res?.metrics ?? []).map((m) => [m.name, m.type]), { color: ctx.color }),
      );
      if (res?.truncated && ctx.format === 'table') ctx.note(`showing ${res.metrics.length} of ${res.total_count} metric names`);
    });

  addTimeFlags(metrics.command('labels').description('list the labels of a metric and their values').argument('<name>', 'metric name'))
    .action(async (name: string, opts: TimeOpts) => {
      const range = resolveTimeRange(opts, ctx.now);
      const client = ctx.client();
      const res = await client.get<MetricLabels>(metricPath(name, '/labels'), {
        query: { project_id: projectId(), start_time: range.start?.rfc3339, end_time: range.end?.rfc3339 },
      });
      ctx.print(res, () =>
        renderTable(['LABEL', 'VALUES'], (res?.labels ?? []).map((l) => [l.name, (l.values ?? []).join(', ')]), {
          color: ctx.color,
        }),
      );
    });

  addTimeFlags(
    metrics
      .command('query')
      .description('aggregate a metric over time')
      .argument('<name>', 'metric name')
      .addOption(new Option('--agg <aggregation>', 'aggregation').choices(AGGREGATIONS).default('avg'))
      .addOption(new Option('--interval <step>', 'bucket size').choices(INTERVALS).default('5m'))
      .option('--group-by <key>', `label to group by (repeatable, at most ${MAX_GROUP_BY})`, collect)
      .option('--filter <key=value>', 'label filter (repeatable; the same key repeated ORs its values)', collect)
      .option('--service <name>', 'service name', nonEmpty('--service'))
      .option('--env <environment>', 'deployment environment', nonEmpty('--env')),
    '24h',
  ).action(
    async (
      name: string,
      opts: TimeOpts & {
        agg: string;
        interval: string;
        groupBy?: string[];
        filter?: string[];
        service?: string;
        env?: string;
      },
    ) => {
      const groupBy = opts.groupBy ?? [];
      if (groupBy.length > MAX_GROUP_BY) throw usageError(`--group-by accepts at most ${MAX_GROUP_BY} keys, got ${groupBy.length}`);
      if (groupBy.some((k) => k.trim() === '')) throw usageError('--group-by keys must not be empty');
      const filters = parseFilters(opts.filter ?? []);
      const range = resolveTimeRange(opts, ctx.now, { since: '24h', endDefaultsToNow: true });
      const body: Record<string, unknown> = {
        metric_name: name,
        step: opts.interval,
        aggregation: opts.agg,
        time_range: { start: range.start!.rfc3339, end: range.end!.rfc3339 },
      };
      if (groupBy.length) body.group_by = groupBy;
      if (filters.length) body.filters = filters;
      if (opts.service !== undefined) body.service_name = opts.service;
      if (opts.env !== undefined) body.environment = opts.env;
      const client = ctx.client();
      const res = await client.post<{ series?: Series[] }>('/metrics/aggregate', { query: { project_id: projectId() }, body });
      ctx.print(res, () => renderSeries(res?.series ?? [], groupBy, ctx.color));
    },
  );

  addTimeFlags(
    metrics
      .command('forecast')
      .description('forecast a metric')
      .argument('<name>', 'metric name')
      .addOption(new Option('--interval <step>', 'bucket size').choices(FORECAST_INTERVALS).default('1h'))
      .option('--horizon <n>', `number of intervals to forecast (1-${MAX_HORIZON})`, positiveInt('--horizon', MAX_HORIZON), 24)
      .option(
        '--sensitivity <n>',
        `band width: 0 for automatic, or 1-${MAX_SENSITIVITY}`,
        integerInRange('--sensitivity', 0, MAX_SENSITIVITY),
        0,
      )
      .option('--env <environment>', 'deployment environment', nonEmpty('--env')),
  ).action(async (name: string, opts: TimeOpts & { interval: string; horizon: number; sensitivity: number; env?: string }) => {
    const range = resolveTimeRange(opts, ctx.now, { endDefaultsToNow: opts.since !== undefined });
    const body: Record<string, unknown> = {
      metric_name: name,
      interval: opts.interval,
      horizon: opts.horizon,
      sensitivity: opts.sensitivity,
    };
    if (opts.env !== undefined) body.environment = opts.env;
    const project = projectId();
    if (project !== undefined) body.project_id = project;
    if (range.start || range.end) {
      const tr: Record<string, string> = {};
      if (range.start) tr.start = range.start.rfc3339;
      if (range.end) tr.end = range.end.rfc3339;
      body.time_range = tr;
    }
    const client = ctx.client();
    const res = await client.post<Record<string, unknown>>('/metrics/forecast', { body });
    ctx.print(res, () => renderForecast(res ?? {}, ctx.color));
  });

  metrics
    .command('delete')
    .description('delete a metric and its data (needs --yes)')
    .argument('<name>', 'metric name')
    .option('--yes', 'confirm the deletion')
    .action(async (name: string, opts: { yes?: boolean }) => {
      requireYes(opts.yes, `deleting metric ${name}`);
      const client = ctx.client();
      const res = await client.delete<unknown>(metricPath(name), { query: { project_id: projectId() } });
      ctx.print(res ?? { deleted: true, metric_name: name }, () => `Deleted metric ${name}\n`);
    });
}

/** One row per point: the label columns (group-by keys first), then TIMESTAMP and VALUE. */
export function renderSeries(series: Series[], groupBy: string[], color: boolean): string {
  const keys = [...groupBy];
  const rest = new Set<string>();
  for (const s of series) for (const k of Object.keys(s.labels ?? {})) if (!keys.includes(k)) rest.add(k);
  keys.push(...[...rest].sort());
  const rows: Cell[][] = [];
  for (const s of series)
    for (const p of s.points ?? []) rows.push([...keys.map((k) => s.labels?.[k]), p.timestamp, p.value]);
  return renderTable([...keys.map((k) => k.toUpperCase()), 'TIMESTAMP', 'VALUE'], rows, { color });
}

/** The status line(s), then the forecast rows as a table. */
export function renderForecast(res: Record<string, unknown>, color: boolean): string {
  let out = '';
  if (res.status !== undefined) out += `Status: ${String(res.status)}\n`;
  if (typeof res.status_reason === 'string' && res.status_reason) out += `Reason: ${res.status_reason}\n`;
  if (typeof res.confidence === 'number') out += `Confidence: ${res.confidence}\n`;
  if (typeof res.message === 'string') out += `${res.message}\n`;
  const rowsKey = ['forecast', 'points', 'predictions', 'rows'].find((k) => Array.isArray(res[k]));
  const rows = rowsKey ? (res[rowsKey] as unknown[]) : [];
  const objects = rows.map((r) => (typeof r === 'object' && r !== null ? (r as Record<string, unknown>) : { value: r }));
  if (objects.length) out += renderObjects(objects, { color });
  else out += 'No forecast rows.\n';
  return out;
}
