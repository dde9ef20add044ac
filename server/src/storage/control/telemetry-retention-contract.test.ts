/** The telemetry retention store's contract (docs/retention.md), on both engines: embedded SQLite and the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const by = { userId: 'u1', apiKeyId: 'k1' };

describe.each(['sqlite', 'postgres'] as const)('telemetry retention store on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
    await store.organizations.insert({ id: 'o1', name: 'o', createdAt: '2026-01-01T00:00:00.000Z' });
    for (const id of ['p1', 'p2', 'p3', 'p4'])
      await store.projects.insert({ id, orgId: 'o1', name: id, samplingRate: 1, createdAt: '2026-01-01T00:00:00.000Z', deletedAt: null });
  });
  afterAll(async () => drop());

  const replace = (projectId: string, windows: { signal: 'SIGNAL_METRICS' | 'SIGNAL_SPANS' | 'SIGNAL_LOGS'; retentionDays: number }[], at = 't') =>
    store.transaction((tx) => tx.telemetryRetention.replace(projectId, 'o1', windows, by, at));

  it('replace stores the whole set and returns the one it replaced; windows round-trip with who and when', async () => {
    expect(await store.telemetryRetention.windows('p1')).toEqual([]);
    expect(await replace('p1', [{ signal: 'SIGNAL_SPANS', retentionDays: 7 }, { signal: 'SIGNAL_LOGS', retentionDays: 3650 }], '2026-01-02T00:00:00.000Z')).toEqual([]);
    const stored = await store.telemetryRetention.windows('p1');
    expect(stored.sort((a, b) => a.signal.localeCompare(b.signal))).toEqual([
      { signal: 'SIGNAL_LOGS', retentionDays: 3650, updatedBy: by, updatedAt: '2026-01-02T00:00:00.000Z' },
      { signal: 'SIGNAL_SPANS', retentionDays: 7, updatedBy: by, updatedAt: '2026-01-02T00:00:00.000Z' },
    ]);
    const previous = await replace('p1', [{ signal: 'SIGNAL_METRICS', retentionDays: 1 }]);
    expect(previous.map((w) => w.signal).sort()).toEqual(['SIGNAL_LOGS', 'SIGNAL_SPANS']);
    expect((await store.telemetryRetention.windows('p1')).map((w) => [w.signal, w.retentionDays])).toEqual([['SIGNAL_METRICS', 1]]);
    expect(await store.telemetryRetention.windows('p2')).toEqual([]);
  });

  it('a replacement rolled back changes nothing', async () => {
    await replace('p2', [{ signal: 'SIGNAL_LOGS', retentionDays: 5 }]);
    await expect(
      store.transaction(async (tx) => {
        await tx.telemetryRetention.replace('p2', 'o1', [], by, 't2');
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect((await store.telemetryRetention.windows('p2')).map((w) => w.retentionDays)).toEqual([5]);
  });

  it('concurrent replacements land one at a time: each lands whole and each sees a whole set before it', async () => {
    const sets = [[{ signal: 'SIGNAL_SPANS' as const, retentionDays: 2 }], [{ signal: 'SIGNAL_METRICS' as const, retentionDays: 4 }, { signal: 'SIGNAL_LOGS' as const, retentionDays: 4 }], []];
    const key = (ws: { signal: string; retentionDays: number }[]) => JSON.stringify(ws.map((w) => [w.signal, w.retentionDays]).sort());
    const allowed = new Set([key([]), ...sets.map(key)]);
    for (let round = 0; round < 3; round++) {
      const seen = await Promise.all(Array.from({ length: 9 }, (_, i) => replace('p3', sets[i % 3])));
      for (const s of seen) expect(allowed.has(key(s))).toBe(true);
      expect(allowed.has(key(await store.telemetryRetention.windows('p3')))).toBe(true);
    }
  });

  it('live() lists the windows of live projects only; forgetProject removes them', async () => {
    await replace('p4', [{ signal: 'SIGNAL_SPANS', retentionDays: 30 }]);
    expect((await store.telemetryRetention.live()).filter((w) => w.projectId === 'p4')).toEqual([{ projectId: 'p4', orgId: 'o1', signal: 'SIGNAL_SPANS', retentionDays: 30 }]);
    await store.projects.markDeleted('p4', '2026-01-03T00:00:00.000Z');
    expect((await store.telemetryRetention.live()).some((w) => w.projectId === 'p4')).toBe(false);
    await store.telemetryRetention.forgetProject('p4');
    expect(await store.telemetryRetention.windows('p4')).toEqual([]);
  });
});
