/**
 * The calibration record and its closed vocabulary (docs/evaluations-calibration.md). No HTTP, no SQL.
 */

export const CALIBRATION_STATES = ['CALIBRATED', 'UNCALIBRATED', 'INSUFFICIENT_LABELS', 'UNDEFINED_STATISTIC', 'NOT_APPLICABLE'] as const;
export type CalibrationState = (typeof CALIBRATION_STATES)[number];

export const CALIBRATION_STATISTICS = ['LINS_CCC', 'COHENS_KAPPA'] as const;
export type CalibrationStatistic = (typeof CALIBRATION_STATISTICS)[number];

/** Which values a calibration compared: numeric ratings or verdict labels. */
export const VALUE_KINDS = ['NUMERIC', 'LABEL'] as const;
export type ValueKind = (typeof VALUE_KINDS)[number];

export const STATISTIC_OF: Record<ValueKind, CalibrationStatistic> = { NUMERIC: 'LINS_CCC', LABEL: 'COHENS_KAPPA' };

/** Why a judgment of a named run was left out of the pairs. */
export const EXCLUSION_REASONS = ['no_judge_result', 'no_shared_value', 'other_value_kind'] as const;
export type ExclusionReason = (typeof EXCLUSION_REASONS)[number];
export type Exclusions = Record<ExclusionReason, number>;

export const MAX_CALIBRATION_SUBJECTS = 200;
/** `min_labels` runs from 1 to this; above is refused (no calibration could ever pair that many). */
export const MAX_MIN_LABELS = 100_000;

/** One stored calibration record (immutable). */
export interface CalibrationRecord {
  id: string;
  orgId: string;
  projectId: string;
  evaluatorId: string;
  evaluatorVersion: number;
  /** The evaluator version's metric name, lower-cased: judgments of this metric were compared. */
  metricName: string;
  state: CalibrationState;
  /** The statistic computed (CALIBRATED) or attempted and undefined (UNDEFINED_STATISTIC); null otherwise. */
  statistic: CalibrationStatistic | null;
  /** The kind of values the pairs compare; null when there are no pairs. */
  valueKind: ValueKind | null;
  /** Only for CALIBRATED. */
  agreement: number | null;
  /** Raw label match rate: only for label pairs that reached `min_labels`; never the calibration. */
  agreementRate: number | null;
  pairCount: number;
  excludedCount: number;
  excluded: Exclusions;
  /** Named runs the judge scored but no person judged for this metric. */
  runsWithoutJudgment: number;
  minLabels: number;
  /** The distinct run ids named, sorted. */
  subjectRefs: string[];
  /** The judgments paired, sorted. */
  judgmentIds: string[];
  /** The judge's results paired, sorted and distinct. */
  resultIds: string[];
  /** Digest of every input (see calibrate.ts `inputDigest`): equal inputs give one record. */
  inputDigest: string;
  createdAt: string;
  /** user:<id> or api_key:<id>, from the credential. */
  createdBy: string;
}
