/** The signing-key, manifest and deployment stores' contract, on both engines: embedded SQLite and the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeploymentRecord, SnapshotRecord } from '../../domains/deployments/store.js';
import type { SigningKeyRecord } from '../../domains/signing/store.js';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const key = (kid: string, at = '2026-01-01T00:00:00.000Z'): SigningKeyRecord => ({
  kid,
  x: `x-${kid}`,
  sealed: `sealed-${kid}`,
  current: true,
  createdAt: at,
  createdBy: 'platform',
  retiredAt: null,
  retiredBy: null,
});

const deployment = (id: string, createdAt: string): DeploymentRecord => ({
  id,
  orgId: 'o1',
  projectId: 'p1',
  assetId: 'a1',
  manifestId: 'm1',
  environment: 'prod',
  release: null,
  configState: 'unregistered',
  currentSnapshotId: null,
  lastMatchSnapshotId: null,
  createdAt,
  createdBy: 'user:u1',
  updatedAt: createdAt,
});

describe.each(['sqlite', 'postgres'] as const)('signing stores on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const c = await openTestControl(dialect);
    store = c.store;
    drop = c.drop;
  });
  afterAll(async () => drop());

  it('signing keys: one current key; a rotation retires it and inserts the next; a stale rotation and a second first key are refused; retired keys stay listed', async () => {
    expect(await store.signingKeys.current()).toBeUndefined();
    expect(await store.signingKeys.rotate(key('k1'), null)).toBe(true);
    expect(await store.signingKeys.rotate(key('k1b'), null)).toBe(false);
    expect((await store.signingKeys.current())?.kid).toBe('k1');
    const ok = await store.transaction((tx) => tx.signingKeys.rotate(key('k2', '2026-02-01T00:00:00.000Z'), { kid: 'k1', at: '2026-02-01T00:00:00.000Z', by: 'user:u1' }));
    expect(ok).toBe(true);
    expect(await store.signingKeys.rotate(key('k3'), { kid: 'k1', at: 'x', by: 'y' })).toBe(false);
    expect((await store.signingKeys.current())?.kid).toBe('k2');
    const all = await store.signingKeys.all();
    expect(all.map((k) => [k.kid, k.current])).toEqual([['k1', false], ['k2', true]]);
    expect(all[0]).toMatchObject({ retiredAt: '2026-02-01T00:00:00.000Z', retiredBy: 'user:u1', x: 'x-k1', sealed: 'sealed-k1' });
    expect(await store.signingKeys.find('k2')).toMatchObject({ kid: 'k2', current: true });
    expect(await store.signingKeys.find('nope')).toBeUndefined();
  });

  it('manifests: stored as given, found by id', async () => {
    const r = { id: 'm1', orgId: 'o1', projectId: 'p1', assetId: 'a1', canonicalForm: '{"é":"😂"}', manifestSha256: 'ab', signature: 's', signingKeyId: 'k1', createdAt: '2026-01-01T00:00:00.000Z', createdBy: null };
    await store.manifests.insert(r);
    expect(await store.manifests.find('m1')).toEqual(r);
    expect(await store.manifests.find('m2')).toBeUndefined();
  });

  it('deployments: newest first with filters and position; setConfig is conditional on the current snapshot; snapshots newest first', async () => {
    for (const [id, at] of [['d1', '2026-01-01T00:00:00.000Z'], ['d2', '2026-01-02T00:00:00.000Z'], ['d3', '2026-01-02T00:00:00.000Z']] as const) await store.deployments.insert(deployment(id, at));
    expect((await store.deployments.list({ projectId: 'p1' }, { limit: 10 })).map((d) => d.id)).toEqual(['d3', 'd2', 'd1']);
    expect((await store.deployments.list({ projectId: 'p1' }, { limit: 1, after: { createdAt: '2026-01-02T00:00:00.000Z', id: 'd3' } })).map((d) => d.id)).toEqual(['d2', 'd1']);
    expect(await store.deployments.list({ projectId: 'p1', environment: 'staging' }, { limit: 10 })).toEqual([]);
    expect(await store.deployments.list({ projectId: 'p2' }, { limit: 10 })).toEqual([]);
    const d = (await store.deployments.find('d1'))!;
    expect(d).toEqual(deployment('d1', '2026-01-01T00:00:00.000Z'));
    const next = { ...d, configState: 'drifted' as const, currentSnapshotId: 's1', updatedAt: '2026-01-03T00:00:00.000Z' };
    expect(await store.deployments.setConfig(next, null)).toBe(true);
    expect(await store.deployments.setConfig({ ...next, currentSnapshotId: 's2' }, null)).toBe(false);
    expect(await store.deployments.setConfig({ ...next, configState: 'matching', currentSnapshotId: 's2', lastMatchSnapshotId: 's2' }, 's1')).toBe(true);
    expect(await store.deployments.find('d1')).toMatchObject({ configState: 'matching', currentSnapshotId: 's2', lastMatchSnapshotId: 's2' });
    const snap = (id: string, at: string, matches: boolean): SnapshotRecord => ({
      id,
      orgId: 'o1',
      projectId: 'p1',
      deploymentId: 'd1',
      components: [{ kind: 2, ref: 'm', version: '1', content_sha256: 'aa' }],
      configSha256: 'cc',
      matches,
      drift: matches ? null : { reason: 'component_missing', expected: { kind: 4, ref: 't', version: '', content_sha256: 'bb' } },
      registeredAt: at,
      registeredBy: 'user:u1',
    });
    await store.deployments.insertSnapshot(snap('s1', '2026-01-03T00:00:00.000Z', false));
    await store.deployments.insertSnapshot(snap('s2', '2026-01-04T00:00:00.000Z', true));
    const snaps = await store.deployments.snapshots('d1', { limit: 10 });
    expect(snaps).toEqual([snap('s2', '2026-01-04T00:00:00.000Z', true), snap('s1', '2026-01-03T00:00:00.000Z', false)]);
    expect((await store.deployments.snapshots('d1', { limit: 10, after: { registeredAt: '2026-01-04T00:00:00.000Z', id: 's2' } })).map((s) => s.id)).toEqual(['s1']);
  });
});
