/**
 * The comparison of an experiment's trials (docs/evaluations-experiments.md "Comparison"), pure: per
 * metric (one exact evaluator version), each trial's counts and mean, and for each candidate its
 * difference from the baseline over everything each side scored and over the items both sides scored
 * (paired). Differences are arithmetic (candidate − baseline), neutral: never a verdict. Something not
 * measured is counted, never averaged in as 0; a mean over nothing is absent, and so is any difference
 * that needs it.
 */

/** What one trial came to on one item under one evaluator version. */
export type Cell =
  | { state: 'scored'; value: number | null; label: string | null }
  | { state: 'unmeasured' }
  | { state: 'withheld' }
  /** The trial maps no run to this item (a candidate's runs did not cover it). */
  | { state: 'missing' }
  /** Not evaluated yet (or the run was not readable yet): `run` again. */
  | { state: 'pending' };

export interface ArmCounts {
  items: number;
  /** Items with a stored score (numeric or label-only). */
  scored: number;
  /** Scored items with a numeric value: what `mean` averages. */
  numeric: number;
  unmeasured: number;
  withheld: number;
  missing: number;
  pending: number;
}

export interface ArmSummary {
  counts: ArmCounts;
  /** Absent when no item has a numeric score. */
  mean?: number;
  /** Scored items by label (label-only and numeric results alike); absent labels are not counted. */
  labels: Record<string, number>;
}

export interface Paired {
  /** Items with a numeric score on both sides. */
  items: number;
  baseline_mean?: number;
  candidate_mean?: number;
  delta?: number;
}

export interface CandidateDelta {
  /** candidate mean − baseline mean, each over everything it scored; absent when either mean is. */
  delta?: number;
  paired: Paired;
}

const mean = (xs: number[]): number | undefined => (xs.length === 0 ? undefined : xs.reduce((a, b) => a + b, 0) / xs.length);

export function summarize(cells: readonly Cell[]): ArmSummary {
  const counts: ArmCounts = { items: cells.length, scored: 0, numeric: 0, unmeasured: 0, withheld: 0, missing: 0, pending: 0 };
  const values: number[] = [];
  const labels: Record<string, number> = {};
  for (const c of cells) {
    if (c.state !== 'scored') {
      counts[c.state]++;
      continue;
    }
    counts.scored++;
    if (c.value !== null && Number.isFinite(c.value)) {
      counts.numeric++;
      values.push(c.value);
    }
    if (c.label !== null) labels[c.label] = (labels[c.label] ?? 0) + 1;
  }
  const m = mean(values);
  return { counts, ...(m === undefined ? {} : { mean: m }), labels };
}

const numericOf = (c: Cell | undefined): number | undefined =>
  c && c.state === 'scored' && c.value !== null && Number.isFinite(c.value) ? c.value : undefined;

/** Baseline and candidate cells are aligned by item (the same index is the same dataset item). */
export function compare(baseline: readonly Cell[], candidate: readonly Cell[]): CandidateDelta {
  if (baseline.length !== candidate.length) throw new Error('baseline and candidate cells must be aligned by item');
  const b = summarize(baseline).mean;
  const c = summarize(candidate).mean;
  const pb: number[] = [];
  const pc: number[] = [];
  for (let i = 0; i < baseline.length; i++) {
    const x = numericOf(baseline[i]);
    const y = numericOf(candidate[i]);
    if (x === undefined || y === undefined) continue;
    pb.push(x);
    pc.push(y);
  }
  const bm = mean(pb);
  const cm = mean(pc);
  const paired: Paired = { items: pb.length, ...(bm === undefined ? {} : { baseline_mean: bm }), ...(cm === undefined ? {} : { candidate_mean: cm }) };
  if (bm !== undefined && cm !== undefined) paired.delta = cm - bm;
  return { ...(b !== undefined && c !== undefined ? { delta: c - b } : {}), paired };
}
