import { describe, expect, it } from 'vitest';
import { useCliTestEnv } from '../testing/cli-test-env.js';

const { t, svc } = useCliTestEnv(new Date('2024-06-01T12:00:00.000Z'));
const AGENT = {
  asset_id: 'a1',
  name: 'Weather',
  shadow: false,
  approval_state: 'APPROVAL_STATE_APPROVED',
  risk_tier: 'RISK_TIER_LOW',
  observation_keys: ['svc/weather'],
  runs_24h: { runs: 4, by_status: { completed: 2, failed: 1 }, last_run_at: '2024-06-01T11:00:00.000Z' },
  open_signals: { total: 1, by_severity: { REVIEW_SIGNAL_SEVERITY_HIGH: 1 } },
  containments: [{ quarantine_id: 'q1', status: 'active', action: 'freeze_writes' }],
};

describe('svc fleet', () => {
  it('reads /fleet for the active project; JSON is the answer; a table shows runs, failures, signals and containment', async () => {
    t.api.on('GET', '/fleet', { status: 200, body: { agents: [AGENT, { ...AGENT, asset_id: 'a2', runs_24h: undefined, runs_24h_unavailable: 'telemetry_unreadable', containments: [] }], next_cursor: null } });
    const r = await svc(['fleet', '--project', 'p1']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).agents).toHaveLength(2);
    expect(t.api.requests[0]).toMatchObject({ method: 'GET', path: '/api/v1/fleet', search: 'project_id=p1' });
    const table = await svc(['fleet', '--project', 'p1', '--no-color'], { stdoutTTY: true });
    expect(table.stdout).toMatch(/a1\s+Weather\s+no\s+approved\s+low\s+4\s+1\s+2024-06-01T11:00:00.000Z\s+1\s+freeze_writes \(active\)/);
    expect(table.stdout).toMatch(/a2\s+Weather.*\(unavailable\)/);
  });

  it('--limit above 200 is a usage error and sends nothing', async () => {
    const r = await svc(['fleet', '--limit', '201', '--project', 'p1']);
    expect(r.code).toBe(2);
    expect(t.api.requests).toEqual([]);
  });
});
