/** The asset, review-signal and outbox stores' contract, on both engines: embedded SQLite and the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignalService } from '../../domains/assets/signals.js';
import { AssetService, type SightingsReader } from '../../domains/assets/service.js';
import { newAsset } from '../../domains/assets/new-asset.js';
import type { AssetRecord, SignalRecord } from '../../domains/assets/store.js';
import type { ProjectService } from '../../domains/projects/service.js';
import { randomIds } from '../../lib/clock.js';
import { fixedClock, openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const asset = (over: Partial<AssetRecord>): AssetRecord =>
  newAsset({ id: 'a1', orgId: 'o1', projectId: 'p1', name: 'bot', origin: 'declared', createdBy: 'user:u1', createdAt: '2026-01-01T00:00:00.000Z', ...over });

const signal = (over: Partial<SignalRecord>): SignalRecord => ({
  id: 's1',
  orgId: 'o1',
  projectId: 'p1',
  dedupKey: 'K:x',
  kind: 'REVIEW_SIGNAL_KIND_SHADOW_ASSET',
  status: 'REVIEW_SIGNAL_STATUS_OPEN',
  severity: 'REVIEW_SIGNAL_SEVERITY_HIGH',
  subjectRef: 'x',
  detailCode: 'undeclared_observation_key',
  assetId: 'a1',
  evidenceRef: null,
  openedAt: '2026-01-01T00:00:00.000Z',
  lastSeenAt: '2026-01-01T00:00:00.000Z',
  acknowledgedBy: null,
  acknowledgedAt: null,
  resolvedBy: null,
  resolvedAt: null,
  resolutionCode: null,
  resolutionReason: null,
  ...over,
});

describe.each(['sqlite', 'postgres'] as const)('asset stores on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  it('an asset round-trips with its observation keys in code point order', async () => {
    await store.assets.insert(asset({ id: 'rt' }));
    expect(await store.assets.mapKeys('p1', 'rt', ['b', 'B', 'a'], '2026-01-01T00:00:00.000Z')).toBe(true);
    expect(await store.assets.find('rt')).toEqual(asset({ id: 'rt', observationKeys: ['B', 'a', 'b'] }));
    expect(await store.assets.find('nope')).toBeUndefined();
  });

  it('"an observation key maps to at most one current asset per project": mapKeys refuses a taken key and writes nothing', async () => {
    expect(await store.assets.mapKeys('pk', 'x1', ['k1', 'k2'], 'now')).toBe(true);
    expect(await store.assets.mapKeys('pk', 'x2', ['k3', 'k2'], 'now')).toBe(false);
    expect([...(await store.assets.assetsOfKeys('pk', ['k1', 'k2', 'k3']))]).toEqual([
      ['k1', 'x1'],
      ['k2', 'x1'],
    ]);
    expect(await store.assets.mapKeys('other', 'x3', ['k1'], 'now')).toBe(true);
  });

  it('update applies only to the expected version', async () => {
    await store.assets.insert(asset({ id: 'v' }));
    expect(await store.assets.update(asset({ id: 'v', version: 2, ownerTeam: 't' }), 1)).toBe(true);
    expect(await store.assets.update(asset({ id: 'v', version: 2, ownerTeam: 'late' }), 1)).toBe(false);
    expect((await store.assets.find('v'))?.ownerTeam).toBe('t');
  });

  it('signals: one per (project, dedup key); touch moves last_seen_at forward only, and only while active', async () => {
    expect(await store.reviewSignals.insertIfNew(signal({ id: 'd1', projectId: 'ps' }))).toBe(true);
    expect(await store.reviewSignals.insertIfNew(signal({ id: 'd2', projectId: 'ps' }))).toBe(false);
    await store.reviewSignals.touch('d1', '2026-02-01T00:00:00.000Z');
    await store.reviewSignals.touch('d1', '2026-01-15T00:00:00.000Z');
    expect((await store.reviewSignals.find('d1'))?.lastSeenAt).toBe('2026-02-01T00:00:00.000Z');
    const resolved = signal({ id: 'd1', projectId: 'ps', status: 'REVIEW_SIGNAL_STATUS_RESOLVED', resolvedBy: 'system', resolvedAt: 'x', resolutionCode: 'reviewed' });
    expect(await store.reviewSignals.transition(resolved, ['REVIEW_SIGNAL_STATUS_OPEN'])).toBe(true);
    expect(await store.reviewSignals.transition(resolved, ['REVIEW_SIGNAL_STATUS_OPEN'])).toBe(false);
    await store.reviewSignals.touch('d1', '2026-03-01T00:00:00.000Z');
    expect(await store.reviewSignals.find('d1')).toMatchObject({ status: 'REVIEW_SIGNAL_STATUS_RESOLVED', lastSeenAt: '2026-02-01T00:00:00.000Z' });
  });

  it('the outbox takes part in transactions: a failed change leaves no notification', async () => {
    const entry = {
      id: 'ob1',
      seq: 1,
      orgId: 'o1',
      projectId: 'po',
      source: 'review_signals' as const,
      event: 'opened' as const,
      signalId: 's',
      kind: 'REVIEW_SIGNAL_KIND_SHADOW_ASSET' as const,
      severity: 'REVIEW_SIGNAL_SEVERITY_HIGH' as const,
      subjectRef: 'x',
      assetId: null,
      occurredAt: '2026-01-01T00:00:00.000Z',
      payload: signal({}),
      deliveredAt: null,
    };
    await expect(
      store.transaction(async (tx) => {
        await tx.outbox.append(entry);
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(await store.outbox.list('po', { limit: 10 })).toEqual([]);
    await store.outbox.append(entry);
    await store.outbox.append({ ...entry, id: 'ob0', seq: 2 });
    expect((await store.outbox.list('po', { limit: 10 })).map((o) => o.id)).toEqual(['ob1', 'ob0']);
    expect((await store.outbox.list('po', { limit: 10, after: { seq: 1, id: 'ob1' } })).map((o) => o.id)).toEqual(['ob0']);
  });

  it('discoverAssets run concurrently from several service instances (several nodes) creates one asset, one signal, one notification per key', async () => {
    await store.organizations.insert({ id: 'org-d', name: 'd', createdAt: '2026-01-01T00:00:00.000Z' });
    await store.projects.insert({ id: 'proj-d', orgId: 'org-d', name: 'd', samplingRate: 1, createdAt: '2026-01-01T00:00:00.000Z', deletedAt: null });
    const keys = ['k1', 'k2', 'k3'];
    const sightings: SightingsReader = {
      identityKeys: async (projectId, { after }) => (projectId === 'proj-d' ? keys.filter((k) => after === undefined || k > after) : []),
      sightings: async (_p, ks) => ks.map((k) => ({ observationKey: k, source: 'bearer_token', apiKeyId: '', firstSeenUs: 1, lastSeenUs: 2, sightingCount: 1 })),
      sightingEnvironments: async () => [],
    };
    const nodes = Array.from({ length: 4 }, () => {
      const clock = fixedClock('2026-01-02T00:00:00.000Z');
      return new AssetService(store, {} as ProjectService, sightings, clock, randomIds, new SignalService(store, clock, randomIds));
    });
    const created = await Promise.all(nodes.map((n) => n.discoverAssets('proj-d')));
    expect(created.flat()).toHaveLength(3);
    const assets = await store.assets.list({ projectId: 'proj-d' }, { limit: 10 });
    expect(assets.map((a) => a.observationKeys[0]).sort()).toEqual(keys);
    expect(await store.reviewSignals.list({ projectId: 'proj-d' }, { limit: 10 })).toHaveLength(3);
    expect(await store.outbox.list('proj-d', { limit: 10 })).toHaveLength(3);
  });
});
