/**
 * The deterministic evaluator's configuration (docs/evaluations.md "Deterministic evaluators"): exactly one
 * of the assertion form (`aggregation` + `assertions[]`) and the measurement form (`measurement`).
 */
import { CANONICAL_OPERATIONS, CANONICAL_UNKNOWN, OUTCOMES, RUN_STATUSES } from '../../agent-runs/model.js';
import {
  ASSERTION_NUMBER_FIELDS,
  ASSERTION_OPS,
  ASSERTION_SET_FIELDS,
  ASSERTION_SINGLE_FIELDS,
  MEASUREMENTS,
  type Assertion,
  type AssertionField,
  type DeterministicConfig,
} from '../model.js';
import { aString, anArray, anObject, has, onlyFields, oneOf, refuse, type Json, type JsonObject } from './config-read.js';

/** At most this many assertions in one evaluator. */
export const MAX_ASSERTIONS = 50;
export const AGGREGATIONS = ['all', 'fraction'] as const;
export const OUTCOME_UNKNOWN = 'OUTCOME_UNKNOWN';

const FIELDS: readonly string[] = [...ASSERTION_SINGLE_FIELDS, ...ASSERTION_NUMBER_FIELDS, ...ASSERTION_SET_FIELDS];
const isNumberField = (f: string) => (ASSERTION_NUMBER_FIELDS as readonly string[]).includes(f);
const isSetField = (f: string) => (ASSERTION_SET_FIELDS as readonly string[]).includes(f);
const opsOf = (f: string): readonly string[] => (isNumberField(f) ? ['lte', 'gte'] : isSetField(f) ? ['contains', 'not_contains'] : ['equals', 'not_equals']);
/** The subject family a field or measurement answers for: session fields only for sessions, the others never for them. */
export const familyOf = (field: string): 'session' | 'run' => (field.startsWith('session.') ? 'session' : 'run');
const KNOWN_OPERATIONS = CANONICAL_OPERATIONS.filter((o) => o !== CANONICAL_UNKNOWN);

/** The value a single-value or set field compares, checked against the vocabulary of that field. */
function readValue(field: string, raw: Json, path: string): string {
  if (field === 'run.status') return oneOf(raw, RUN_STATUSES, path, 'value_unknown');
  if (field === 'steps.outcomes') {
    if (raw === OUTCOME_UNKNOWN) throw refuse('outcome_unknown_refused', path, 'OUTCOME_UNKNOWN marks a step with no stated outcome and cannot be asserted; assert a stated outcome');
    return oneOf(raw, OUTCOMES, path, 'value_unknown');
  }
  if (field === 'steps.canonical_operations') return canonicalOperation(raw, path);
  return aString(raw, path); // steps.tool_names: any non-empty tool name
}

/** A known canonical operation; CANONICAL_OPERATION_UNKNOWN is refused with its own reason. */
export function canonicalOperation(raw: Json, path: string): string {
  if (raw === CANONICAL_UNKNOWN)
    throw refuse('canonical_operation_unknown_refused', path, 'CANONICAL_OPERATION_UNKNOWN marks a step no instrumentation classified and cannot be asserted or referenced');
  return oneOf(raw, KNOWN_OPERATIONS, path, 'value_unknown');
}

function readAssertion(raw: Json, path: string): Assertion {
  const a = anObject(raw, path);
  onlyFields(a, ['field', 'op', 'value', 'number'], path);
  if (!has(a, 'field')) throw refuse('field_missing', `${path}.field`, 'field is required');
  const fieldText = aString(a.field, `${path}.field`);
  if (!FIELDS.includes(fieldText))
    throw refuse('field_not_filled', `${path}.field`, `"${fieldText.slice(0, 64)}" is no field any instrumentation fills; one of: ${FIELDS.join(', ')}`);
  const field = fieldText as AssertionField;
  if (!has(a, 'op')) throw refuse('op_missing', `${path}.op`, 'op is required');
  const op = oneOf(a.op, ASSERTION_OPS, `${path}.op`, 'op_unknown');
  if (!opsOf(field).includes(op)) throw refuse('op_not_for_field', `${path}.op`, `${field} takes ${opsOf(field).join(' or ')}, not ${op}`);
  const hasValue = has(a, 'value');
  const hasNumber = has(a, 'number');
  if (hasValue && hasNumber) throw refuse('value_and_number', path, 'give exactly one of value and number, not both');
  if (!hasValue && !hasNumber) throw refuse('value_or_number_missing', path, `give exactly one of value and number (${field} takes ${isNumberField(field) ? 'number' : 'value'})`);
  if (isNumberField(field)) {
    if (!hasNumber) throw refuse('number_required', `${path}.value`, `${field} is a number field: compare it with number, not value`);
    if (typeof a.number !== 'number' || !Number.isFinite(a.number)) throw refuse('number_not_finite', `${path}.number`, 'number must be a finite number');
    return { field, op, number: a.number };
  }
  if (!hasValue) throw refuse('value_required', `${path}.number`, `${field} compares a value (a string), not number`);
  return { field, op, value: readValue(field, a.value, `${path}.value`) };
}

export function parseDeterministic(c: JsonObject): DeterministicConfig {
  const assertionForm = has(c, 'assertions') || has(c, 'aggregation');
  if (has(c, 'measurement')) {
    if (assertionForm) throw refuse('forms_mixed', '$', 'the measurement form takes no assertions or aggregation: give either measurement, or aggregation and assertions');
    onlyFields(c, ['measurement'], '$');
    return { form: 'measurement', measurement: oneOf(c.measurement, MEASUREMENTS, '$.measurement', 'measurement_unknown') };
  }
  if (!assertionForm) throw refuse('form_missing', '$', 'give either measurement, or aggregation and assertions');
  onlyFields(c, ['aggregation', 'assertions'], '$');
  if (!has(c, 'aggregation')) throw refuse('aggregation_missing', '$.aggregation', 'aggregation is required with assertions: all (a gate, 1 or 0) or fraction (the share held)');
  const aggregation = oneOf(c.aggregation, AGGREGATIONS, '$.aggregation', 'aggregation_unknown');
  if (!has(c, 'assertions')) throw refuse('assertions_missing', '$.assertions', 'assertions is required with aggregation');
  const list = anArray(c.assertions, '$.assertions');
  if (list.length === 0) throw refuse('assertions_empty', '$.assertions', 'give at least one assertion');
  if (list.length > MAX_ASSERTIONS) throw refuse('too_many_assertions', '$.assertions', `at most ${MAX_ASSERTIONS} assertions`);
  const assertions = list.map((a, i) => readAssertion(a, `$.assertions[${i}]`));
  const families = new Set(assertions.map((a) => familyOf(a.field)));
  if (families.size > 1)
    throw refuse(
      'subject_families_mixed',
      '$.assertions',
      'session.* fields answer only for sessions and run.*/steps.* fields never do, so no subject answers both: split them into two evaluators',
    );
  return { form: 'assertion', aggregation, assertions };
}

/** True when the configuration can score nothing but sessions (its fields or measurement are session.*). */
export function sessionOnly(c: DeterministicConfig): boolean {
  return c.form === 'measurement' ? familyOf(c.measurement) === 'session' : c.assertions.every((a) => familyOf(a.field) === 'session');
}
