/** `svc fleet`: the active project's agents with their last 24 hours of runs, open review signals and containments (`/api/v1/fleet`). */
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { positiveInt } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';

export const MAX_FLEET_PAGE = 200;

interface FleetAgent {
  asset_id: string;
  name: string;
  shadow: boolean;
  approval_state: string;
  risk_tier: string;
  runs_24h?: { runs: number; by_status: Record<string, number>; last_run_at?: string };
  runs_24h_unavailable?: string;
  open_signals: { total: number };
  containments: { quarantine_id: string; status: string; action: string }[];
}

const HEADERS = ['ASSET', 'NAME', 'SHADOW', 'APPROVAL', 'RISK', 'RUNS_24H', 'FAILED_24H', 'LAST_RUN_AT', 'OPEN_SIGNALS', 'CONTAINMENT'];
const short = (v: string, prefix: string) => (v.startsWith(prefix) ? v.slice(prefix.length).toLowerCase() : v);
const row = (a: FleetAgent): Cell[] => [
  a.asset_id,
  a.name,
  a.shadow ? 'yes' : 'no',
  short(a.approval_state, 'APPROVAL_STATE_'),
  short(a.risk_tier, 'RISK_TIER_'),
  a.runs_24h ? String(a.runs_24h.runs) : '(unavailable)',
  a.runs_24h ? String(a.runs_24h.by_status.failed ?? 0) : null,
  a.runs_24h?.last_run_at ?? null,
  String(a.open_signals.total),
  a.containments.map((c) => `${c.action} (${c.status})`).join(', ') || null,
];

export function registerFleet(program: Command, ctx: Context): void {
  program
    .command('fleet')
    .description("the active project's agents: runs in the last 24 hours, open review signals, containments")
    .option('--limit <n>', `page size (server default 100, at most ${MAX_FLEET_PAGE})`, positiveInt('--limit', MAX_FLEET_PAGE))
    .option('--all', 'every page')
    .action(async (opts: { limit?: number; all?: boolean }) => {
      const { items, next_cursor } = await readPages<FleetAgent>(ctx, '/fleet', 'agents', { limit: opts.limit, all: opts.all }, { project_id: ctx.activeProject()?.value });
      ctx.print({ agents: items, next_cursor }, () => renderTable(HEADERS, items.map(row), { color: ctx.color }));
    });
}
