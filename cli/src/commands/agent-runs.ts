/**
 * `svc agent-runs list|get|context`: agent runs of the active project (`/api/v1/agent-runs`,
 * `/agent-runs/{run_id}/graph`, `/agent-events`; needs agents:read).
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { Context } from '../context.js';
import { nonEmpty, positiveInt, traceIdFlag } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';
import { windowQuery } from '../time.js';

export const RUN_STATUSES = ['completed', 'failed', 'timed_out', 'cancelled', 'max_steps'] as const;
export const MAX_RUN_LIMIT = 200;
/** Context events are read with the largest page the server allows. */
export const EVENT_PAGE = 500;

export interface Run {
  run_id: string;
  root_step_id: string;
  agent_name?: string;
  agent_id?: string;
  observation_key?: string;
  service_name?: string;
  environment?: string;
  session_key?: string;
  turn_id?: string;
  status?: string;
  terminal_reason?: string;
  started_at: string;
  ended_at: string;
  duration_ms: number;
  step_count: number;
  error_steps: number;
  tool_calls: number;
  model_calls: number;
  cost_nanos?: number;
  cost_unavailable_reason?: string;
  safety_error_steps?: number;
}

export interface Step {
  step_id: string;
  parent_step_id?: string;
  name: string;
  canonical_operation: string;
  outcome?: string;
  started_at: string;
  ended_at: string;
  duration_ms: number;
  tool_name?: string;
  model?: string;
  provider?: string;
  input_tokens?: number;
  output_tokens?: number;
  cost_nanos?: number;
  cost_unavailable_reason?: string;
}

export interface RunGraph {
  run: Run;
  steps: Step[];
  counts?: Record<string, unknown>;
  action_receipts?: unknown[];
}

export interface AgentEvent {
  event_id: string;
  run_id: string;
  span_id: string;
  canonical_operation: string;
  category: string;
  name: string;
  occurred_at: string;
  context?: {
    kind: string;
    assembly?: {
      budget_tokens?: number;
      assembled_tokens?: number;
      overflow?: boolean;
      sources?: unknown[];
      sources_truncated?: boolean;
    };
    compaction?: { before_count?: number; after_count?: number; ratio?: number };
    cache?: { provider?: string; outcome?: string; reused_tokens?: number };
  };
}

/** A repeatable flag whose values (also comma-separated) must each be one of `values`. */
export function repeatableChoice(flag: string, values: readonly string[]) {
  return (value: string, previous: string[] | undefined): string[] => {
    const out = [...(previous ?? [])];
    for (const item of value.split(',').map((s) => s.trim())) {
      if (!values.includes(item)) throw new InvalidArgumentError(`${flag} must be one of ${values.join(', ')}, got "${item}".`);
      if (!out.includes(item)) out.push(item);
    }
    return out;
  };
}

/** Billionths of a US dollar as dollars with up to 9 decimals (`—` when absent). */
export function formatCostUsd(nanos: number | null | undefined): string {
  if (nanos === undefined || nanos === null || !Number.isFinite(nanos)) return '—';
  const abs = Math.round(Math.abs(nanos));
  const whole = Math.floor(abs / 1e9);
  const frac = String(abs - whole * 1e9)
    .padStart(9, '0')
    .replace(/0+$/, '');
  return `${nanos < 0 ? '-' : ''}${whole}${frac ? `.${frac}` : ''}`;
}

/** Milliseconds with at most 3 decimals (the server measures microseconds). */
export const formatMs = (ms: number | undefined): Cell => (typeof ms === 'number' && Number.isFinite(ms) ? Number(ms.toFixed(3)) : ms);

const agentOf = (r: Run) => r.agent_name ?? r.agent_id ?? r.observation_key;

const RUN_HEADERS = ['RUN_ID', 'AGENT', 'STATUS', 'STARTED_AT', 'DURATION_MS', 'STEPS', 'ERRORS', 'TOOLS', 'MODELS', 'COST_USD'];
const runRow = (r: Run): Cell[] => [
  r.run_id,
  agentOf(r),
  r.status,
  r.started_at,
  formatMs(r.duration_ms),
  r.step_count,
  r.error_steps,
  r.tool_calls,
  r.model_calls,
  formatCostUsd(r.cost_nanos),
];

const runPath = (id: string, suffix = '') => `/agent-runs/${encodeURIComponent(id)}${suffix}`;

export function registerAgentRuns(program: Command, ctx: Context): void {
  const runs = program.command('agent-runs').description('agent runs: list them, show one with its step graph, show its context events');
  const projectId = () => ctx.activeProject()?.value;

  runs
    .command('list')
    .description('list agent runs, newest first')
    .option('--status <status>', `run status (repeatable or comma-separated: ${RUN_STATUSES.join(', ')})`, repeatableChoice('--status', RUN_STATUSES))
    .option('--session <key>', 'exact session key', nonEmpty('--session'))
    .option('--agent <observation_key>', 'exact agent identity (observation key)', nonEmpty('--agent'))
    .option('--since <time>', 'runs started at or after: a duration before now (30m, 6h, 7d) or an RFC 3339 timestamp')
    .option('--until <time>', 'runs started at or before: a duration before now or an RFC 3339 timestamp')
    .option('--limit <n>', `page size (server default 50, at most ${MAX_RUN_LIMIT})`, positiveInt('--limit', MAX_RUN_LIMIT))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(
      async (opts: {
        status?: string[];
        session?: string;
        agent?: string;
        since?: string;
        until?: string;
        limit?: number;
        cursor?: string;
        all?: boolean;
      }) => {
        // This route takes RFC 3339 only: durations are resolved here, against one clock reading.
        const window = windowQuery(opts, ctx.now);
        const { items, next_cursor } = await readPages<Run>(ctx, '/agent-runs', 'runs', opts, {
          project_id: projectId(),
          status: opts.status,
          session_key: opts.session,
          observation_key: opts.agent,
          ...window,
        });
        ctx.print({ runs: items, next_cursor }, () => renderTable(RUN_HEADERS, items.map(runRow), { color: ctx.color }));
        if (next_cursor !== null && ctx.format === 'table') ctx.note(`more runs: pass --cursor ${next_cursor} (or --all)`);
      },
    );

  runs
    .command('get')
    .description('show a run; with --graph, also its steps as a tree')
    .argument('<run_id>', 'run id (the trace id, 32 hex)', traceIdFlag('the run id'))
    .option('--graph', 'also read the step graph (every step of the run)')
    .action(async (runId: string, opts: { graph?: boolean }) => {
      const client = ctx.client();
      const query = { project_id: projectId() };
      if (!opts.graph) {
        const run = await client.get<Run>(runPath(runId), { query });
        ctx.print(run, () => renderRun(run, ctx.color));
        return;
      }
      const graph = await client.get<RunGraph>(runPath(runId, '/graph'), { query });
      ctx.print(graph, () => `${renderRun(graph.run, ctx.color)}\n${renderStepTree(graph.steps ?? [], ctx.color)}`);
    });

  runs
    .command('context')
    .description("a run's context events (assembly, compaction, cache), every page")
    .argument('<run_id>', 'run id (the trace id, 32 hex)', traceIdFlag('the run id'))
    .option('--source <context_source_id>', 'only events naming this context source (an assembly source or a removed source)', nonEmpty('--source'))
    .action(async (runId: string, opts: { source?: string }) => {
      const { items } = await readPages<AgentEvent>(ctx, '/agent-events', 'events', { limit: EVENT_PAGE, all: true }, {
        project_id: projectId(),
        run_id: runId,
        category: 'context',
        context_source_id: opts.source,
      });
      ctx.print({ events: items, next_cursor: null }, () =>
        renderTable(
          ['TIME', 'STEP', 'KIND', 'SUMMARY'],
          items.map((e) => [e.occurred_at, e.span_id, e.context?.kind, contextSummary(e)]),
          { color: ctx.color },
        ),
      );
    });
}

/** The run as FIELD/VALUE rows, in the server's order; the cost also in dollars. */
export function renderRun(run: Run, color: boolean): string {
  const rows: Cell[][] = [];
  for (const [k, v] of Object.entries(run ?? {})) {
    if (k === 'cost_nanos') continue;
    rows.push([k, k === 'duration_ms' ? formatMs(v as number) : (v as Cell)]);
    if (k === 'model_calls') rows.push(['cost_usd', formatCostUsd(run.cost_nanos)]);
  }
  if (!('model_calls' in (run ?? {}))) rows.push(['cost_usd', formatCostUsd(run?.cost_nanos)]);
  return renderTable(['FIELD', 'VALUE'], rows, { color });
}

/** The steps as a tree by parent (children in the server's order, by start); orphans are roots. */
export function renderStepTree(steps: Step[], color: boolean): string {
  const ids = new Set(steps.map((s) => s.step_id));
  const children = new Map<string | undefined, Step[]>();
  for (const s of steps) {
    const parent = s.parent_step_id !== undefined && s.parent_step_id !== s.step_id && ids.has(s.parent_step_id) ? s.parent_step_id : undefined;
    const list = children.get(parent) ?? [];
    list.push(s);
    children.set(parent, list);
  }
  const rows: Cell[][] = [];
  const visited = new Set<Step>();
  const walk = (s: Step, depth: number) => {
    if (visited.has(s)) return;
    visited.add(s);
    rows.push([
      `${'  '.repeat(depth)}${s.name}`,
      s.step_id,
      s.canonical_operation,
      s.outcome?.replace(/^OUTCOME_/, '').toLowerCase(),
      formatMs(s.duration_ms),
      s.tool_name ?? (s.model ? (s.provider ? `${s.provider}/${s.model}` : s.model) : undefined),
    ]);
    for (const c of children.get(s.step_id) ?? []) walk(c, depth + 1);
  };
  for (const root of children.get(undefined) ?? []) walk(root, 0);
  // A parent cycle has no root: show what is left at the top level.
  for (const s of steps) walk(s, 0);
  return renderTable(['STEP', 'STEP_ID', 'OPERATION', 'OUTCOME', 'DURATION_MS', 'TOOL/MODEL'], rows, { color });
}

const num = (n: number | undefined) => (typeof n === 'number' ? String(n) : '?');

/** One line per context event, by kind. */
export function contextSummary(e: AgentEvent): string {
  const c = e.context;
  if (!c) return '';
  if (c.kind === 'assembly' && c.assembly) {
    const a = c.assembly;
    const parts = [`assembled ${num(a.assembled_tokens)}/${num(a.budget_tokens)} tokens`];
    if (a.overflow !== undefined) parts.push(a.overflow ? 'overflow' : 'no overflow');
    parts.push(`${(a.sources ?? []).length}${a.sources_truncated ? '+' : ''} sources`);
    return parts.join(', ');
  }
  if (c.kind === 'compaction' && c.compaction) {
    const k = c.compaction;
    return `${num(k.before_count)}→${num(k.after_count)}${k.ratio !== undefined ? `, ratio ${Number(k.ratio.toFixed(3))}` : ''}`;
  }
  if (c.kind === 'cache' && c.cache) {
    const k = c.cache;
    return `${k.provider ?? '?'} ${k.outcome ?? '?'}, reused ${num(k.reused_tokens)} tokens`;
  }
  return '';
}
