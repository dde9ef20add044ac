/** The human judgments store's contract, on both engines: embedded SQLite and the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnnotationRecord } from '../../domains/evaluations/annotations/store.js';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

let seq = 0;
const judgment = (over: Partial<AnnotationRecord>): AnnotationRecord => ({
  id: `a-${String(++seq).padStart(5, '0')}`,
  orgId: 'o1',
  projectId: 'p1',
  runId: 'r1',
  metricName: 'm',
  numericValue: 1,
  label: null,
  comment: '',
  authorId: 'u1',
  createdAt: `2026-01-01T00:00:${String(seq % 60).padStart(2, '0')}.000Z`,
  ...over,
});

describe.each(['sqlite', 'postgres'] as const)('annotation store on %s', (dialect) => {
  let store: ControlStore;
  let close: () => Promise<void>;
  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    close = t.drop;
  });
  afterAll(async () => close?.());

  it('replace keeps one judgment per author, run and metric, and names the replaced id', async () => {
    const a = judgment({ projectId: 'pr' });
    expect(await store.annotations.replace(a)).toEqual({ replacedId: null });
    const b = judgment({ projectId: 'pr', numericValue: 2 });
    expect(await store.annotations.replace(b)).toEqual({ replacedId: a.id });
    await store.annotations.replace(judgment({ projectId: 'pr', authorId: 'u2' }));
    await store.annotations.replace(judgment({ projectId: 'pr', metricName: 'other' }));
    const rows = await store.annotations.list({ projectId: 'pr' }, { limit: 10 });
    expect(rows).toHaveLength(3);
    expect(await store.annotations.get('pr', a.id)).toBeUndefined();
    expect(await store.annotations.get('pr', b.id)).toMatchObject({ numericValue: 2, label: null });
    expect(await store.annotations.get('other-project', b.id)).toBeUndefined();
  });

  it('concurrent replaces of one author leave exactly one row', async () => {
    await Promise.all(Array.from({ length: 8 }, () => store.annotations.replace(judgment({ projectId: 'pc' }))));
    expect(await store.annotations.list({ projectId: 'pc' }, { limit: 10 })).toHaveLength(1);
  });

  it('list filters by runs, metric and author, oldest first, and pages after a position; an empty run set matches nothing', async () => {
    const rows = [judgment({ projectId: 'pl', runId: 'x' }), judgment({ projectId: 'pl', runId: 'y', authorId: 'u2' }), judgment({ projectId: 'pl', runId: 'z', metricName: 'n' })];
    for (const r of rows) await store.annotations.replace(r);
    const ids = async (f: object, o: { after?: { createdAt: string; id: string }; limit: number } = { limit: 10 }) =>
      (await store.annotations.list({ projectId: 'pl', ...f }, o)).map((r) => r.id);
    expect(await ids({})).toEqual(rows.map((r) => r.id));
    expect(await ids({ runIds: ['x', 'z'] })).toEqual([rows[0].id, rows[2].id]);
    expect(await ids({ runIds: [] })).toEqual([]);
    expect(await ids({ metricName: 'n' })).toEqual([rows[2].id]);
    expect(await ids({ authorId: 'u2' })).toEqual([rows[1].id]);
    expect(await ids({}, { after: { createdAt: rows[0].createdAt, id: rows[0].id }, limit: 1 })).toEqual([rows[1].id]);
  });
});
