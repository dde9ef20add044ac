/** The datasets store's contract, on both engines: embedded SQLite and the PostgreSQL server (docs/evaluations-datasets.md). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatasetCase } from '../../domains/evaluations/datasets/case.js';
import type { DatasetItemRow, DatasetRecord, DatasetVersionRecord } from '../../domains/evaluations/datasets/store.js';
import type { ResultRecord } from '../../domains/evaluations/results/store.js';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const AT = '2026-01-01T00:00:00.000Z';
const dataset = (over: Partial<DatasetRecord>): DatasetRecord => ({
  orgId: 'o1',
  projectId: 'p1',
  datasetId: 'd',
  displayName: 'D',
  description: '',
  latestVersion: 0,
  createdAt: AT,
  createdBy: 'user:u1',
  updatedAt: AT,
  updatedBy: 'user:u1',
  ...over,
});
const aCase = (runId: string): DatasetCase => ({
  run: {
    run_id: runId,
    root_step_id: 'a'.repeat(16),
    status: 'completed',
    started_at: '2026-01-01T00:00:00.000000Z',
    duration_ms: 12,
    step_count: 1,
    error_steps: 0,
    tool_calls: 0,
    model_calls: 0,
    cost_nanos: null,
    cost_unavailable_reason: 'no_model_calls',
    safety_error_steps: null,
    session_key: null,
    release: null,
    content: [],
  },
  steps: [],
  withheld_classes: [],
});
const id = (c: string) => c.repeat(64);
const item = (itemId: string, position: number): DatasetItemRow => ({ itemId, position, review: { annotationId: `ann-${position}`, reviewerId: 'u1', reviewedAt: AT } });
const version = (over: Partial<DatasetVersionRecord>): DatasetVersionRecord => ({
  projectId: 'p1',
  datasetId: 'd',
  version: 1,
  itemCount: 0,
  change: 'promotion',
  changedCount: 0,
  sealedAt: AT,
  sealedBy: 'user:u1',
  ...over,
});
let n = 0;
const result = (projectId: string, subjectRef: string, subjectKind = 'SUBJECT_KIND_DATASET_ITEM'): ResultRecord => ({
  id: `dr${String(++n).padStart(4, '0')}`,
  orgId: 'o1',
  projectId,
  evaluatorId: 'ev',
  evaluatorVersion: 1,
  metricName: 'm',
  mode: 'EVALUATION_MODE_EXPERIMENT',
  subjectKind,
  subjectRef,
  numericValue: 1,
  label: null,
  explanation: null,
  subjectRelease: null,
  legacySource: '',
  occurredAt: '2026-01-01T00:00:00.000000Z',
  evaluatedAt: AT,
  execution: null,
});

describe.each(['sqlite', 'postgres'] as const)('datasets store on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  const seal = (projectId: string, datasetId: string, v: number, items: DatasetItemRow[], cases: string[]) =>
    store.transaction(async (tx) => {
      const ds = await tx.datasets.lock(projectId, datasetId);
      expect(ds?.latestVersion).toBe(v - 1);
      await tx.datasets.seal({
        version: version({ projectId, datasetId, version: v, itemCount: items.length, changedCount: cases.length }),
        items,
        cases: cases.map((c) => ({ caseId: id(c), case: aCase(c.repeat(32)) })),
      });
    });

  it('create, get, list by id with paging, update of the editable metadata; the same id in the project again is a unique violation, in another project fine', async () => {
    await store.datasets.create(dataset({ projectId: 'pa', datasetId: 'b' }));
    await store.datasets.create(dataset({ projectId: 'pa', datasetId: 'a' }));
    await expect(store.datasets.create(dataset({ projectId: 'pa', datasetId: 'a' }))).rejects.toThrow();
    await store.datasets.create(dataset({ projectId: 'pb', datasetId: 'a' }));
    expect(await store.datasets.get('pa', 'a')).toEqual(dataset({ projectId: 'pa', datasetId: 'a' }));
    expect(await store.datasets.get('pa', 'zz')).toBeUndefined();
    expect((await store.datasets.list('pa', { limit: 1 })).map((d) => d.datasetId)).toEqual(['a', 'b']);
    expect((await store.datasets.list('pa', { after: 'a', limit: 5 })).map((d) => d.datasetId)).toEqual(['b']);
    const u = await store.datasets.update('pa', 'a', { description: 'new', updatedAt: '2026-01-02T00:00:00.000Z', updatedBy: 'user:u2' });
    expect(u).toMatchObject({ displayName: 'D', description: 'new', updatedBy: 'user:u2', createdBy: 'user:u1' });
    expect(await store.datasets.update('pa', 'missing', { displayName: 'x', updatedAt: AT, updatedBy: 'u' })).toBeUndefined();
  });

  it('sealing writes the version, its items by position and new cases; a later version keeps the earlier one unchanged ("sealed versions never change")', async () => {
    await store.datasets.create(dataset({ projectId: 'ps', datasetId: 'd' }));
    await seal('ps', 'd', 1, [item(id('1'), 1), item(id('2'), 2)], ['1', '2']);
    expect((await store.datasets.get('ps', 'd'))?.latestVersion).toBe(1);
    await seal('ps', 'd', 2, [item(id('2'), 2), item(id('3'), 3)], ['3']);
    expect((await store.datasets.versions('ps', 'd')).map((v) => v.version)).toEqual([1, 2]);
    expect((await store.datasets.itemRows('ps', 'd', 1)).map((i) => i.itemId)).toEqual([id('1'), id('2')]);
    expect((await store.datasets.itemRows('ps', 'd', 2)).map((i) => i.itemId)).toEqual([id('2'), id('3')]);
    const page = await store.datasets.items('ps', 'd', 2, { limit: 1 });
    expect(page.map((i) => [i.itemId, i.position, i.case.run.run_id])).toEqual([[id('2'), 2, '2'.repeat(32)]]);
    expect((await store.datasets.items('ps', 'd', 2, { afterPosition: 2, limit: 5 })).map((i) => i.itemId)).toEqual([id('3')]);
    expect((await store.datasets.item('ps', 'd', 1, id('1')))?.review).toEqual({ annotationId: 'ann-1', reviewerId: 'u1', reviewedAt: AT });
    expect(await store.datasets.item('ps', 'd', 1, id('3'))).toBeUndefined();
    expect(await store.datasets.knownCases('ps', [id('1'), id('3'), id('9')])).toEqual(new Set([id('1'), id('3')]));
    expect(await store.datasets.knownCases('other', [id('1')])).toEqual(new Set());
    // A second sealing of an existing version number is refused by the key.
    await expect(
      store.transaction((tx) => tx.datasets.seal({ version: version({ projectId: 'ps', datasetId: 'd', version: 2 }), items: [], cases: [] })),
    ).rejects.toThrow();
    expect((await store.datasets.itemRows('ps', 'd', 2)).length).toBe(2);
  });

  it('"a version cited by a stored score": only dataset-item results under `<dataset>/<version>/` of the same project cite a version', async () => {
    await store.datasets.create(dataset({ projectId: 'pc', datasetId: 'd_x' }));
    await store.datasets.create(dataset({ projectId: 'pc', datasetId: 'dax' }));
    await seal('pc', 'd_x', 1, [item(id('4'), 1)], ['4']);
    await seal('pc', 'd_x', 2, [item(id('4'), 1)], []);
    await seal('pc', 'dax', 1, [item(id('4'), 1)], []);
    expect(await store.datasets.citedVersions('pc', 'd_x')).toEqual([]);
    // Neither another kind, another project, nor a look-alike id ('_' is no wildcard) cites it.
    await store.evaluationResults.insert(result('pc', `d_x/2/${id('4')}`, 'SUBJECT_KIND_AGENT_RUN'));
    await store.evaluationResults.insert(result('other', `d_x/2/${id('4')}`));
    await store.evaluationResults.insert(result('pc', `dax/1/${id('4')}`));
    await store.evaluationResults.insert(result('pc', `d_x/21/${id('4')}`));
    expect(await store.datasets.citedVersions('pc', 'd_x')).toEqual([]);
    expect(await store.datasets.citedVersions('pc', 'dax')).toEqual([1]);
    await store.evaluationResults.insert(result('pc', `d_x/2/${id('4')}`));
    expect(await store.datasets.citedVersions('pc', 'd_x')).toEqual([2]);
  });

  it('delete removes the dataset, its versions and items, and the cases no other dataset of the project holds', async () => {
    await store.datasets.create(dataset({ projectId: 'pd', datasetId: 'one' }));
    await store.datasets.create(dataset({ projectId: 'pd', datasetId: 'two' }));
    await seal('pd', 'one', 1, [item(id('5'), 1), item(id('6'), 2)], ['5', '6']);
    await seal('pd', 'two', 1, [item(id('6'), 1)], []);
    await store.transaction((tx) => tx.datasets.delete('pd', 'one'));
    expect(await store.datasets.get('pd', 'one')).toBeUndefined();
    expect(await store.datasets.versions('pd', 'one')).toEqual([]);
    expect(await store.datasets.itemRows('pd', 'one', 1)).toEqual([]);
    expect(await store.datasets.knownCases('pd', [id('5'), id('6')])).toEqual(new Set([id('6')]));
    expect((await store.datasets.item('pd', 'two', 1, id('6')))?.case.run.run_id).toBe('6'.repeat(32));
  });
});
