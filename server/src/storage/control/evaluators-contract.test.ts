/** The evaluator and sampling-rule stores' contract, on both engines: embedded SQLite and the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EvaluatorService } from '../../domains/evaluations/evaluators/service.js';
import { SamplingRuleService } from '../../domains/evaluations/evaluators/sampling-rules.js';
import type { EvaluatorHead, StoredSamplingRule } from '../../domains/evaluations/evaluators/store.js';
import type { EvaluatorVersionRecord } from '../../domains/evaluations/model.js';
import type { Principal } from '../../http/principal.js';
import type { ProjectRecord } from '../../domains/projects/store.js';
import { fixedClock, openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const AT = '2026-01-01T00:00:00.000Z';
const head = (over: Partial<EvaluatorHead>): EvaluatorHead => ({ orgId: 'o1', projectId: 'p1', evaluatorId: 'e', kind: 'EVALUATOR_KIND_DETERMINISTIC', latestVersion: 1, createdAt: AT, createdBy: 'user:u1', ...over });
const version = (over: Partial<EvaluatorVersionRecord>): EvaluatorVersionRecord => ({
  orgId: 'o1',
  projectId: 'p1',
  evaluatorId: 'e',
  version: 1,
  displayName: 'E',
  metricName: 'm',
  kind: 'EVALUATOR_KIND_DETERMINISTIC',
  configJson: '{"measurement":"run.duration_ms"}',
  createdAt: AT,
  createdBy: 'user:u1',
  ...over,
});
const rule = (over: Partial<StoredSamplingRule>): StoredSamplingRule => ({
  ruleId: 'r',
  orgId: 'o1',
  projectId: 'p1',
  evaluator: { evaluator_id: 'e', version: 1 },
  subjectKind: 'SUBJECT_KIND_AGENT_RUN',
  samplingRate: 0.5,
  perTickLimit: 10,
  enabled: true,
  createdAt: AT,
  createdBy: 'user:u1',
  updatedAt: AT,
  updatedBy: 'user:u1',
  ...over,
});
const caller: Principal = { kind: 'api_key', keyId: 'k1', signInId: null, connectionId: null, orgId: 'o1', projectId: null, scopes: new Set(), userId: null, role: null };

describe.each(['sqlite', 'postgres'] as const)('evaluator stores on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  it('create writes the evaluator and version 1; the same id in the project again is a unique violation, in another project it is fine', async () => {
    await store.transaction((tx) => tx.evaluators.create(head({ projectId: 'pa' }), version({ projectId: 'pa' })));
    expect(await store.evaluators.head('pa', 'e')).toEqual(head({ projectId: 'pa' }));
    expect(await store.evaluators.version('pa', 'e', 1)).toEqual(version({ projectId: 'pa' }));
    await expect(store.transaction((tx) => tx.evaluators.create(head({ projectId: 'pa' }), version({ projectId: 'pa' })))).rejects.toThrow();
    await store.transaction((tx) => tx.evaluators.create(head({ projectId: 'pb' }), version({ projectId: 'pb' })));
    expect(await store.evaluators.version('pa', 'e', 2)).toBeUndefined();
    expect(await store.evaluators.head('pc', 'e')).toBeUndefined();
  });

  it('config_json round-trips exactly as sent (whitespace, key order, unicode)', async () => {
    const text = '{ "measurement" :\n "run.duration_ms"  , "_": "é€𝄞" }';
    await store.transaction((tx) => tx.evaluators.create(head({ projectId: 'px' }), version({ projectId: 'px', configJson: text })));
    expect((await store.evaluators.version('px', 'e', 1))?.configJson).toBe(text);
  });

  it('lock answers the head (undefined when missing); append writes the version and moves latest_version; a version is written once', async () => {
    await store.transaction((tx) => tx.evaluators.create(head({ projectId: 'pl' }), version({ projectId: 'pl' })));
    await store.transaction(async (tx) => {
      expect((await tx.evaluators.lock('pl', 'e'))?.latestVersion).toBe(1);
      expect(await tx.evaluators.lock('pl', 'nobody')).toBeUndefined();
      await tx.evaluators.append(version({ projectId: 'pl', version: 2, metricName: 'm2' }));
    });
    expect((await store.evaluators.head('pl', 'e'))?.latestVersion).toBe(2);
    expect((await store.evaluators.version('pl', 'e', 2))?.metricName).toBe('m2');
    await expect(store.evaluators.append(version({ projectId: 'pl', version: 2 }))).rejects.toThrow();
  });

  it('list: by evaluator id with the latest version, kinds OR-ed, pages after an id', async () => {
    for (const [id, kind] of [['b', 'EVALUATOR_KIND_LLM_JUDGE'], ['a', 'EVALUATOR_KIND_DETERMINISTIC'], ['c', 'EVALUATOR_KIND_DETERMINISTIC']] as const)
      await store.transaction((tx) => tx.evaluators.create(head({ projectId: 'pq', evaluatorId: id, kind }), version({ projectId: 'pq', evaluatorId: id, kind })));
    await store.transaction((tx) => tx.evaluators.append(version({ projectId: 'pq', evaluatorId: 'a', version: 2, displayName: 'A2' })));
    const all = await store.evaluators.list({ projectId: 'pq' }, { limit: 10 });
    expect(all.map((r) => [r.head.evaluatorId, r.head.latestVersion, r.latest.version, r.latest.displayName])).toEqual([
      ['a', 2, 2, 'A2'],
      ['b', 1, 1, 'E'],
      ['c', 1, 1, 'E'],
    ]);
    expect(all[0].head).toEqual(head({ projectId: 'pq', evaluatorId: 'a', latestVersion: 2 }));
    expect((await store.evaluators.list({ projectId: 'pq', kinds: ['EVALUATOR_KIND_LLM_JUDGE'] }, { limit: 10 })).map((r) => r.head.evaluatorId)).toEqual(['b']);
    expect((await store.evaluators.list({ projectId: 'pq' }, { limit: 1 })).map((r) => r.head.evaluatorId)).toEqual(['a', 'b']);
    expect((await store.evaluators.list({ projectId: 'pq' }, { after: 'a', limit: 10 })).map((r) => r.head.evaluatorId)).toEqual(['b', 'c']);
  });

  it('"two concurrent appends get versions n+1 and n+2": twenty different appends at once take 2..21, none repeated, none lost', async () => {
    const svc = new EvaluatorService(store, fixedClock(AT));
    const project = { id: 'pcc', orgId: 'o1' } as ProjectRecord;
    await svc.create(caller, project, { evaluator_id: 'hot', display_name: 'Hot', metric_name: 'm', kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: '{"measurement":"run.duration_ms"}' });
    const appended = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        svc.appendVersion(caller, project, 'hot', { kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: JSON.stringify({ aggregation: 'all', assertions: [{ field: 'run.step_count', op: 'lte', number: i }] }) }),
      ),
    );
    expect(appended.map((a) => a.record.version).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    expect(appended.every((a) => a.created)).toBe(true);
    expect((await store.evaluators.head('pcc', 'hot'))?.latestVersion).toBe(21);
    for (const a of appended) expect((await store.evaluators.version('pcc', 'hot', a.record.version))?.configJson).toBe(a.record.configJson);
  });

  it('identical concurrent appends (a retried request) write one version', async () => {
    const svc = new EvaluatorService(store, fixedClock(AT));
    const project = { id: 'pid', orgId: 'o1' } as ProjectRecord;
    await svc.create(caller, project, { evaluator_id: 'r', display_name: 'R', metric_name: 'm', kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: '{"measurement":"run.duration_ms"}' });
    const same = { kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: '{"measurement":"run.cost_nanos"}' };
    const out = await Promise.all(Array.from({ length: 10 }, () => svc.appendVersion(caller, project, 'r', same)));
    expect(new Set(out.map((o) => o.record.version))).toEqual(new Set([2]));
    expect(out.filter((o) => o.created)).toHaveLength(1);
    expect((await store.evaluators.head('pid', 'r'))?.latestVersion).toBe(2);
  });

  it('concurrent creates of one id: one succeeds, the others are 409, never a 5xx', async () => {
    const svc = new EvaluatorService(store, fixedClock(AT));
    const project = { id: 'pcr', orgId: 'o1' } as ProjectRecord;
    const body = { evaluator_id: 'dup', display_name: 'D', metric_name: 'm', kind: 'EVALUATOR_KIND_DETERMINISTIC', config_json: '{"measurement":"run.duration_ms"}' };
    const out = await Promise.allSettled(Array.from({ length: 8 }, () => svc.create(caller, project, body)));
    expect(out.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    for (const o of out) if (o.status === 'rejected') expect(o.reason).toMatchObject({ status: 409 });
  });

  it('sampling rules: insertIfMissing once, update, get, delete, count, list with filters and paging', async () => {
    expect(await store.transaction((tx) => tx.samplingRules.insertIfMissing(rule({ projectId: 'ps', ruleId: 'b' })))).toBe(true);
    expect(await store.transaction((tx) => tx.samplingRules.insertIfMissing(rule({ projectId: 'ps', ruleId: 'b', samplingRate: 1 })))).toBe(false);
    expect((await store.samplingRules.get('ps', 'b'))?.samplingRate).toBe(0.5);
    await store.samplingRules.insertIfMissing(rule({ projectId: 'ps', ruleId: 'a', enabled: false, evaluator: { evaluator_id: 'f', version: 3 } }));
    await store.samplingRules.update('ps', 'b', { evaluator: { evaluator_id: 'e', version: 2 }, subjectKind: 'SUBJECT_KIND_AGENT_RUN', samplingRate: 0.25, perTickLimit: 0, enabled: true }, '2026-02-01T00:00:00.000Z', 'api_key:k2');
    expect(await store.samplingRules.get('ps', 'b')).toEqual(
      rule({ projectId: 'ps', ruleId: 'b', evaluator: { evaluator_id: 'e', version: 2 }, samplingRate: 0.25, perTickLimit: 0, updatedAt: '2026-02-01T00:00:00.000Z', updatedBy: 'api_key:k2' }),
    );
    expect(await store.samplingRules.count('ps')).toBe(2);
    const ids = async (f: object, o: { after?: string; limit: number } = { limit: 10 }) => (await store.samplingRules.list({ projectId: 'ps', ...f }, o)).map((r) => r.ruleId);
    expect(await ids({})).toEqual(['a', 'b']);
    expect(await ids({ enabled: false })).toEqual(['a']);
    expect(await ids({ enabled: true })).toEqual(['b']);
    expect(await ids({ evaluatorId: 'f' })).toEqual(['a']);
    expect(await ids({}, { after: 'a', limit: 10 })).toEqual(['b']);
    expect(await store.samplingRules.delete('ps', 'a')).toBe(true);
    expect(await store.samplingRules.delete('ps', 'a')).toBe(false);
    expect(await store.samplingRules.get('ps', 'a')).toBeUndefined();
  });

  it('"a zero rate, enabled false, or per_tick_limit of 0 disables a rule": active() skips them and rules of deleted projects', async () => {
    const svc = new SamplingRuleService(store, new EvaluatorService(store, fixedClock(AT)), fixedClock(AT));
    await store.organizations.insert({ id: 'o1', name: 'o1', createdAt: AT });
    await store.projects.insert({ id: 'live', orgId: 'o1', name: 'live', samplingRate: 1, createdAt: AT, deletedAt: null });
    await store.projects.insert({ id: 'gone', orgId: 'o1', name: 'gone', samplingRate: 1, createdAt: AT, deletedAt: AT });
    for (const r of [
      rule({ projectId: 'live', ruleId: 'on' }),
      rule({ projectId: 'live', ruleId: 'zero-rate', samplingRate: 0 }),
      rule({ projectId: 'live', ruleId: 'off', enabled: false }),
      rule({ projectId: 'live', ruleId: 'zero-limit', perTickLimit: 0 }),
      rule({ projectId: 'gone', ruleId: 'on' }),
    ])
      await store.samplingRules.insertIfMissing(r);
    expect((await svc.active()).filter((r) => ['live', 'gone'].includes(r.projectId)).map((r) => `${r.projectId}/${r.ruleId}`)).toEqual(['live/on']);
  });
});
