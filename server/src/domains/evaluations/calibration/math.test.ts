/**
 * The calibration statistics against published values and textbook properties, and the pairing rules of
 * calibrate.ts (pure; no database).
 */
import { describe, expect, it } from 'vitest';
import type { AnnotationRecord } from '../annotations/store.js';
import type { ResultRecord } from '../results/store.js';
import { calibrate, inputDigest, type CalibrationInput } from './calibrate.js';
import { agreementRate, cohensKappa, linsCcc, pearson } from './math.js';

const rep = <T>(v: T, n: number): T[] => Array.from({ length: n }, () => v);
const s = (xs: number[]) => xs.map(String);

describe("Cohen's kappa on published values", () => {
  // scikit-learn, sklearn/metrics/tests/test_classification.py, test_cohen_kappa:
  //   "These label vectors reproduce the contingency matrix from Artstein and Poesio (2008), Table 1:
  //    np.array([[20, 20], [10, 50]])."
  //   y1 = np.array([0] * 40 + [1] * 60)
  //   y2 = np.array([0] * 20 + [1] * 20 + [0] * 10 + [1] * 50)
  //   assert_almost_equal(kappa, 0.348, decimal=3)
  it('Artstein & Poesio (2008) Table 1 as scikit-learn tests it: 0.348, symmetric in its two raters', () => {
    const y1 = s([...rep(0, 40), ...rep(1, 60)]);
    const y2 = s([...rep(0, 20), ...rep(1, 20), ...rep(0, 10), ...rep(1, 50)]);
    const k = cohensKappa(y1, y2)!;
    expect(k).toBeCloseTo(0.348, 3);
    expect(cohensKappa(y2, y1)).toBe(k);
    // p_o = 0.70, p_e = 0.4·0.3 + 0.6·0.7 = 0.54: κ = 0.16 / 0.46 exactly.
    expect(k).toBeCloseTo(0.16 / 0.46, 12);
    expect(agreementRate(y1, y2)).toBe(0.7);
  });

  // Same file: "Multiclass example: Artstein and Poesio, Table 4."
  //   y1 = np.array([0] * 46 + [1] * 44 + [2] * 10)
  //   y2 = np.array([0] * 52 + [1] * 32 + [2] * 16)
  //   assert_almost_equal(cohen_kappa_score(y1, y2), 0.8013, decimal=4)
  it('Artstein & Poesio (2008) Table 4 (three categories) as scikit-learn tests it: 0.8013', () => {
    const y1 = s([...rep(0, 46), ...rep(1, 44), ...rep(2, 10)]);
    const y2 = s([...rep(0, 52), ...rep(1, 32), ...rep(2, 16)]);
    expect(cohensKappa(y1, y2)!).toBeCloseTo(0.8013, 4);
  });

  // Same file: y2 = np.array([0] * 50 + [1] * 40 + [2] * 10) -> 0.9315 (unweighted).
  it('a third scikit-learn case: 0.9315', () => {
    const y1 = s([...rep(0, 46), ...rep(1, 44), ...rep(2, 10)]);
    const y2 = s([...rep(0, 50), ...rep(1, 40), ...rep(2, 10)]);
    expect(cohensKappa(y1, y2)!).toBeCloseTo(0.9315, 4);
  });

  it('perfect agreement is 1; systematic disagreement on a balanced pair is −1', () => {
    expect(cohensKappa(['a', 'b', 'a', 'c'], ['a', 'b', 'a', 'c'])).toBe(1);
    expect(cohensKappa(['a', 'b', 'a', 'b'], ['b', 'a', 'b', 'a'])).toBe(-1);
  });

  it('"if reviewers vary and the judge is constant the result is a measurable zero": κ = 0 exactly, while the raw match rate is not 0', () => {
    const judge = rep('pass', 10);
    const people = [...rep('pass', 7), ...rep('fail', 3)];
    expect(cohensKappa(judge, people)).toBe(0);
    expect(cohensKappa(people, judge)).toBe(0);
    expect(agreementRate(judge, people)).toBe(0.7);
  });

  it('"all one verdict" on both sides is not computable (null), whether the two verdicts are the same or not', () => {
    expect(cohensKappa(rep('pass', 5), rep('pass', 5))).toBeNull();
    expect(cohensKappa(rep('pass', 5), rep('fail', 5))).toBeNull();
    expect(cohensKappa([], [])).toBeNull();
  });
});

describe("Lin's concordance correlation coefficient (population form, Lin 1989)", () => {
  // TensorFlow API docs, tf.keras.metrics.concordance_correlation (population variances, 1/n):
  //   y_true = [[0, 1, 0.5], [1, 1, 0.2]]
  //   y_pred = [[0.1, 0.9, 0.5], [1, 0.9, 0.2]]
  //   -> [0.97560976 0.98765432]
  it('the published Keras values 0.97560976 and 0.98765432 (the second has a mean offset, so only the 1/n form gives it)', () => {
    expect(linsCcc([0, 1, 0.5], [0.1, 0.9, 0.5])!).toBeCloseTo(0.97560976, 7);
    expect(linsCcc([1, 1, 0.2], [1, 0.9, 0.2])!).toBeCloseTo(0.98765432, 7);
    // The n − 1 form would give 0.98901 for the second row: the population form is what is implemented.
    expect(Math.abs(linsCcc([1, 1, 0.2], [1, 0.9, 0.2])! - 0.98901)).toBeGreaterThan(1e-3);
  });

  // torchmetrics ConcordanceCorrCoef docs: target [3, -0.5, 2, 7], preds [2.5, 0.0, 2, 8] -> 0.9777,
  // which is the n − 1 (sample) form. The population form of the same data is 0.96 / 0.98283... = 0.9768.
  it('the torchmetrics example in the population form: 0.9768 (torchmetrics prints 0.9777, its n − 1 form)', () => {
    const v = linsCcc([2.5, 0.0, 2, 8], [3, -0.5, 2, 7])!;
    expect(v).toBeCloseTo(15.78125 / 16.15625, 12);
    expect(v).toBeCloseTo(0.9768, 4);
  });

  it('perfect agreement is 1', () => {
    expect(linsCcc([0.1, 0.4, 0.9, 1], [0.1, 0.4, 0.9, 1])).toBe(1);
  });

  it('"penalizes scale offset, not just correlation": a constant offset lowers CCC while Pearson stays 1', () => {
    const x = [0.1, 0.3, 0.5, 0.7];
    const y = x.map((v) => v + 0.2);
    expect(pearson(x, y)).toBeCloseTo(1, 12);
    const c = linsCcc(x, y)!;
    expect(c).toBeLessThan(0.8);
    // 2·s_xy / (2·s² + d²) with s² = 0.05, d = 0.2.
    expect(c).toBeCloseTo(0.1 / (0.1 + 0.04), 12);
    // A rescaling (same mean, double spread) lowers it too.
    const z = [0, 0.2, 0.6, 0.8].map((v) => v * 2 - 0.4);
    expect(pearson([0, 0.2, 0.6, 0.8], z)).toBeCloseTo(1, 12);
    expect(linsCcc([0, 0.2, 0.6, 0.8], z)!).toBeLessThan(1);
  });

  it('sign reversal gives a negative coefficient (−1 for a mirror image about the common mean)', () => {
    expect(linsCcc([1, 2, 3, 4], [4, 3, 2, 1])).toBeCloseTo(-1, 12);
    expect(linsCcc([0.1, 0.5, 0.9], [0.8, 0.6, 0.1])!).toBeLessThan(0);
  });

  it('"if reviewers vary and the judge is constant the result is a measurable zero": CCC = 0 exactly', () => {
    expect(linsCcc(rep(0.8, 4), [0.2, 0.9, 0.5, 0.8])).toBe(0);
    expect(linsCcc([0.2, 0.9, 0.5, 0.8], rep(0.8, 4))).toBe(0);
  });

  it('"both sides constant" is not computable (null), equal or not; no pairs is null', () => {
    expect(linsCcc(rep(0.5, 3), rep(0.5, 3))).toBeNull();
    expect(linsCcc(rep(0.5, 3), rep(0.9, 3))).toBeNull();
    expect(linsCcc([], [])).toBeNull();
  });

  it('refuses mismatched lengths and values that are not finite (a caller bug)', () => {
    expect(() => linsCcc([1], [1, 2])).toThrow();
    expect(() => linsCcc([1, Number.NaN], [1, 2])).toThrow();
  });
});

// ---- pairing and states (calibrate.ts)

const run = (i: number) => i.toString(16).padStart(32, '0');
let seq = 0;
const result = (runId: string, over: Partial<ResultRecord> = {}): ResultRecord => ({
  id: `res-${++seq}`,
  orgId: 'o',
  projectId: 'p',
  evaluatorId: 'judge',
  evaluatorVersion: 1,
  metricName: 'quality',
  mode: 'EVALUATION_MODE_ON_DEMAND',
  subjectKind: 'SUBJECT_KIND_AGENT_RUN',
  subjectRef: runId,
  numericValue: 0.5,
  label: 'pass',
  explanation: null,
  subjectRelease: null,
  legacySource: '',
  occurredAt: '2026-01-01T00:00:00.000Z',
  evaluatedAt: '2026-01-01T00:00:00.000Z',
  execution: null,
  ...over,
});
const judgment = (runId: string, over: Partial<AnnotationRecord> = {}): AnnotationRecord => ({
  id: `ann-${String(++seq).padStart(6, '0')}`,
  orgId: 'o',
  projectId: 'p',
  runId,
  metricName: 'quality',
  numericValue: null,
  label: null,
  comment: '',
  authorId: 'u1',
  createdAt: '2026-01-01T00:00:00.000Z',
  ...over,
});
const input = (over: Partial<CalibrationInput>): CalibrationInput => ({
  evaluatorId: 'judge',
  evaluatorVersion: 1,
  isModelJudge: true,
  metricName: 'quality',
  minLabels: 1,
  subjectRefs: [],
  results: [],
  judgments: [],
  ...over,
});

describe('calibrate: pairs and states', () => {
  it('"NOT_APPLICABLE: evaluator is not a model judge": nothing is paired or computed', () => {
    const o = calibrate(input({ isModelJudge: false, results: [result(run(1))], judgments: [judgment(run(1), { numericValue: 1 })] }));
    expect(o).toMatchObject({ state: 'NOT_APPLICABLE', statistic: null, agreement: null, pairCount: 0, judgmentIds: [] });
  });

  it('"UNCALIBRATED: model judge never compared to a person": no judgment, or judgments the judge never scored, or no shared kind of value', () => {
    expect(calibrate(input({ results: [result(run(1))] }))).toMatchObject({ state: 'UNCALIBRATED', pairCount: 0, runsWithoutJudgment: 1, agreement: null });
    const orphan = calibrate(input({ judgments: [judgment(run(2), { numericValue: 1 })] }));
    expect(orphan).toMatchObject({ state: 'UNCALIBRATED', excludedCount: 1, excluded: { no_judge_result: 1 } });
    const nothingShared = calibrate(input({ results: [result(run(3), { label: null })], judgments: [judgment(run(3), { label: 'pass' })] }));
    expect(nothingShared).toMatchObject({ state: 'UNCALIBRATED', excluded: { no_shared_value: 1 }, excludedCount: 1 });
  });

  it('"INSUFFICIENT_LABELS: fewer comparable judgments than min_labels": no number is reported', () => {
    const rs = [result(run(1), { numericValue: 0.2 }), result(run(2), { numericValue: 0.9 })];
    const js = [judgment(run(1), { numericValue: 0.1 }), judgment(run(2), { numericValue: 1 })];
    const o = calibrate(input({ minLabels: 3, results: rs, judgments: js }));
    expect(o).toMatchObject({ state: 'INSUFFICIENT_LABELS', pairCount: 2, valueKind: 'NUMERIC', statistic: null, agreement: null, agreementRate: null });
    expect(calibrate(input({ minLabels: 2, results: rs, judgments: js }))).toMatchObject({ state: 'CALIBRATED', statistic: 'LINS_CCC' });
  });

  it('every reviewer of a run is one pair against the same judge result; a run two people judged counts twice', () => {
    const r = result(run(1), { numericValue: 0.6 });
    const r2 = result(run(2), { numericValue: 0.2 });
    const js = [judgment(run(1), { numericValue: 0.5, authorId: 'a' }), judgment(run(1), { numericValue: 0.7, authorId: 'b' }), judgment(run(2), { numericValue: 0.1 })];
    const o = calibrate(input({ results: [r, r2], judgments: js }));
    expect(o).toMatchObject({ state: 'CALIBRATED', pairCount: 3, resultIds: [r.id, r2.id].sort() });
    expect(o.judgmentIds).toEqual(js.map((j) => j.id).sort());
    expect(o.agreement).toBeCloseTo(linsCcc([0.6, 0.6, 0.2], [0.5, 0.7, 0.1])!, 12);
  });

  it('labels: COHENS_KAPPA with agreement_rate beside it; labels compare trimmed and lower-cased', () => {
    const rs = [result(run(1), { label: 'pass' }), result(run(2), { label: 'fail' }), result(run(3), { label: 'pass' }), result(run(4), { label: 'fail' })];
    const js = [judgment(run(1), { label: ' PASS ' }), judgment(run(2), { label: 'fail' }), judgment(run(3), { label: 'fail' }), judgment(run(4), { label: 'fail' })];
    const o = calibrate(input({ results: rs, judgments: js }));
    expect(o).toMatchObject({ state: 'CALIBRATED', statistic: 'COHENS_KAPPA', valueKind: 'LABEL', agreementRate: 0.75, pairCount: 4 });
    expect(o.agreement).toBeCloseTo(cohensKappa(['pass', 'fail', 'pass', 'fail'], ['pass', 'fail', 'fail', 'fail'])!, 12);
  });

  it('the kind with more comparable pairs decides (a tie goes to numbers); pairs of the other kind are excluded as other_value_kind', () => {
    const rs = [1, 2, 3].map((i) => result(run(i), { numericValue: i / 10, label: i === 1 ? 'pass' : 'fail' }));
    const js = [judgment(run(1), { label: 'pass' }), judgment(run(2), { label: 'fail' }), judgment(run(3), { numericValue: 0.3 })];
    const o = calibrate(input({ results: rs, judgments: js }));
    expect(o).toMatchObject({ valueKind: 'LABEL', pairCount: 2, excludedCount: 1, excluded: { other_value_kind: 1 } });
    const tie = calibrate(input({ results: rs, judgments: [judgment(run(1), { label: 'pass' }), judgment(run(3), { numericValue: 0.3 })] }));
    expect(tie).toMatchObject({ valueKind: 'NUMERIC', pairCount: 1, excluded: { other_value_kind: 1 } });
  });

  it('"UNDEFINED_STATISTIC": enough pairs, each side one verdict throughout; the numeric case with both sides constant too', () => {
    const rs = [1, 2, 3].map((i) => result(run(i), { label: 'pass', numericValue: null }));
    const o = calibrate(input({ results: rs, judgments: [1, 2, 3].map((i) => judgment(run(i), { label: 'pass' })) }));
    expect(o).toMatchObject({ state: 'UNDEFINED_STATISTIC', statistic: 'COHENS_KAPPA', agreement: null, agreementRate: 1, pairCount: 3 });
    const nums = [1, 2].map((i) => result(run(i), { numericValue: 0.5, label: null }));
    expect(calibrate(input({ results: nums, judgments: [1, 2].map((i) => judgment(run(i), { numericValue: 0.9 })) }))).toMatchObject({
      state: 'UNDEFINED_STATISTIC',
      statistic: 'LINS_CCC',
      agreement: null,
    });
  });

  it('"a constant judge against varying reviewers is a measured 0" through the pairing too: CALIBRATED with agreement 0, for both statistics', () => {
    const rs = [1, 2, 3].map((i) => result(run(i), { numericValue: 0.8, label: 'pass' }));
    const numeric = calibrate(input({ results: rs, judgments: [0.1, 0.5, 0.9].map((v, i) => judgment(run(i + 1), { numericValue: v })) }));
    expect(numeric).toMatchObject({ state: 'CALIBRATED', statistic: 'LINS_CCC', agreement: 0 });
    const labels = calibrate(input({ results: rs, judgments: ['pass', 'fail', 'pass'].map((l, i) => judgment(run(i + 1), { label: l })) }));
    expect(labels).toMatchObject({ state: 'CALIBRATED', statistic: 'COHENS_KAPPA', agreement: 0 });
    expect(labels.agreementRate).toBeCloseTo(2 / 3, 12);
  });

  it('the input digest ignores row order and changes with a judgment id, a result id, min_labels or the runs named', () => {
    const rs = [result(run(1)), result(run(2))];
    const js = [judgment(run(1), { numericValue: 1 }), judgment(run(2), { numericValue: 0 })];
    const base = input({ subjectRefs: [run(1), run(2)], results: rs, judgments: js });
    const d = inputDigest(base);
    expect(inputDigest({ ...base, results: [...rs].reverse(), judgments: [...js].reverse() })).toBe(d);
    expect(inputDigest({ ...base, judgments: [js[0], { ...js[1], id: 'ann-new' }] })).not.toBe(d);
    expect(inputDigest({ ...base, results: [rs[0], { ...rs[1], id: 'res-new' }] })).not.toBe(d);
    expect(inputDigest({ ...base, minLabels: 2 })).not.toBe(d);
    expect(inputDigest({ ...base, subjectRefs: [run(1), run(2), run(3)] })).not.toBe(d);
  });
});
