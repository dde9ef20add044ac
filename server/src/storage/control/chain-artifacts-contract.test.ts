/** The chain-artifact store's contract on both engines (embedded SQLite, PostgreSQL): artifacts by project, chain and kind; paging; the append-only leaf-hash cache under concurrent fillers. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChainArtifactRecord, LeafRecord } from '../../domains/chain-proofs/store.js';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const artifact = (over: Partial<ChainArtifactRecord>): ChainArtifactRecord => ({
  id: 'c1',
  orgId: 'o1',
  projectId: 'p1',
  chainId: 'actions',
  kind: 'checkpoint',
  position: 41,
  canonicalForm: '{"seq":41}',
  sha256: 'a'.repeat(64),
  signature: 'sig',
  signingKeyId: 'k1',
  generatedAt: '2026-01-01T00:00:00.000000000Z',
  createdAt: '2026-01-01T00:00:00.000Z',
  createdBy: { userId: 'u1', apiKeyId: null },
  ...over,
});

const leaves = (from: number, to: number): LeafRecord[] =>
  Array.from({ length: to - from }, (_, i) => ({ seq: from + i, entrySha256: `${from + i}`.padStart(64, '0'), leafHash: `${from + i}`.padStart(64, 'f') }));

describe.each(['sqlite', 'postgres'] as const)('chain artifact store on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const c = await openTestControl(dialect);
    store = c.store;
    drop = c.drop;
  });
  afterAll(async () => drop?.());

  it('finds an artifact only under its own project, chain and kind; keeps a bigint position and the exact canonical form', async () => {
    const big = 2 ** 40;
    await store.chainArtifacts.insert(artifact({ id: 'x1', position: big, canonicalForm: '{"é":"\\u0000"}' }));
    expect(await store.chainArtifacts.find('p1', 'actions', 'checkpoint', 'x1')).toMatchObject({ id: 'x1', position: big, canonicalForm: '{"é":"\\u0000"}', createdBy: { userId: 'u1', apiKeyId: null } });
    expect(await store.chainArtifacts.find('p2', 'actions', 'checkpoint', 'x1')).toBeUndefined();
    expect(await store.chainArtifacts.find('p1', 'other', 'checkpoint', 'x1')).toBeUndefined();
    expect(await store.chainArtifacts.find('p1', 'actions', 'tree_head', 'x1')).toBeUndefined();
  });

  it('lists newest first by (created_at, id) with limit + 1 rows, and continues after a position', async () => {
    for (const [id, at] of [['l1', '2026-02-01T00:00:00.000Z'], ['l2', '2026-02-02T00:00:00.000Z'], ['l3', '2026-02-02T00:00:00.000Z'], ['l4', '2026-02-03T00:00:00.000Z']])
      await store.chainArtifacts.insert(artifact({ id, projectId: 'pl', kind: 'tree_head', createdAt: at }));
    const first = await store.chainArtifacts.list({ projectId: 'pl', chainId: 'actions', kind: 'tree_head', limit: 2 });
    expect(first.map((r) => r.id)).toEqual(['l4', 'l3', 'l2']);
    const next = await store.chainArtifacts.list({ projectId: 'pl', chainId: 'actions', kind: 'tree_head', limit: 2, after: { createdAt: first[1].createdAt, id: first[1].id } });
    expect(next.map((r) => r.id)).toEqual(['l2', 'l1']);
    expect(await store.chainArtifacts.list({ projectId: 'pl', chainId: 'actions', kind: 'checkpoint', limit: 2 })).toEqual([]);
  });

  it('leaf hashes: count and last from the stored run, ordered reads below a seq, concurrent overlapping fillers agree', async () => {
    expect(await store.chainArtifacts.lastLeaf('pf', 'actions')).toEqual({ count: 0, last: undefined });
    await Promise.all([store.chainArtifacts.appendLeaves('pf', 'actions', leaves(0, 700)), store.chainArtifacts.appendLeaves('pf', 'actions', leaves(0, 1200))]);
    await store.chainArtifacts.appendLeaves('pf', 'actions', leaves(1100, 1300));
    const { count, last } = await store.chainArtifacts.lastLeaf('pf', 'actions');
    expect(count).toBe(1300);
    expect(last).toEqual(leaves(1299, 1300)[0]);
    const some = await store.chainArtifacts.leafHashes('pf', 'actions', 12);
    expect(some).toEqual(leaves(0, 12).map((l) => l.leafHash));
    expect(await store.chainArtifacts.leafHashes('pf', 'other', 12)).toEqual([]);
  });
});
