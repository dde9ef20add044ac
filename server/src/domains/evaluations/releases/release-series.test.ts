/**
 * `GET /evaluation/release-series` over HTTP: the series rules (ordering, deltas, the unreleased
 * aggregate, what is admissible), version pinning, the window, bad input, foreign projects and scopes.
 * Results are written through the store (the paths that produce them are driven end to end elsewhere).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { COMPLETED, releaseProject } from './fixture.js';
import { orderReleases, semanticVersion } from './series.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

const D = (day: number) => `2026-03-${String(day).padStart(2, '0')}T00:00:00.000000Z`;
const releases = (body: { points: { release: string }[] }) => body.points.map((p) => p.release);

describe('GET /evaluation/release-series', () => {
  it('"oldest release first; each point has sample count, mean, first and last observed run time, and after the first the arithmetic change from the previous point"', async () => {
    const p = await releaseProject(t);
    await p.many('1.0.0', [0.8, 0.6], D(1));
    await p.put('1.0.0', 0.7, { occurredAt: D(3) });
    await p.many('1.1.0', [0.5, 0.5], D(4));
    const res = await p.series('evaluator_id=ev&evaluator_version=1');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ evaluator: { evaluator_id: 'ev', version: 1 }, metric_name: 'quality', ordering_strategy: 'SEMANTIC_VERSION', truncated: false, unreleased_present: false, unreleased: null });
    expect(body.points).toHaveLength(2);
    expect(body.points[0]).toMatchObject({ release: '1.0.0', sample_count: 3, first_observed_at: D(1), last_observed_at: D(3), delta_mean: null });
    expect(body.points[0].mean).toBeCloseTo(0.7, 10);
    expect(body.points[1]).toMatchObject({ release: '1.1.0', sample_count: 2, mean: 0.5 });
    expect(body.points[1].delta_mean).toBeCloseTo(-0.2, 10);
  });

  it('"semantic-version precedence when every release name is semantic": 1.10.0 comes after 1.9.0, a pre-release before its release, whatever the run times', async () => {
    const p = await releaseProject(t);
    await p.many('1.10.0', [1], D(1));
    await p.many('1.9.0', [1], D(2));
    await p.many('2.0.0', [1], D(3));
    await p.many('2.0.0-rc.1', [1], D(4));
    await p.many('v1.9.5', [1], D(5));
    const body = (await p.series('evaluator_id=ev&evaluator_version=1')).json();
    expect(body.ordering_strategy).toBe('SEMANTIC_VERSION');
    expect(releases(body)).toEqual(['1.9.0', 'v1.9.5', '1.10.0', '2.0.0-rc.1', '2.0.0']);
  });

  it('"otherwise first-observed run time for the whole series with the label as tie-breaker": one non-semantic name switches every point', async () => {
    const p = await releaseProject(t);
    await p.many('1.10.0', [1], D(1));
    await p.many('1.9.0', [1], D(2));
    await p.many('nightly-b', [1], D(3));
    await p.many('nightly-a', [1], D(3));
    const body = (await p.series('evaluator_id=ev&evaluator_version=1')).json();
    expect(body.ordering_strategy).toBe('FIRST_OBSERVED');
    expect(releases(body)).toEqual(['1.10.0', '1.9.0', 'nightly-a', 'nightly-b']);
  });

  it('"runs that declared no release form a separate aggregate with unreleased_present: true", never a point', async () => {
    const p = await releaseProject(t);
    await p.many('1.0.0', [1], D(1));
    await p.many(null, [0.2, 0.4], D(2));
    const body = (await p.series('evaluator_id=ev&evaluator_version=1')).json();
    expect(releases(body)).toEqual(['1.0.0']);
    expect(body.unreleased_present).toBe(true);
    expect(body.unreleased).toMatchObject({ sample_count: 2, first_observed_at: D(2), last_observed_at: D(2) });
    expect(body.unreleased.mean).toBeCloseTo(0.3, 10);
  });

  it('pins the exact evaluator version: version 2 results never enter the version 1 series, and a missing version is 404', async () => {
    const p = await releaseProject(t);
    await p.many('1.0.0', [1, 1], D(1));
    await p.many('1.0.0', [0, 0, 0], D(1), { evaluatorVersion: 2 });
    const v1 = (await p.series('evaluator_id=ev&evaluator_version=1')).json();
    expect(v1.points).toEqual([expect.objectContaining({ release: '1.0.0', sample_count: 2, mean: 1 })]);
    const v2 = (await p.series('evaluator_id=ev&evaluator_version=2')).json();
    expect(v2.points).toEqual([expect.objectContaining({ release: '1.0.0', sample_count: 3, mean: 0 })]);
    const missing = await p.series('evaluator_id=ev&evaluator_version=3');
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error).toBe('not_found');
    expect((await p.series('evaluator_id=nobody&evaluator_version=1')).statusCode).toBe(404);
  });

  it('reads production results only: experiment, legacy-mode, execution-less, FAILED, CANCELLED, label-only and session results are counted as excluded, never averaged; PARTIAL is accepted', async () => {
    const p = await releaseProject(t);
    await p.put('1.0.0', 0.5);
    await p.put('1.0.0', 0.7, { mode: 'EVALUATION_MODE_ON_DEMAND', execution: { ...COMPLETED, job_status: 'PARTIAL', job_failure_class: 'missing_steps' } });
    await p.put('1.0.0', 0.9, { subjectKind: 'SUBJECT_KIND_AGENT_STEP', subjectRef: `${'a'.repeat(32)}/${'b'.repeat(16)}` });
    await p.put('1.0.0', 0, { mode: 'EVALUATION_MODE_EXPERIMENT' });
    await p.put('1.0.0', 0, { execution: null });
    await p.put('1.0.0', 0, { execution: { ...COMPLETED, job_status: 'FAILED' } });
    await p.put('1.0.0', 0, { execution: { ...COMPLETED, job_status: 'CANCELLED' } });
    await p.put('1.0.0', null, { label: 'bad' });
    await p.put('1.0.0', 0, { subjectKind: 'SUBJECT_KIND_AGENT_SESSION', subjectRef: 'session-1' });
    await p.put('1.0.0', 0, { mode: 'EVALUATION_MODE_LEGACY' });
    const body = (await p.series('evaluator_id=ev&evaluator_version=1')).json();
    expect(body.points).toHaveLength(1);
    expect(body.points[0].sample_count).toBe(3);
    expect(body.points[0].mean).toBeCloseTo(0.7, 10);
    expect(body.excluded_counts).toEqual({ experiment: 1, no_execution: 1, failed: 1, cancelled: 1, not_scored: 1, not_run_or_step: 1, legacy: 1 });
  });

  it('start and end bound run time (occurred_at), and metric_name filters; an empty series is an empty list, not zeros', async () => {
    const p = await releaseProject(t);
    await p.many('1.0.0', [1], D(1));
    await p.many('1.1.0', [0.5], D(5));
    expect(releases((await p.series(`evaluator_id=ev&evaluator_version=1&start=${D(2)}`)).json())).toEqual(['1.1.0']);
    expect(releases((await p.series(`evaluator_id=ev&evaluator_version=1&end=${D(2)}`)).json())).toEqual(['1.0.0']);
    const none = (await p.series('evaluator_id=ev&evaluator_version=1&metric_name=latency')).json();
    expect(none).toMatchObject({ points: [], unreleased_present: false, unreleased: null, excluded_counts: {} });
  });

  it('bad input as an attacker writes it: 400 in our shape, never a 5xx', async () => {
    const p = await releaseProject(t);
    for (const q of [
      '',
      'evaluator_id=ev',
      'evaluator_version=1',
      'evaluator_id=ev&evaluator_version=0',
      'evaluator_id=ev&evaluator_version=latest',
      'evaluator_id=ev&evaluator_version=-1',
      'evaluator_id=ev&evaluator_version=1.5',
      'evaluator_id=ev&evaluator_version=99999999999',
      'evaluator_id=ev&evaluator_version=1&evaluator_version=2',
      'evaluator_id=ev&evaluator_id=ev2&evaluator_version=1',
      'evaluator_id=legacy/alice/quality&evaluator_version=1',
      'evaluator_id=EV%20%27;DROP&evaluator_version=1',
      `evaluator_id=${'e'.repeat(5000)}&evaluator_version=1`,
      'evaluator_id=ev&evaluator_version=1&metric_name=',
      'evaluator_id=ev&evaluator_version=1&start=yesterday',
      `evaluator_id=ev&evaluator_version=1&start=${D(5)}&end=${D(1)}`,
      'evaluator_id=ev&evaluator_version=1&release=1.0.0',
    ]) {
      const res = await p.series(q);
      expect(res.statusCode, `${q.slice(0, 80)}: ${res.body}`).toBe(400);
      expect(typeof res.json().message).toBe('string');
    }
  });

  it('a project key naming another project is 404, like a missing evaluator; another project\'s results are never read', async () => {
    const a = await releaseProject(t);
    const b = await releaseProject(t);
    await b.many('1.0.0', [1], D(1));
    expect((await a.series('evaluator_id=ev&evaluator_version=1')).json().points).toEqual([]);
    const res = await t.call({ method: 'GET', url: `/api/v1/evaluation/release-series?project_id=${b.projectId}&evaluator_id=ev&evaluator_version=1`, key: a.key });
    expect(res.statusCode).toBe(404);
  });

  it('needs evals:read: a key without it is 403, no key is 401', async () => {
    const p = await releaseProject(t);
    const other = await projectWithKey(t, ['scores:read']);
    const url = `/api/v1/evaluation/release-series?project_id=${other.projectId}&evaluator_id=ev&evaluator_version=1`;
    expect((await t.call({ method: 'GET', url, key: other.key })).statusCode).toBe(403);
    expect((await t.call({ method: 'GET', url, key: null })).statusCode).toBe(401);
    expect((await p.series('evaluator_id=ev&evaluator_version=1')).statusCode).toBe(200);
  });
});

describe('release ordering (unit)', () => {
  it('a leading v is a semantic version; white space, partial versions and other prefixes are not', () => {
    expect(semanticVersion('v1.2.3')).toBe('1.2.3');
    expect(semanticVersion('1.2.3+build.7')).toBe('1.2.3');
    for (const n of ['1.2', ' 1.2.3', 'V1.2.3', 'release-1.2.3', '01.2.3', '=1.2.3']) expect(semanticVersion(n), n).toBeNull();
  });

  it('equal precedence (builds of one version, v and bare) is broken by the label', () => {
    const pts = ['1.0.0+b', 'v1.0.0', '1.0.0+a', '1.0.0'].map((release) => ({ release, firstObservedAt: D(1) }));
    const { strategy, ordered } = orderReleases(pts);
    expect(strategy).toBe('SEMANTIC_VERSION');
    expect(ordered.map((p) => p.release)).toEqual(['1.0.0', '1.0.0+a', '1.0.0+b', 'v1.0.0']);
  });
});
