/** `svc metrics list|labels|query|histogram|forecast|delete`, scoped to the active project when there is one. */
import { Option, type Command } from 'commander';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { collect, integerInRange, nonEmpty, parseFilters, positiveInt, requireYes } from '../flags.js';
import { renderObjects, renderTable, type Cell } from '../output.js';
import { resolveTimeRange, type TimeRange } from '../time.js';

/** Every aggregation of POST /metrics/aggregate (server: AGGREGATION_VALUES in domains/metrics/store.ts). */
export const AGGREGATIONS = ['avg', 'sum', 'min', 'max', 'count', 'p50', 'p95', 'p99', 'stddev', 'variance'] as const;
/** Every step of the metric endpoints, aggregate and histogram (server: STEP_MS in domains/metrics/request-rules.ts). */
export const STEPS = ['1s', '5s', '10s', '30s', '1m', '5m', '10m', '15m', '30m', '1h', '6h', '12h', '1d', '7d'] as const;
export const DEFAULT_QUERY_STEP = '5m';
/** The forecast intervals (server: FORECAST_INTERVALS in domains/metrics/forecast-service.ts). */
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

interface HistogramCell {
  timestamp: string;
  upper_bound: number;
  upper_bound_infinite: boolean;
  count: number | string;
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
  const metrics = program.command('metrics').description('explore, query, histogram, forecast and delete metrics');
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
      .addOption(new Option('--step <step>', `bucket size (default ${DEFAULT_QUERY_STEP})`).choices(STEPS))
      .addOption(new Option('--interval <step>', 'same as --step').choices(STEPS))
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
        step?: string;
        interval?: string;
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
      if (opts.step !== undefined && opts.interval !== undefined && opts.step !== opts.interval)
        throw usageError(`--step (${opts.step}) and --interval (${opts.interval}) contradict each other: give one`);
      const range = resolveTimeRange(opts, ctx.now, { since: '24h', endDefaultsToNow: true });
      const body: Record<string, unknown> = {
        metric_name: name,
        step: opts.step ?? opts.interval ?? DEFAULT_QUERY_STEP,
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
      .command('histogram')
      .description('bucket counts of a histogram metric per time step (not cumulative)')
      .argument('<name>', 'metric name')
      .addOption(new Option('--step <step>', 'bucket width in time (server default 1h)').choices(STEPS))
      .option('--env <environment>', 'deployment environment', nonEmpty('--env')),
    '24h before --until',
  ).action(async (name: string, opts: TimeOpts & { step?: string; env?: string }) => {
    const body: Record<string, unknown> = { metric_name: name };
    if (opts.step !== undefined) body.step = opts.step;
    const tr = timeRangeBody(resolveTimeRange(opts, ctx.now));
    if (tr) body.time_range = tr;
    if (opts.env !== undefined) body.environment = opts.env;
    const res = await ctx.client().post<{ cells?: HistogramCell[] }>('/metrics/histogram', { query: { project_id: projectId() }, body });
    ctx.print(res, () =>
      renderTable(
        ['TIMESTAMP', 'UPPER_BOUND', 'COUNT'],
        (res?.cells ?? []).map((c) => [c.timestamp, c.upper_bound_infinite ? '+Inf' : c.upper_bound, c.count]),
        { color: ctx.color },
      ),
    );
  });

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
    const tr = timeRangeBody(range);
    if (tr) body.time_range = tr;
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

/** The `time_range` body field of --since/--until (only the ends given), or undefined without either. */
function timeRangeBody(range: TimeRange): { start?: string; end?: string } | undefined {
  if (!range.start && !range.end) return undefined;
  const tr: { start?: string; end?: string } = {};
  if (range.start) tr.start = range.start.rfc3339;
  if (range.end) tr.end = range.end.rfc3339;
  return tr;
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
