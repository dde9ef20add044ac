/**
 * `svc agent-sessions list|get`: agent sessions of the active project (`/api/v1/agent-sessions`,
 * `/agent-sessions/{session_key}`; needs agents:read). A session groups the runs that share a session
 * key (gen_ai.conversation.id); `svc agent-runs list --session KEY` lists its runs.
 */
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { positiveInt } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';
import { windowQuery } from '../time.js';
import { formatCostUsd, formatMs } from './agent-runs.js';

export const MAX_SESSION_LIMIT = 200;

export interface Session {
  session_key: string;
  run_count: number;
  turn_count?: number;
  started_at: string;
  ended_at: string;
  duration_ms: number;
  cost_nanos?: number;
  cost_unavailable_reason?: string;
}

const HEADERS = ['SESSION_KEY', 'RUNS', 'TURNS', 'STARTED_AT', 'ENDED_AT', 'DURATION_MS', 'COST_USD'];
const row = (s: Session): Cell[] => [s.session_key, s.run_count, s.turn_count, s.started_at, s.ended_at, formatMs(s.duration_ms), formatCostUsd(s.cost_nanos)];

export function registerAgentSessions(program: Command, ctx: Context): void {
  const sessions = program.command('agent-sessions').description('agent sessions (runs sharing a session key): list them, show one');
  const projectId = () => ctx.activeProject()?.value;

  sessions
    .command('list')
    .description('list agent sessions, newest first')
    .option('--since <time>', 'sessions started at or after: a duration before now (30m, 6h, 7d) or an RFC 3339 timestamp')
    .option('--until <time>', 'sessions started at or before: a duration before now or an RFC 3339 timestamp')
    .option('--limit <n>', `page size (server default 50, at most ${MAX_SESSION_LIMIT})`, positiveInt('--limit', MAX_SESSION_LIMIT))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { since?: string; until?: string; limit?: number; cursor?: string; all?: boolean }) => {
      // This route takes RFC 3339 only: durations are resolved here, against one clock reading.
      const { items, next_cursor } = await readPages<Session>(ctx, '/agent-sessions', 'sessions', opts, {
        project_id: projectId(),
        ...windowQuery(opts, ctx.now),
      });
      ctx.print({ sessions: items, next_cursor }, () => renderTable(HEADERS, items.map(row), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more sessions: pass --cursor ${next_cursor} (or --all)`);
    });

  sessions
    .command('get')
    .description('show one session (its runs: svc agent-runs list --session KEY)')
    .argument('<session_key>', 'the session key')
    .action(async (key: string) => {
      const session = await ctx.client().get<Session>(`/agent-sessions/${encodeURIComponent(key)}`, { query: { project_id: projectId() } });
      ctx.print(session, () => {
        const rows: Cell[][] = Object.entries(session ?? {}).map(([k, v]) =>
          k === 'cost_nanos' ? ['cost_usd', formatCostUsd(v as number)] : [k, k === 'duration_ms' ? formatMs(v as number) : (v as Cell)],
        );
        return renderTable(['FIELD', 'VALUE'], rows, { color: ctx.color });
      });
    });
}
