/** Forecast history grid: shape/gap scan, irregularity reasons, gap filling and centring/scaling (decisions in forecast-model.ts). */

import type { Observation } from './forecast-model.js';

// ---------------------------------------------------------------------------------------------
// History scan
// ---------------------------------------------------------------------------------------------

export interface HistoryScan {
  duplicates: number;
  outOfOrder: number;
  offGrid: number;
  nonFinite: number;
  /** Grid timestamps skipped between consecutive sorted distinct finite timestamps. */
  missing: number;
  /** Largest number of grid timestamps skipped by one gap. */
  longestGap: number;
  allNonNegative: boolean;
}

export function scanHistory(history: Observation[], intervalMs: number): HistoryScan {
  let duplicates = 0;
  let outOfOrder = 0;
  let offGrid = 0;
  let nonFinite = 0;
  let allNonNegative = true;
  const seen = new Set<number>();
  const finiteTs: number[] = [];
  let prev = Number.NaN;
  for (let i = 0; i < history.length; i++) {
    const { ts, value } = history[i];
    if (!Number.isFinite(ts) || !Number.isFinite(value)) nonFinite++;
    if (!(value >= 0)) allNonNegative = false;
    if (Number.isFinite(ts)) {
      if (seen.has(ts)) duplicates++;
      else {
        seen.add(ts);
        finiteTs.push(ts);
      }
      if (ts % intervalMs !== 0) offGrid++;
      if (i > 0 && Number.isFinite(prev) && ts < prev) outOfOrder++;
      prev = ts;
    }
  }
  finiteTs.sort((a, b) => a - b);
  let missing = 0;
  let longestGap = 0;
  for (let i = 1; i < finiteTs.length; i++) {
    // Grid multiples k·interval with t0 < k·interval < t1.
    const skipped = Math.max(0, Math.ceil(finiteTs[i] / intervalMs) - 1 - Math.floor(finiteTs[i - 1] / intervalMs));
    missing += skipped;
    if (skipped > longestGap) longestGap = skipped;
  }
  return { duplicates, outOfOrder, offGrid, nonFinite, missing, longestGap, allNonNegative };
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

export function shapeProblems(scan: HistoryScan): string[] {
  const problems: string[] = [];
  if (scan.duplicates > 0) problems.push(plural(scan.duplicates, 'duplicate timestamp'));
  if (scan.outOfOrder > 0) problems.push(plural(scan.outOfOrder, 'out-of-order observation'));
  if (scan.offGrid > 0) problems.push(`${plural(scan.offGrid, 'timestamp')} off the interval grid`);
  if (scan.nonFinite > 0) problems.push(`${plural(scan.nonFinite, 'observation')} with a non-finite timestamp or value`);
  return problems;
}

// ---------------------------------------------------------------------------------------------
// Grid construction and gap filling
// ---------------------------------------------------------------------------------------------

/** Values on the grid first..last (length span) plus a mask of observed points; gaps filled. */
export function buildGrid(history: Observation[], intervalMs: number, span: number, s: number): { y: Float64Array; observed: Uint8Array } {
  const y = new Float64Array(span);
  const observed = new Uint8Array(span);
  const t0 = history[0].ts;
  for (const { ts, value } of history) {
    const i = Math.round((ts - t0) / intervalMs);
    y[i] = value;
    observed[i] = 1;
  }
  let i = 0;
  while (i < span) {
    if (observed[i]) {
      i++;
      continue;
    }
    // Gap [i, j): observed[i - 1] and observed[j] are set (first and last grid points are observed).
    let j = i;
    while (!observed[j]) j++;
    const left = y[i - 1];
    const right = y[j];
    const width = j - (i - 1);
    for (let k = i; k < j; k++) {
      if (s >= 2 && k >= s) y[k] = y[k - s];
      else y[k] = left + ((right - left) * (k - (i - 1))) / width;
    }
    i = j;
  }
  return { y, observed };
}

// ---------------------------------------------------------------------------------------------
// Centring and scaling
// ---------------------------------------------------------------------------------------------

export interface ScaledGrid {
  centre: number;
  scale: number;
  /** (y - centre) / scale, in [-1, 1]. */
  z: Float64Array;
}

/**
 * Centres and scales the grid by the history's midrange / half-range (overflow-safe), so z lies
 * in [-1, 1]. Returns null when the history is constant (no usable range).
 */
export function centreAndScale(history: Observation[], y: Float64Array, span: number): ScaledGrid | null {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const { value } of history) {
    if (value < min) min = value;
    if (value > max) max = value;
  }
  const centre = min / 2 + max / 2;
  const scale = max / 2 - min / 2;
  if (!(scale > 1e-12 * Math.max(Math.abs(min), Math.abs(max))) || !(scale > 0)) return null;
  const z = new Float64Array(span);
  for (let i = 0; i < span; i++) z[i] = (y[i] - centre) / scale;
  return { centre, scale, z };
}
