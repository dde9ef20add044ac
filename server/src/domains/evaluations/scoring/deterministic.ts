/**
 * The deterministic evaluator (docs/evaluations-scoring.md "Assertions", "Measurements"). Free: no model
 * is called.
 *
 * - Assertion form: every assertion compares one field; `all` scores 1 (`pass`) when every assertion
 *   holds and 0 (`fail`) otherwise; `fraction` scores held / total (label `held/total`, e.g. `3/4`).
 *   An assertion whose field was not measured makes the whole evaluation unmeasured (the reason names
 *   the field): it is never a failing assertion and never a 0.
 * - Measurement form: the measured number is the score (no label); a measurement that cannot be taken is
 *   unmeasured.
 */
import { invalidRequest } from '../../../http/errors.js';
import {
  ASSERTION_NUMBER_FIELDS,
  ASSERTION_SET_FIELDS,
  ASSERTION_SINGLE_FIELDS,
  FREE_EXECUTION,
  type Assertion,
  type DeterministicConfig,
  type RunFacts,
  type ScoreOutcome,
  type SubjectFacts,
} from '../model.js';
import { checkFamily, subjectKindOf } from './family.js';
import { readNumber, readRunStatus, readSet, type Read } from './values.js';

const has = (list: readonly string[], v: string) => list.includes(v);

const OPS_OF = {
  single: ['equals', 'not_equals'],
  number: ['lte', 'gte'],
  set: ['contains', 'not_contains'],
} as const;

function badAssertion(a: Assertion, type: keyof typeof OPS_OF, operand: 'value' | 'number'): never {
  throw invalidRequest(`the assertion on ${a.field} is invalid: a ${type} field takes op ${OPS_OF[type].join(' or ')} with a ${operand === 'value' ? 'string value' : 'finite number'}`, {
    reason: 'invalid_assertion',
    field: a.field,
    accepted_ops: [...OPS_OF[type]],
  });
}

/** Whether the assertion holds, with what was observed; or why it was not measured. */
function evaluate(a: Assertion, facts: SubjectFacts): Read<{ holds: boolean; observed: string }> {
  if (has(ASSERTION_NUMBER_FIELDS, a.field)) {
    if ((a.op !== 'lte' && a.op !== 'gte') || typeof a.number !== 'number' || !Number.isFinite(a.number)) badAssertion(a, 'number', 'number');
    const n = readNumber(a.field, facts);
    if ('unmeasured' in n) return n;
    return { value: { holds: a.op === 'lte' ? n.value <= a.number! : n.value >= a.number!, observed: String(n.value) } };
  }
  if (has(ASSERTION_SINGLE_FIELDS, a.field)) {
    if ((a.op !== 'equals' && a.op !== 'not_equals') || typeof a.value !== 'string') badAssertion(a, 'single', 'value');
    const v = readRunStatus(facts as RunFacts);
    if ('unmeasured' in v) return v;
    return { value: { holds: (v.value === a.value) === (a.op === 'equals'), observed: v.value } };
  }
  if (has(ASSERTION_SET_FIELDS, a.field)) {
    if ((a.op !== 'contains' && a.op !== 'not_contains') || typeof a.value !== 'string') badAssertion(a, 'set', 'value');
    const s = readSet(a.field, facts as Exclude<SubjectFacts, { kind: 'session' }>);
    if ('unmeasured' in s) return s;
    return { value: { holds: s.value.has(a.value!) === (a.op === 'contains'), observed: `[${[...s.value].sort().join(', ')}]` } };
  }
  throw invalidRequest(`${a.field} is not an assertion field`, { reason: 'invalid_assertion', field: a.field });
}

const operand = (a: Assertion) => (a.number !== undefined ? String(a.number) : JSON.stringify(a.value));

function scoreAssertions(aggregation: 'all' | 'fraction', assertions: Assertion[], facts: SubjectFacts): ScoreOutcome {
  if (assertions.length === 0) throw invalidRequest('an assertion evaluator needs at least one assertion', { reason: 'invalid_assertion' });
  const results = assertions.map((a) => ({ a, r: evaluate(a, facts) }));
  const missing = results.flatMap(({ r }) => ('unmeasured' in r ? [r.unmeasured] : []));
  if (missing.length) return { outcome: 'unmeasured', reason: [...new Set(missing)].join('; ') };
  const failed = results.filter(({ r }) => 'value' in r && !r.value.holds);
  const held = assertions.length - failed.length;
  const explanation =
    failed.length === 0
      ? `all ${assertions.length} assertions held`
      : `${held} of ${assertions.length} assertions held; failed: ${failed.map(({ a, r }) => `${a.field} ${a.op} ${operand(a)} (observed ${'value' in r ? r.value.observed : ''})`).join('; ')}`;
  if (aggregation === 'all') {
    const pass = failed.length === 0;
    return { outcome: 'scored', numericValue: pass ? 1 : 0, label: pass ? 'pass' : 'fail', explanation, execution: FREE_EXECUTION };
  }
  return { outcome: 'scored', numericValue: held / assertions.length, label: `${held}/${assertions.length}`, explanation, execution: FREE_EXECUTION };
}

/** Scores the subject's facts with a deterministic configuration (400 when it measures nothing of this subject). */
export function scoreDeterministic(config: DeterministicConfig, facts: SubjectFacts): ScoreOutcome {
  checkFamily({ kind: 'EVALUATOR_KIND_DETERMINISTIC', config }, subjectKindOf(facts));
  if (config.form === 'assertion') return scoreAssertions(config.aggregation, config.assertions, facts);
  const m = readNumber(config.measurement, facts);
  if ('unmeasured' in m) return { outcome: 'unmeasured', reason: m.unmeasured };
  return { outcome: 'scored', numericValue: m.value, label: null, explanation: `${config.measurement} = ${m.value}`, execution: FREE_EXECUTION };
}
