/**
 * `svc traces list|get` and `svc services`: the traces and services of the active project
 * (`/api/v1/traces`, `/traces/{trace_id}`, `/services`; traces need traces:read, services traces:read
 * or logs:read).
 */
import { Argument, Option, type Command } from 'commander';
import type { Context } from '../context.js';
import { attrFlag, collect, finiteNumber, nonEmpty, positiveInt, traceIdFlag } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';
import { windowQuery } from '../time.js';
import { formatMs } from './agent-runs.js';

/** Span status codes of the trace search (server: SPAN_STATUSES in domains/traces/store.ts). */
export const SPAN_STATUSES = ['ok', 'error', 'unset'] as const;
export const MAX_TRACE_LIMIT = 100;

export interface TraceSummary {
  trace_id: string;
  root_span_name: string;
  root_service_name?: string;
  root_missing: boolean;
  started_at: string;
  duration_ms: number;
  span_count: number;
  error_count: number;
  services: string[];
}

export interface SpanNode {
  span_id: string;
  parent_span_id?: string;
  depth: number;
  orphan?: true;
  name: string;
  kind: string;
  service_name?: string;
  started_at: string;
  duration_ms: number;
  status: { code: string; message?: string };
}

export interface TraceTree {
  trace_id: string;
  started_at: string;
  ended_at: string;
  duration_ms: number;
  span_count: number;
  error_count: number;
  services: string[];
  spans: SpanNode[];
}

interface ServiceEntry {
  name: string;
  span_count?: number;
  error_span_count?: number;
  log_count?: number;
  first_seen: string;
  last_seen: string;
}

interface ServicesResponse {
  services: ServiceEntry[];
  total_count: number;
  truncated?: boolean;
  since: string;
  until: string;
}

/** --since/--until of a read whose server default is the 24 hours ending at --until (as `GET /traces`). */
export const windowFlags = (cmd: Command, what: string) =>
  cmd
    .option('--since <time>', `${what} from: a duration before now (30m, 6h, 7d; s, m, h, d, w) or an RFC 3339 timestamp (server default: 24h before --until)`)
    .option('--until <time>', `${what} until: a duration before now or an RFC 3339 timestamp (server default: now)`);

const TRACE_HEADERS = ['TRACE_ID', 'ROOT', 'SERVICE', 'STARTED_AT', 'DURATION_MS', 'SPANS', 'ERRORS'];
const traceRow = (t: TraceSummary): Cell[] => [
  t.trace_id,
  t.root_missing ? `${t.root_span_name} (root missing)` : t.root_span_name,
  t.root_service_name,
  t.started_at,
  formatMs(t.duration_ms),
  t.span_count,
  t.error_count,
];

interface ListOpts {
  since?: string;
  until?: string;
  service?: string[];
  name?: string;
  status?: string;
  minDuration?: number;
  maxDuration?: number;
  attr?: string[];
  limit?: number;
  cursor?: string;
  all?: boolean;
}

export function registerTraces(program: Command, ctx: Context): void {
  const projectId = () => ctx.activeProject()?.value;
  const traces = program.command('traces').description('search traces and show one as a span tree');

  windowFlags(
    traces
      .command('list')
      .description('traces with a span starting in the window that meets every condition, newest first')
      .option('--service <name>', 'exact service.name (repeatable or comma-separated, OR)', collect)
      .option('--name <span_name>', 'exact span name', nonEmpty('--name'))
      .addOption(new Option('--status <code>', 'span status code').choices(SPAN_STATUSES))
      .option('--min-duration <ms>', 'trace duration at least this many milliseconds (fractions allowed)', finiteNumber('--min-duration', { min: 0 }))
      .option('--max-duration <ms>', 'trace duration at most this many milliseconds (fractions allowed)', finiteNumber('--max-duration', { min: 0 }))
      .option('--attr <key=value>', 'attribute condition (repeatable; the same key repeated ORs its values, different keys AND)', attrFlag),
    'spans starting',
  )
    .option('--limit <n>', `page size (server default 20, at most ${MAX_TRACE_LIMIT})`, positiveInt('--limit', MAX_TRACE_LIMIT))
    .option('--cursor <cursor>', 'continue from a next_cursor (of the same query)')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: ListOpts) => {
      const { items, next_cursor } = await readPages<TraceSummary>(ctx, '/traces', 'traces', opts, {
        project_id: projectId(),
        ...windowQuery(opts, ctx.now),
        service: opts.service,
        name: opts.name,
        status: opts.status,
        min_duration_ms: opts.minDuration,
        max_duration_ms: opts.maxDuration,
        attr: opts.attr,
      });
      ctx.print({ traces: items, next_cursor }, () => renderTable(TRACE_HEADERS, items.map(traceRow), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more traces: pass --cursor ${next_cursor} (or --all)`);
    });

  traces
    .command('get')
    .description('one trace: its span tree (indented on a terminal; JSON has every field)')
    .addArgument(new Argument('<trace_id>', 'trace id (32 hex)').argParser(traceIdFlag('the trace id')))
    .action(async (traceId: string) => {
      const trace = await ctx.client().get<TraceTree>(`/traces/${encodeURIComponent(traceId)}`, { query: { project_id: projectId() } });
      ctx.print(trace, () => renderTrace(trace, ctx.color));
    });

  windowFlags(program.command('services').description('services seen in the spans and logs of the active project in a window, by name'), 'seen').action(
    async (opts: { since?: string; until?: string }) => {
      const res = await ctx.client().get<ServicesResponse>('/services', { query: { project_id: projectId(), ...windowQuery(opts, ctx.now) } });
      ctx.print(res, () =>
        renderTable(
          ['NAME', 'SPANS', 'ERROR_SPANS', 'LOGS', 'FIRST_SEEN', 'LAST_SEEN'],
          (res?.services ?? []).map((s) => [s.name, s.span_count, s.error_span_count, s.log_count, s.first_seen, s.last_seen]),
          { color: ctx.color },
        ),
      );
      if (res?.truncated && ctx.format === 'table') ctx.note(`showing ${res.services.length} of ${res.total_count} services`);
    },
  );
}

/** A summary line, then the spans in the server's depth-first order, each name indented by its depth. */
export function renderTrace(t: TraceTree, color: boolean): string {
  const head = `Trace ${t.trace_id}: ${t.span_count} spans, ${t.error_count} errors, ${formatMs(t.duration_ms)} ms, from ${t.started_at}; services: ${(t.services ?? []).join(', ') || '-'}\n`;
  const rows = (t.spans ?? []).map((s): Cell[] => [
    `${'  '.repeat(Math.max(0, s.depth))}${s.name}${s.orphan ? ' (orphan)' : ''}`,
    s.span_id,
    s.service_name,
    s.kind,
    s.status?.message ? `${s.status.code}: ${s.status.message}` : s.status?.code,
    s.started_at,
    formatMs(s.duration_ms),
  ]);
  return head + renderTable(['SPAN', 'SPAN_ID', 'SERVICE', 'KIND', 'STATUS', 'STARTED_AT', 'DURATION_MS'], rows, { color });
}
