/** The memory label store's contract, on both engines: embedded SQLite and the PostgreSQL server (docs/memory.md). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignalService } from '../../domains/assets/signals.js';
import { MemoryLabelService } from '../../domains/memory/service.js';
import type { MemoryLabelRecord, MemoryOperationsReader } from '../../domains/memory/store.js';
import type { Principal } from '../../http/principal.js';
import { randomIds } from '../../lib/clock.js';
import { fixedClock, openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const label = (over: Partial<MemoryLabelRecord>): MemoryLabelRecord => ({
  id: 'l1',
  orgId: 'o1',
  projectId: 'p1',
  itemKey: 'item',
  revision: 1,
  label: 'MEMORY_TRUST_LABEL_SUSPECT',
  reason: 'r',
  labeledBy: 'user:u1',
  labeledAt: '2026-01-01T00:00:00.000Z',
  signalOpened: false,
  signalResolved: false,
  ...over,
});

const noTelemetry: MemoryOperationsReader = {
  operations: async () => ({ rows: [], distinctSessions: 0 }),
  recordingAgent: async () => null,
};

const caller = (userId: string): Principal => ({
  kind: 'session',
  keyId: null,
  signInId: 's',
  connectionId: null,
  orgId: 'o1',
  projectId: null,
  scopes: new Set(),
  userId,
  role: 'owner',
});

describe.each(['sqlite', 'postgres'] as const)('memory label store on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  it('claim takes revisions 1, 2, 3 of an item; another item or project starts at 1', async () => {
    const take = (p: string, k: string) => store.transaction((tx) => tx.memoryLabels.claim('o1', p, k));
    expect(await take('pa', 'k')).toEqual({ revision: 1, previousLabeledAt: null, trustedRevision: 0 });
    expect((await take('pa', 'k')).revision).toBe(2);
    expect((await take('pa', 'k')).revision).toBe(3);
    expect((await take('pa', 'other')).revision).toBe(1);
    expect((await take('pb', 'k')).revision).toBe(1);
  });

  it('append moves the head: labeled_at, and the trusted revision only for a trusted label', async () => {
    await store.transaction(async (tx) => {
      await tx.memoryLabels.claim('o1', 'ph', 'k');
      await tx.memoryLabels.append(label({ id: 'h1', projectId: 'ph', itemKey: 'k', label: 'MEMORY_TRUST_LABEL_TRUSTED', labeledAt: '2026-01-01T00:00:00.001Z' }));
    });
    const second = await store.transaction(async (tx) => {
      const c = await tx.memoryLabels.claim('o1', 'ph', 'k');
      await tx.memoryLabels.append(label({ id: 'h2', projectId: 'ph', itemKey: 'k', revision: 2, label: 'MEMORY_TRUST_LABEL_QUARANTINED', labeledAt: '2026-01-01T00:00:00.002Z' }));
      return c;
    });
    expect(second).toEqual({ revision: 2, previousLabeledAt: '2026-01-01T00:00:00.001Z', trustedRevision: 1 });
    expect(await store.transaction((tx) => tx.memoryLabels.claim('o1', 'ph', 'k'))).toEqual({ revision: 3, previousLabeledAt: '2026-01-01T00:00:00.002Z', trustedRevision: 1 });
  });

  it('a rolled-back write leaves no revision behind', async () => {
    await expect(
      store.transaction(async (tx) => {
        await tx.memoryLabels.claim('o1', 'pr', 'k');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect((await store.transaction((tx) => tx.memoryLabels.claim('o1', 'pr', 'k'))).revision).toBe(1);
  });

  it('current is the highest revision; history is every revision oldest first; the flags round-trip', async () => {
    await store.memoryLabels.append(label({ id: 'c1', projectId: 'pc', revision: 1, labeledAt: '2026-01-01T00:00:01.000Z', signalOpened: true }));
    await store.memoryLabels.append(label({ id: 'c2', projectId: 'pc', revision: 2, labeledAt: '2026-01-01T00:00:02.000Z', signalResolved: true, label: 'MEMORY_TRUST_LABEL_TRUSTED' }));
    expect(await store.memoryLabels.current('pc', 'item')).toEqual(label({ id: 'c2', projectId: 'pc', revision: 2, labeledAt: '2026-01-01T00:00:02.000Z', signalResolved: true, label: 'MEMORY_TRUST_LABEL_TRUSTED' }));
    expect((await store.memoryLabels.history('pc', 'item')).map((r) => [r.id, r.signalOpened, r.signalResolved])).toEqual([
      ['c1', true, false],
      ['c2', false, true],
    ]);
    expect(await store.memoryLabels.current('pc', 'nobody')).toBeUndefined();
    expect(await store.memoryLabels.current('other-project', 'item')).toBeUndefined();
  });

  it('a revision of an item is written once (unique per project, item, revision)', async () => {
    await store.memoryLabels.append(label({ id: 'u1', projectId: 'pu' }));
    await expect(store.memoryLabels.append(label({ id: 'u2', projectId: 'pu' }))).rejects.toThrow();
  });

  it('list: newest first by (labeled_at, id), filters AND across and OR within, pages after a position', async () => {
    const at = (s: number) => `2026-01-01T00:00:0${s}.000Z`;
    await store.memoryLabels.append(label({ id: 'a', projectId: 'pl', itemKey: 'x', revision: 1, labeledAt: at(1) }));
    await store.memoryLabels.append(label({ id: 'b', projectId: 'pl', itemKey: 'y', revision: 1, labeledAt: at(2), label: 'MEMORY_TRUST_LABEL_QUARANTINED' }));
    await store.memoryLabels.append(label({ id: 'c', projectId: 'pl', itemKey: 'x', revision: 2, labeledAt: at(2), label: 'MEMORY_TRUST_LABEL_TRUSTED' }));
    await store.memoryLabels.append(label({ id: 'd', projectId: 'pl', itemKey: 'x', revision: 3, labeledAt: at(3) }));
    const ids = (rs: MemoryLabelRecord[]) => rs.map((r) => r.id);
    expect(ids(await store.memoryLabels.list({ projectId: 'pl' }, { limit: 10 }))).toEqual(['d', 'c', 'b', 'a']);
    expect(ids(await store.memoryLabels.list({ projectId: 'pl', itemKey: 'x' }, { limit: 10 }))).toEqual(['d', 'c', 'a']);
    expect(ids(await store.memoryLabels.list({ projectId: 'pl', labels: ['MEMORY_TRUST_LABEL_TRUSTED', 'MEMORY_TRUST_LABEL_QUARANTINED'] }, { limit: 10 }))).toEqual(['c', 'b']);
    expect(ids(await store.memoryLabels.list({ projectId: 'pl', itemKey: 'y', labels: ['MEMORY_TRUST_LABEL_TRUSTED'] }, { limit: 10 }))).toEqual([]);
    expect(ids(await store.memoryLabels.list({ projectId: 'pl' }, { limit: 1 }))).toEqual(['d', 'c']);
    expect(ids(await store.memoryLabels.list({ projectId: 'pl' }, { after: { labeledAt: at(2), id: 'c' }, limit: 10 }))).toEqual(['b', 'a']);
  });

  it('"concurrent PUTs both land as distinct revisions": twenty label writes at once take revisions 1..20, one signal', async () => {
    const signals = new SignalService(store, fixedClock('2026-02-01T00:00:00.000Z'), randomIds);
    const svc = new MemoryLabelService(store, noTelemetry, signals, fixedClock('2026-02-01T00:00:00.000Z'), randomIds);
    const project = { id: 'pcc', orgId: 'o1' } as Parameters<MemoryLabelService['label']>[1];
    const written = await Promise.all(
      Array.from({ length: 20 }, (_, i) => svc.label(caller(`u${i}`), project, 'hot', { label: 'MEMORY_TRUST_LABEL_QUARANTINED', reason: `r${i}` })),
    );
    expect(written.map((w) => w.revision).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const history = await store.memoryLabels.history('pcc', 'hot');
    expect(history).toHaveLength(20);
    // labeled_at strictly increases with the revision (the fixed clock would give them all one instant).
    for (let i = 1; i < history.length; i++) expect(history[i].labeledAt > history[i - 1].labeledAt).toBe(true);
    expect(written.filter((w) => w.signalOpened)).toHaveLength(1);
    expect(await store.reviewSignals.list({ projectId: 'pcc' }, { limit: 10 })).toHaveLength(1);
    expect(await store.outbox.list('pcc', { limit: 10 })).toHaveLength(1);
  });
});
