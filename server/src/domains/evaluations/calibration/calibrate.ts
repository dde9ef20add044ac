/**
 * From the judge's results and people's judgments of named runs to a calibration outcome (pure; no I/O).
 *
 * Pairing: every judgment of a named run (for the evaluator version's metric) is paired with the judge's
 * stored result of that exact version for that run, so a run two people judged gives two pairs.
 * - A pair is NUMERIC-comparable when both sides carry a numeric value, LABEL-comparable when both carry
 *   a label (labels are compared trimmed and lower-cased). A pair can be both.
 * - One calibration compares one kind: NUMERIC when at least as many pairs are numeric-comparable as
 *   label-comparable (a tie goes to numbers, which carry more information), LABEL otherwise.
 * - Left out, and counted by reason: judgments of a run the judge has no result for (`no_judge_result`),
 *   pairs sharing no kind of value (`no_shared_value`), pairs comparable only in the kind not chosen
 *   (`other_value_kind`).
 *
 * States, in order: NOT_APPLICABLE (not a model judge), UNCALIBRATED (no comparable pair: never compared
 * to a person), INSUFFICIENT_LABELS (fewer pairs than `min_labels`), UNDEFINED_STATISTIC (each side one
 * single value throughout), CALIBRATED.
 */
import { createHash } from 'node:crypto';
import type { AnnotationRecord } from '../annotations/store.js';
import type { ResultRecord } from '../results/store.js';
import { agreementRate, cohensKappa, linsCcc } from './math.js';
import { STATISTIC_OF, type CalibrationState, type CalibrationStatistic, type Exclusions, type ValueKind } from './model.js';

export interface CalibrationInput {
  evaluatorId: string;
  evaluatorVersion: number;
  isModelJudge: boolean;
  /** Lower-cased. */
  metricName: string;
  minLabels: number;
  /** Distinct, sorted, lower-cased run ids. */
  subjectRefs: string[];
  /** The judge's results of this exact version, for named runs (at most one per run). */
  results: ResultRecord[];
  /** Judgments of named runs for this metric. */
  judgments: AnnotationRecord[];
}

export interface CalibrationOutcome {
  state: CalibrationState;
  statistic: CalibrationStatistic | null;
  valueKind: ValueKind | null;
  agreement: number | null;
  agreementRate: number | null;
  pairCount: number;
  excludedCount: number;
  excluded: Exclusions;
  runsWithoutJudgment: number;
  judgmentIds: string[];
  resultIds: string[];
  inputDigest: string;
}

const normLabel = (l: string) => l.trim().toLowerCase();
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * The digest of everything a calibration reads: evaluator version, metric, `min_labels`, the runs named,
 * and the ids of every judgment and result considered (a replaced judgment has a new id; a re-run judge
 * stores a new result). Equal digests are the same calibration.
 */
export function inputDigest(i: CalibrationInput): string {
  const parts = {
    v: 1,
    evaluator: [i.evaluatorId, i.evaluatorVersion],
    judge: i.isModelJudge,
    metric: i.metricName,
    min_labels: i.minLabels,
    runs: i.subjectRefs,
    judgments: i.judgments.map((j) => j.id).sort(byText),
    results: i.results.map((r) => r.id).sort(byText),
  };
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

export function calibrate(i: CalibrationInput): CalibrationOutcome {
  const digest = inputDigest(i);
  const excluded: Exclusions = { no_judge_result: 0, no_shared_value: 0, other_value_kind: 0 };
  const none = { statistic: null, valueKind: null, agreement: null, agreementRate: null } as const;
  if (!i.isModelJudge)
    return { state: 'NOT_APPLICABLE', ...none, pairCount: 0, excludedCount: 0, excluded, runsWithoutJudgment: 0, judgmentIds: [], resultIds: [], inputDigest: digest };

  const resultOf = new Map(i.results.map((r) => [r.subjectRef, r]));
  const judged = new Set(i.judgments.map((j) => j.runId));
  const runsWithoutJudgment = i.results.filter((r) => !judged.has(r.subjectRef)).length;

  interface Pair {
    judgment: AnnotationRecord;
    result: ResultRecord;
    numeric: boolean;
    label: boolean;
  }
  const candidates: Pair[] = [];
  for (const j of i.judgments) {
    const result = resultOf.get(j.runId);
    if (!result) {
      excluded.no_judge_result++;
      continue;
    }
    const numeric = j.numericValue !== null && result.numericValue !== null && Number.isFinite(j.numericValue) && Number.isFinite(result.numericValue);
    const label = j.label !== null && result.label !== null && normLabel(j.label) !== '' && normLabel(result.label) !== '';
    if (!numeric && !label) {
      excluded.no_shared_value++;
      continue;
    }
    candidates.push({ judgment: j, result, numeric, label });
  }
  const numericCount = candidates.filter((p) => p.numeric).length;
  const labelCount = candidates.filter((p) => p.label).length;
  const valueKind: ValueKind = numericCount >= labelCount ? 'NUMERIC' : 'LABEL';
  const pairs = candidates.filter((p) => (valueKind === 'NUMERIC' ? p.numeric : p.label));
  excluded.other_value_kind = candidates.length - pairs.length;
  // A stable order, so the statistic does not depend on the order rows were read in.
  pairs.sort((a, b) => byText(a.judgment.id, b.judgment.id));
  const excludedCount = excluded.no_judge_result + excluded.no_shared_value + excluded.other_value_kind;
  const base = {
    pairCount: pairs.length,
    excludedCount,
    excluded,
    runsWithoutJudgment,
    judgmentIds: pairs.map((p) => p.judgment.id),
    resultIds: [...new Set(pairs.map((p) => p.result.id))].sort(byText),
    inputDigest: digest,
  };
  if (pairs.length === 0) return { state: 'UNCALIBRATED', ...none, ...base };
  if (pairs.length < i.minLabels) return { state: 'INSUFFICIENT_LABELS', ...none, valueKind, ...base };

  const statistic = STATISTIC_OF[valueKind];
  let agreement: number | null;
  let rate: number | null = null;
  if (valueKind === 'NUMERIC') {
    agreement = linsCcc(
      pairs.map((p) => p.result.numericValue as number),
      pairs.map((p) => p.judgment.numericValue as number),
    );
  } else {
    const judge = pairs.map((p) => normLabel(p.result.label as string));
    const people = pairs.map((p) => normLabel(p.judgment.label as string));
    agreement = cohensKappa(judge, people);
    rate = agreementRate(judge, people);
  }
  if (agreement === null) return { state: 'UNDEFINED_STATISTIC', statistic, valueKind, agreement: null, agreementRate: rate, ...base };
  return { state: 'CALIBRATED', statistic, valueKind, agreement, agreementRate: rate, ...base };
}
