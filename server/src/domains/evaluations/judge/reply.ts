/**
 * The judge's fixed result shape. The model is asked for exactly one JSON object:
 *
 *   {"scores": {"<criterion name>": <number in [0, 1]>, ...}, "label": "<verdict>", "reasoning": "<one sentence>"}
 *
 * with one score for every criterion of the rubric and no other. Anything else is UNUSABLE (not JSON, not
 * an object, a missing or an extra criterion, a score that is not a finite number in [0, 1], an empty or
 * overlong label or reasoning, another top-level field): it is never read as a score, the caller asks
 * again. A usable reply's result is the weighted mean of the criteria scores (weights from the rubric,
 * default 1), the label, and the reasoning as the explanation.
 */
import type { JudgeCriterion } from '../model.js';

/** Longest label and reasoning accepted (a label is a short verdict, the reasoning one sentence). */
export const MAX_LABEL_CHARS = 100;
export const MAX_REASONING_CHARS = 2000;

export type ParsedReply = { ok: true; scores: Record<string, number>; label: string; reasoning: string } | { ok: false; problem: string };

const unusable = (problem: string): ParsedReply => ({ ok: false, problem });
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const chars = (s: string) => [...s].length;

/** Reads a reply's text against the rubric's criteria. */
export function parseReply(content: string, criteria: readonly JudgeCriterion[]): ParsedReply {
  let raw: unknown;
  try {
    raw = JSON.parse(content);
  } catch {
    return unusable('the reply is not JSON');
  }
  if (!isObject(raw)) return unusable('the reply is not a JSON object');
  const extra = Object.keys(raw).filter((k) => k !== 'scores' && k !== 'label' && k !== 'reasoning');
  if (extra.length > 0) return unusable(`the reply has fields outside the result shape: ${extra.slice(0, 5).join(', ')}`);
  const { scores, label, reasoning } = raw;
  if (!isObject(scores)) return unusable('`scores` is not an object');
  const names = new Set(criteria.map((c) => c.name));
  const missing = [...names].filter((n) => !Object.prototype.hasOwnProperty.call(scores, n));
  if (missing.length > 0) return unusable(`no score for criteria: ${missing.join(', ')}`);
  const unknown = Object.keys(scores).filter((k) => !names.has(k));
  if (unknown.length > 0) return unusable(`scores for criteria the rubric does not have: ${unknown.slice(0, 5).join(', ')}`);
  for (const n of names) {
    const v = scores[n];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < 0 || v > 1) return unusable(`the score of ${n} is not a number from 0 to 1`);
  }
  if (typeof label !== 'string' || label.trim() === '' || chars(label.trim()) > MAX_LABEL_CHARS) return unusable(`\`label\` is not a text of 1 to ${MAX_LABEL_CHARS} characters`);
  if (typeof reasoning !== 'string' || reasoning.trim() === '' || chars(reasoning.trim()) > MAX_REASONING_CHARS)
    return unusable(`\`reasoning\` is not a text of 1 to ${MAX_REASONING_CHARS} characters`);
  return { ok: true, scores: scores as Record<string, number>, label: label.trim(), reasoning: reasoning.trim() };
}

/** Σ weight × score / Σ weight over the rubric's criteria. */
export function weightedMean(criteria: readonly JudgeCriterion[], scores: Record<string, number>): number {
  let total = 0;
  let weights = 0;
  for (const c of criteria) {
    total += c.weight * scores[c.name]!;
    weights += c.weight;
  }
  if (!(weights > 0)) throw new Error('a judge rubric needs a positive total weight');
  return total / weights;
}

/** The result shape as the prompt states it (prompt.ts). */
export function resultShapeText(criteria: readonly JudgeCriterion[]): string {
  const scores = criteria.map((c) => `${JSON.stringify(c.name)}: <number from 0 to 1>`).join(', ');
  return `{"scores": {${scores}}, "label": "<a short verdict>", "reasoning": "<one sentence>"}`;
}
