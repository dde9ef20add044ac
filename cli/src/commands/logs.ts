/**
 * `svc logs query|aggregate|fields|patterns|context|delete|tail`: log records of the active project
 * (`/api/v1/logs`, `/logs/aggregate`, `/logs/fields`, `/logs/patterns`, `/logs/{id}/context`,
 * `DELETE /logs`, and the live tail `GET /stream/logs` as Server-Sent Events). Reads need logs:read,
 * the delete logs:delete.
 */
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { Context } from '../context.js';
import { ExitCode, usageError } from '../errors.js';
import { attrFlag, collect, integerInRange, nonEmpty, positiveInt, requireYes, traceIdFlag } from '../flags.js';
import type { Query } from '../http.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';
import { windowQuery } from '../time.js';
import { severityOf, tailLogs } from './logs-tail.js';
// The log aggregate steps are the metric steps of the server.
import { STEPS } from './metrics.js';

export const SEVERITIES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export const SORTS = ['timestamp_desc', 'timestamp_asc'] as const;
export const MAX_QUERY_LIMIT = 1000;
export const DEFAULT_QUERY_LIMIT = 50;
export const MAX_PATTERN_LIMIT = 200;
export const MAX_CONTEXT = 100;
export const MAX_GROUP_BY = 2;
/** Body characters shown in a table cell (tables only; JSON and the tail keep the whole body). */
export const BODY_WIDTH = 120;
/** Reconnection backoff of the tail: 1 s, doubling up to 30 s; back to 1 s after a stream that delivered records. */

export interface LogRecord {
  log_id: string;
  timestamp: string;
  observed_at?: string;
  severity?: string;
  severity_number?: number;
  severity_text?: string;
  body: string | null;
  trace_id?: string;
  span_id?: string;
  service_name?: string;
  environment?: string;
  scope_name?: string;
  attributes?: Record<string, unknown>;
  resource_attributes?: Record<string, unknown>;
  withheld_attribute_keys?: string[];
}

interface FilterOpts {
  service?: string[];
  severity?: string;
  query?: string;
  traceId?: string;
  attr?: string[];
}

interface WindowOpts {
  since?: string;
  until?: string;
}

function groupByFlag(value: string, previous: string[] | undefined): string[] {
  if (value !== 'service' && value !== 'severity' && !/^attr\..+/.test(value))
    throw new InvalidArgumentError(`--group-by must be service, severity or attr.<key>, got "${value}".`);
  return collect(value, previous);
}

function addFilters(cmd: Command): Command {
  return cmd
    .option('--service <name>', 'exact service.name (repeatable, OR)', collect)
    .addOption(new Option('--severity <level>', 'minimum severity (this one and the more severe)').choices(SEVERITIES))
    .option('-q, --query <text>', 'case-insensitive substring of the body', nonEmpty('--query'))
    .option('--trace-id <id>', 'exact trace id (32 hex)', traceIdFlag('--trace-id'))
    .option('--attr <key=value>', 'attribute condition (repeatable; the same key repeated ORs its values, different keys AND)', attrFlag);
}

function addWindow(cmd: Command): Command {
  return cmd
    .option('--since <time>', 'start: a duration before now (30m, 6h, 7d; s, m, h, d, w) or an RFC 3339 timestamp (server default: 24h before --until)')
    .option('--until <time>', 'end: a duration before now or an RFC 3339 timestamp (server default: now)');
}

function checkFilters(opts: FilterOpts): void {
  if ((opts.service ?? []).some((s) => s.trim() === '')) throw usageError('--service must not be empty');
}

/** The filters as query parameters (service and attr repeated). */
function filterQuery(opts: FilterOpts): Query {
  checkFilters(opts);
  return { service: opts.service, severity: opts.severity, q: opts.query, trace_id: opts.traceId, attr: opts.attr };
}

/** A body on one line, cut to `width` characters with an ellipsis. */
export function oneLine(text: string | null | undefined, width = BODY_WIDTH): string | undefined {
  if (text === null || text === undefined) return undefined;
  const flat = text.replace(/\s*[\r\n]+\s*/g, ' ');
  const chars = [...flat];
  return chars.length > width ? `${chars.slice(0, width - 1).join('')}…` : flat;
}

const LOG_HEADERS = ['TIMESTAMP', 'SEVERITY', 'SERVICE', 'BODY'];
const logRow = (l: LogRecord): Cell[] => [l.timestamp, severityOf(l), l.service_name, oneLine(l.body)];

export function registerLogs(program: Command, ctx: Context): void {
  const logs = program.command('logs').description('search, analyse, tail and delete log records');
  const projectId = () => ctx.activeProject()?.value;

  addWindow(addFilters(logs.command('query').description('search log records in a window (default: the last 24 hours), newest first')))
    .option('--limit <n>', `page size (1-${MAX_QUERY_LIMIT})`, positiveInt('--limit', MAX_QUERY_LIMIT), DEFAULT_QUERY_LIMIT)
    .addOption(new Option('--sort <order>', 'order by record time').choices(SORTS).default('timestamp_desc'))
    .option('--cursor <cursor>', 'continue from a next_cursor (of the same query and sort)')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: FilterOpts & WindowOpts & { limit: number; sort: string; cursor?: string; all?: boolean }) => {
      const query: Query = { project_id: projectId(), ...windowQuery(opts, ctx.now), ...filterQuery(opts), sort: opts.sort };
      const { items, next_cursor } = await readPages<LogRecord>(ctx, '/logs', 'logs', opts, query);
      ctx.print({ logs: items, next_cursor }, () => renderTable(LOG_HEADERS, items.map(logRow), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more logs: pass --cursor ${next_cursor} (or --all)`);
    });

  addWindow(
    addFilters(
      logs
        .command('aggregate')
        .description('count matching logs per group and, with --step, per time bucket')
        .addOption(new Option('--step <step>', 'bucket width (absent: one total per group)').choices(STEPS))
        .option('--group-by <key>', `service, severity or attr.<key> (repeatable, at most ${MAX_GROUP_BY})`, groupByFlag),
    ),
  ).action(async (opts: FilterOpts & WindowOpts & { step?: string; groupBy?: string[] }) => {
    const groupBy = opts.groupBy ?? [];
    if (groupBy.length > MAX_GROUP_BY) throw usageError(`--group-by accepts at most ${MAX_GROUP_BY} keys, got ${groupBy.length}`);
    if (new Set(groupBy).size !== groupBy.length) throw usageError('--group-by keys must differ');
    checkFilters(opts);
    const body: Record<string, unknown> = {};
    const w = windowQuery(opts, ctx.now);
    if (w.since !== undefined) body.since = w.since;
    if (w.until !== undefined) body.until = w.until;
    if (opts.step !== undefined) body.step = opts.step;
    if (groupBy.length) body.group_by = groupBy;
    if (opts.service?.length) body.service = opts.service;
    if (opts.severity !== undefined) body.severity = opts.severity;
    if (opts.query !== undefined) body.q = opts.query;
    if (opts.traceId !== undefined) body.trace_id = opts.traceId;
    if (opts.attr?.length) body.attr = opts.attr;
    const res = await ctx.client().post<AggregateResponse>('/logs/aggregate', { query: { project_id: projectId() }, body });
    ctx.print(res, () => renderAggregate(res?.series ?? [], groupBy, ctx.color));
  });

  addWindow(addFilters(logs.command('fields').description('attribute keys of the matching logs with counts and top values'))).action(
    async (opts: FilterOpts & WindowOpts) => {
      const query: Query = { project_id: projectId(), ...windowQuery(opts, ctx.now), ...filterQuery(opts) };
      const res = await ctx.client().get<FieldsResponse>('/logs/fields', { query });
      ctx.print(res, () =>
        renderTable(
          ['KEY', 'SOURCE', 'COUNT', 'DISTINCT', 'TOP_VALUES'],
          (res?.fields ?? []).map((f) => [
            f.key,
            f.source === 'resource_attributes' ? 'resource' : 'attribute',
            f.count,
            f.distinct_values,
            oneLine((f.top_values ?? []).map((v) => `${v.value} (${v.count})`).join(', '), 80),
          ]),
          { color: ctx.color },
        ),
      );
      if (ctx.format === 'table' && res) {
        if (res.truncated) ctx.note(`showing ${res.fields.length} of ${res.total_count} keys`);
        ctx.note(`read ${res.scanned} logs${res.sampled ? ' (the newest; more matched)' : ''}`);
      }
    },
  );

  addWindow(addFilters(logs.command('patterns').description('log bodies grouped into patterns (numbers, ids, quoted strings masked)')))
    .option('--limit <n>', `patterns returned (server default 50, at most ${MAX_PATTERN_LIMIT})`, positiveInt('--limit', MAX_PATTERN_LIMIT))
    .action(async (opts: FilterOpts & WindowOpts & { limit?: number }) => {
      const query: Query = { project_id: projectId(), ...windowQuery(opts, ctx.now), ...filterQuery(opts), limit: opts.limit };
      const res = await ctx.client().get<PatternsResponse>('/logs/patterns', { query });
      ctx.print(res, () =>
        renderTable(
          ['COUNT', 'PATTERN', 'SERVICES', 'LAST_SEEN'],
          (res?.patterns ?? []).map((p) => [p.count, oneLine(p.pattern), (p.services ?? []).join(', '), p.last_seen]),
          { color: ctx.color },
        ),
      );
      if (ctx.format === 'table' && res)
        ctx.note(`${res.patterns.length} of ${res.total_patterns} patterns; read ${res.scanned} logs${res.sampled ? ' (the newest; more matched)' : ''}`);
    });

  logs
    .command('context')
    .description('a log record with the nearest earlier and later records of the same service')
    .argument('<log_id>', 'log id')
    .option('--before <n>', `records before (0-${MAX_CONTEXT}, server default 10)`, integerInRange('--before', 0, MAX_CONTEXT))
    .option('--after <n>', `records after (0-${MAX_CONTEXT}, server default 10)`, integerInRange('--after', 0, MAX_CONTEXT))
    .action(async (logId: string, opts: { before?: number; after?: number }) => {
      const res = await ctx.client().get<ContextResponse>(`/logs/${encodeURIComponent(logId)}/context`, {
        query: { project_id: projectId(), before: opts.before, after: opts.after },
      });
      ctx.print(res, () => {
        const before = res.before ?? [];
        const rows: Cell[][] = [
          ...before.map((l, i) => [String(i - before.length), ...logRow(l)]),
          ['0', ...logRow(res.log)],
          ...(res.after ?? []).map((l, i) => [`+${i + 1}`, ...logRow(l)]),
        ];
        return renderTable(['POS', ...LOG_HEADERS], rows, { color: ctx.color });
      });
    });

  addWindow(
    addFilters(
      logs
        .command('delete')
        .description('delete log records: one by --log-id, or those of --since..--until matching a filter (needs --yes)')
        .option('--log-id <id>', 'one log record', nonEmpty('--log-id'))
        .option('--yes', 'confirm the deletion'),
    ),
  ).action(async (opts: FilterOpts & WindowOpts & { logId?: string; yes?: boolean }) => {
    const narrowed = Boolean(opts.service?.length || opts.traceId || opts.query || opts.attr?.length);
    if (opts.logId === undefined && (opts.since === undefined || opts.until === undefined || !narrowed))
      throw usageError(
        'logs delete needs --log-id, or --since and --until with at least one of --service, --trace-id, -q, --attr (--severity only narrows)',
      );
    const query: Query = { project_id: projectId(), log_id: opts.logId, ...windowQuery(opts, ctx.now), ...filterQuery(opts) };
    requireYes(opts.yes, opts.logId !== undefined ? `deleting log ${opts.logId}` : 'deleting logs');
    const res = await ctx.client().delete<{ deleted: number }>('/logs', { query });
    ctx.print(res, () => `Deleted ${res?.deleted ?? 0} log record${res?.deleted === 1 ? '' : 's'}\n`);
  });

  addFilters(
    logs
      .command('tail')
      .description('follow new log records live (a line each on a terminal, NDJSON when piped); Ctrl-C stops')
      .option('--no-reconnect', 'stop when the stream ends instead of reconnecting'),
  ).action(async (opts: FilterOpts & { reconnect: boolean }) => {
    const query: Query = { project_id: projectId(), ...filterQuery(opts) };
    // Ctrl-C ends a tail normally (exit 0), before the process-wide "interrupted" handler runs.
    const onInterrupt = () => process.exit(ExitCode.ok);
    process.prependOnceListener('SIGINT', onInterrupt);
    try {
      await tailLogs(ctx, query, opts.reconnect !== false);
    } finally {
      process.removeListener('SIGINT', onInterrupt);
    }
  });
}

interface AggregateSeries {
  group?: Record<string, string>;
  count: number;
  points?: { timestamp: string; count: number }[];
}

interface AggregateResponse {
  since: string;
  until: string;
  step?: string;
  series: AggregateSeries[];
}

interface FieldsResponse {
  fields: { key: string; source: string; count: number; distinct_values: number; top_values?: { value: string; count: number }[] }[];
  total_count: number;
  truncated?: boolean;
  scanned: number;
  sampled: boolean;
}

interface PatternsResponse {
  patterns: {
    pattern_id: string;
    pattern: string;
    count: number;
    first_seen: string;
    last_seen: string;
    services?: string[];
    example?: { log_id: string; timestamp: string; body: string };
  }[];
  total_patterns: number;
  scanned: number;
  sampled: boolean;
}

interface ContextResponse {
  log: LogRecord;
  before: LogRecord[];
  after: LogRecord[];
}

/** Group columns (the --group-by keys first), then COUNT; with a step, one row per bucket with TIMESTAMP. */
export function renderAggregate(series: AggregateSeries[], groupBy: string[], color: boolean): string {
  const keys = [...groupBy];
  const rest = new Set<string>();
  for (const s of series) for (const k of Object.keys(s.group ?? {})) if (!keys.includes(k)) rest.add(k);
  keys.push(...[...rest].sort());
  const stepped = series.some((s) => s.points !== undefined);
  const rows: Cell[][] = [];
  for (const s of series) {
    const group = keys.map((k) => s.group?.[k]);
    if (stepped) for (const p of s.points ?? []) rows.push([...group, p.timestamp, p.count]);
    else rows.push([...group, s.count]);
  }
  const headers = [...keys.map((k) => k.toUpperCase()), ...(stepped ? ['TIMESTAMP', 'COUNT'] : ['COUNT'])];
  return renderTable(headers, rows, { color });
}
