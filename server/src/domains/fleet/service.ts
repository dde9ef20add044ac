/**
 * The fleet: every agent (asset) of a project with its last 24 hours of runs, its active review signals
 * and the containments holding it (docs/governance.md "Fleet"). Assets come from the inventory; run
 * health from the telemetry store; when that cannot be read, the runs are reported unavailable, never 0.
 */
import type { Clock } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import type { AgentRunsStore, RunHealthRow } from '../agent-runs/store.js';
import type { AssetPosition, AssetRecord } from '../assets/store.js';
import type { QuarantineRecord } from '../quarantines/store.js';

export const FLEET_LIMIT = { default: 100, max: 200 };
export const HEALTH_WINDOW_MS = 24 * 3_600_000;

export interface FleetEntry {
  asset: AssetRecord;
  /** undefined: the telemetry store could not be read. */
  health: { runs: number; byStatus: Record<string, number>; lastStartUs: number | null } | undefined;
  signals: Record<string, number>;
  containments: QuarantineRecord[];
}

export class FleetService {
  constructor(
    private readonly control: ControlStore,
    private readonly runs: Pick<AgentRunsStore, 'runHealth'>,
    private readonly clock: Clock,
  ) {}

  /** A page of the fleet, newest asset first; up to `limit + 1` entries (the caller pages). */
  async list(projectId: string, opts: { after?: AssetPosition; limit: number }): Promise<FleetEntry[]> {
    const assets = await this.control.assets.list({ projectId }, { after: opts.after, limit: opts.limit });
    if (assets.length === 0) return [];
    const sinceUs = (this.clock.now().getTime() - HEALTH_WINDOW_MS) * 1000;
    let health: Map<string, RunHealthRow> | undefined;
    try {
      const rows = await this.runs.runHealth(projectId, [...new Set(assets.flatMap((a) => a.observationKeys))], sinceUs);
      health = new Map(rows.map((r) => [r.observationKey, r]));
    } catch {
      health = undefined;
    }
    const counts = await this.control.reviewSignals.activeCounts(projectId, assets.map((a) => a.id));
    const open = await this.control.quarantines.openOfProject(projectId);
    return assets.map((a) => ({
      asset: a,
      health: health && sumHealth(a.observationKeys.map((k) => health!.get(k)).filter((h): h is RunHealthRow => h !== undefined)),
      signals: Object.fromEntries(counts.filter((c) => c.assetId === a.id).map((c) => [c.severity, c.n])),
      containments: open.filter((q) => (q.targetKind === 'asset_id' && q.target === a.id) || (q.targetKind === 'observation_key' && a.observationKeys.includes(q.target))),
    }));
  }
}

function sumHealth(rows: RunHealthRow[]) {
  const byStatus: Record<string, number> = {};
  let runs = 0;
  let last: number | null = null;
  for (const r of rows) {
    runs += r.runs;
    for (const [s, n] of Object.entries(r.byStatus)) byStatus[s] = (byStatus[s] ?? 0) + n;
    last = last === null ? r.lastStartUs : Math.max(last, r.lastStartUs);
  }
  return { runs, byStatus, lastStartUs: last };
}
