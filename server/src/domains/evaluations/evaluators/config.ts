/**
 * An evaluator's configuration (docs/evaluations.md "Configuration"): `config_json` is a string holding a
 * JSON object whose members depend on the kind. Unknown members are refused at every level, sizes and
 * nesting are bounded, and every refusal is a 400 naming its reason (`details.reason`) and JSON path.
 */
import {
  CRITERIA,
  EVALUATOR_KINDS,
  EVIDENCE_SELECTORS,
  MAX_EVIDENCE_CHARS,
  STEP_KEYS,
  TRAJECTORY_MATCHES,
  type EvaluatorConfig,
  type EvaluatorKind,
  type JudgeConfig,
  type JudgeCriterion,
  type TrajectoryConfig,
} from '../model.js';
import { canonicalOperation, parseDeterministic, sessionOnly } from './config-deterministic.js';
import { aString, anArray, anObject, has, onlyFields, oneOf, parseConfigText, refuse, required, type Json, type JsonObject } from './config-read.js';

/** Longest reference trajectory (steps). */
export const MAX_REFERENCE_STEPS = 200;
/** Judge text bounds (characters). */
export const JUDGE_TEXT = { name: 100, description: 2000, instructions: 8000, model: 200 } as const;

function parseTrajectory(c: JsonObject): TrajectoryConfig {
  onlyFields(c, ['step_key', 'match', 'reference'], '$');
  const stepKey = oneOf(required(c, 'step_key', '$', 'step_key_missing'), STEP_KEYS, '$.step_key', 'step_key_unknown');
  const match = has(c, 'match') ? oneOf(c.match, TRAJECTORY_MATCHES, '$.match', 'match_unknown') : 'ordered_subsequence';
  const list = anArray(required(c, 'reference', '$', 'reference_missing'), '$.reference');
  if (list.length === 0) throw refuse('reference_empty', '$.reference', 'give at least one reference step');
  if (list.length > MAX_REFERENCE_STEPS) throw refuse('reference_too_long', '$.reference', `at most ${MAX_REFERENCE_STEPS} reference steps`);
  const reference = list.map((s, i) => (stepKey === 'canonical_operation' ? canonicalOperation(s, `$.reference[${i}]`) : aString(s, `$.reference[${i}]`)));
  return { step_key: stepKey, match, reference };
}

function readCriterion(raw: Json, path: string): JudgeCriterion {
  const c = anObject(raw, path);
  onlyFields(c, ['name', 'description', 'weight'], path);
  const name = aString(required(c, 'name', path, 'criterion_name_missing'), `${path}.name`, JUDGE_TEXT.name);
  const description = aString(required(c, 'description', path, 'criterion_description_missing'), `${path}.description`, JUDGE_TEXT.description);
  let weight = 1;
  if (has(c, 'weight')) {
    if (typeof c.weight !== 'number' || !Number.isFinite(c.weight) || c.weight <= 0) throw refuse('weight_invalid', `${path}.weight`, 'weight must be a positive finite number');
    weight = c.weight;
  }
  return { name, description, weight };
}

function parseJudge(c: JsonObject): JudgeConfig {
  onlyFields(c, ['criteria', 'evidence', 'instructions', 'model', 'max_evidence_chars'], '$');
  const list = anArray(required(c, 'criteria', '$', 'criteria_missing'), '$.criteria');
  if (list.length < CRITERIA.min || list.length > CRITERIA.max) throw refuse('criteria_count', '$.criteria', `give ${CRITERIA.min} to ${CRITERIA.max} criteria`);
  const criteria = list.map((x, i) => readCriterion(x, `$.criteria[${i}]`));
  const names = new Set<string>();
  criteria.forEach((k, i) => {
    if (names.has(k.name)) throw refuse('criterion_name_repeated', `$.criteria[${i}].name`, `criterion "${k.name}" is named twice; names are unique`);
    names.add(k.name);
  });
  const sel = anArray(required(c, 'evidence', '$', 'evidence_missing'), '$.evidence');
  if (sel.length === 0) throw refuse('evidence_empty', '$.evidence', `give at least one evidence selector: ${EVIDENCE_SELECTORS.join(', ')}`);
  const evidence = sel.map((s, i) => oneOf(s, EVIDENCE_SELECTORS, `$.evidence[${i}]`, 'evidence_unknown'));
  evidence.forEach((e, i) => {
    if (evidence.indexOf(e) !== i) throw refuse('evidence_repeated', `$.evidence[${i}]`, `${e} is selected twice`);
  });
  const out: JudgeConfig = { criteria, evidence, max_evidence_chars: MAX_EVIDENCE_CHARS.default };
  if (has(c, 'instructions')) out.instructions = aString(c.instructions, '$.instructions', JUDGE_TEXT.instructions);
  if (has(c, 'model')) out.model = aString(c.model, '$.model', JUDGE_TEXT.model);
  if (has(c, 'max_evidence_chars')) {
    const m = c.max_evidence_chars;
    if (typeof m !== 'number' || !Number.isInteger(m) || m < MAX_EVIDENCE_CHARS.min || m > MAX_EVIDENCE_CHARS.max)
      throw refuse('max_evidence_chars_invalid', '$.max_evidence_chars', `must be an integer from ${MAX_EVIDENCE_CHARS.min} to ${MAX_EVIDENCE_CHARS.max}`);
    out.max_evidence_chars = m;
  }
  return out;
}

/** Checks `kind` is a kind one may write (not `_UNSPECIFIED`, nothing else). */
export function writableKind(kind: unknown): EvaluatorKind {
  if (typeof kind !== 'string' || !(EVALUATOR_KINDS as readonly string[]).includes(kind))
    throw refuse('kind_unknown', 'kind', `kind must be one of: ${EVALUATOR_KINDS.join(', ')}${kind === 'EVALUATOR_KIND_UNSPECIFIED' ? ' (EVALUATOR_KIND_UNSPECIFIED is refused)' : ''}`);
  return kind as EvaluatorKind;
}

/** `config_json` of an evaluator of `kind`, parsed and checked; 400 naming the reason otherwise. */
export function parseEvaluatorConfig(kind: EvaluatorKind, configJson: unknown): EvaluatorConfig {
  const c = parseConfigText(configJson);
  switch (writableKind(kind)) {
    case 'EVALUATOR_KIND_DETERMINISTIC':
      return { kind: 'EVALUATOR_KIND_DETERMINISTIC', config: parseDeterministic(c) };
    case 'EVALUATOR_KIND_REFERENCE_TRAJECTORY':
      return { kind: 'EVALUATOR_KIND_REFERENCE_TRAJECTORY', config: parseTrajectory(c) };
    case 'EVALUATOR_KIND_LLM_JUDGE':
      return { kind: 'EVALUATOR_KIND_LLM_JUDGE', config: parseJudge(c) };
  }
}

/** True when an evaluator can score nothing but sessions (so a sampling rule, which selects runs, cannot use it). */
export function scoresOnlySessions(parsed: EvaluatorConfig): boolean {
  return parsed.kind === 'EVALUATOR_KIND_DETERMINISTIC' && sessionOnly(parsed.config);
}
