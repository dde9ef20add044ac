/** The content-policy store's contract, on both engines: embedded SQLite and the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deniedGrid } from '../../domains/content-policy/model.js';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const by = { userId: 'u1', apiKeyId: null };

describe.each(['sqlite', 'postgres'] as const)('content-policy store on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  it('put: version 1 then +1; expected_version is atomic (0 only when none); the grid round-trips', async () => {
    const grid = deniedGrid();
    grid.tool_arguments.read = 'allow_metadata';
    const a = await store.contentPolicies.put({ projectId: 'p1', orgId: 'o1', grid, by, at: '2026-01-01T00:00:00.000Z' });
    expect(a).toEqual({ ok: true, record: { projectId: 'p1', orgId: 'o1', grid, version: 1, updatedBy: by, updatedAt: '2026-01-01T00:00:00.000Z' } });
    expect(await store.contentPolicies.put({ projectId: 'p1', orgId: 'o1', grid, by, at: 'x', expectedVersion: 0 })).toEqual({ ok: false, currentVersion: 1 });
    expect(await store.contentPolicies.put({ projectId: 'p1', orgId: 'o1', grid, by, at: 'x', expectedVersion: 5 })).toEqual({ ok: false, currentVersion: 1 });
    const b = await store.contentPolicies.put({ projectId: 'p1', orgId: 'o1', grid: deniedGrid(), by, at: '2026-01-02T00:00:00.000Z', expectedVersion: 1 });
    expect(b.ok && b.record.version).toBe(2);
    const racing = await Promise.all(Array.from({ length: 6 }, () => store.contentPolicies.put({ projectId: 'p2', orgId: 'o1', grid, by, at: 'x', expectedVersion: 0 })));
    expect(racing.filter((r) => r.ok)).toHaveLength(1);
  });

  it('concurrent unconditional puts all land, each at its own version; concurrent retention writes all land and leave one whole set, never a mix', async () => {
    const grids = Array.from({ length: 10 }, (_, i) => {
      const g = deniedGrid();
      if (i % 2) g.replay_dom.store = 'allow';
      return g;
    });
    const puts = await Promise.all(grids.map((grid, i) => store.contentPolicies.put({ projectId: 'p4', orgId: 'o1', grid, by, at: `t${i}` })));
    expect(puts.every((r) => r.ok)).toBe(true);
    expect(puts.map((r) => (r.ok ? r.record.version : 0)).sort((a, b) => a - b)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
    expect((await store.contentPolicies.find('p4'))!.version).toBe(10);
    const sets = [
      [{ contentClass: 'replay_dom', retentionDays: 3 }],
      [{ contentClass: 'memory_item', retentionDays: 4 }, { contentClass: 'replay_dom', retentionDays: 5 }],
      [{ contentClass: 'model_transcript', retentionDays: 6 }],
    ] as const;
    for (let round = 0; round < 3; round++) {
      await Promise.all(Array.from({ length: 9 }, (_, i) => store.contentPolicies.putRetention('p5', 'o1', [...sets[i % 3]], by, 't')));
      const now = (await store.contentPolicies.retention('p5')).map((w) => ({ contentClass: w.contentClass, retentionDays: w.retentionDays }));
      expect(sets.map((s) => JSON.stringify(s))).toContain(JSON.stringify(now));
    }
  });

  it('retention windows are replaced whole; refusal counts of the same minute and cell add up; filters and order', async () => {
    await store.contentPolicies.putRetention('p3', 'o1', [{ contentClass: 'replay_dom', retentionDays: 30 }, { contentClass: 'memory_item', retentionDays: 7 }], by, 't');
    await store.contentPolicies.putRetention('p3', 'o1', [{ contentClass: 'replay_dom', retentionDays: 10 }], by, 't2');
    expect(await store.contentPolicies.retention('p3')).toEqual([{ contentClass: 'replay_dom', retentionDays: 10, updatedBy: by, updatedAt: 't2' }]);
    const row = { projectId: 'p3', contentClass: 'model_transcript', boundary: 'store', decider: 'policy', decision: 'deny', count: 2 } as const;
    await store.contentPolicies.addRefusals([{ ...row, minute: '2026-01-01T00:00:00.000Z' }]);
    await store.contentPolicies.addRefusals([{ ...row, minute: '2026-01-01T00:00:00.000Z', count: 3 }, { ...row, minute: '2026-01-01T00:01:00.000Z', boundary: 'read' }]);
    const all = await store.contentPolicies.refusals({ projectId: 'p3', limit: 10 });
    expect(all.map((r) => [r.minute, r.boundary, r.count])).toEqual([
      ['2026-01-01T00:01:00.000Z', 'read', 2],
      ['2026-01-01T00:00:00.000Z', 'store', 5],
    ]);
    expect(await store.contentPolicies.refusals({ projectId: 'p3', boundary: 'store', limit: 10 })).toHaveLength(1);
    expect(await store.contentPolicies.refusals({ projectId: 'p3', from: '2026-01-01T00:01:00.000Z', limit: 10 })).toHaveLength(1);
    await store.contentPolicies.forgetProject('p3');
    expect(await store.contentPolicies.refusals({ projectId: 'p3', limit: 10 })).toEqual([]);
    expect(await store.contentPolicies.retention('p3')).toEqual([]);
  });
});
