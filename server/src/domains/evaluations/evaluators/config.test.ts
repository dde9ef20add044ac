/** Every configuration rule of the three evaluator kinds, and every refusal with its reason and path. */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../http/errors.js';
import { CANONICAL_OPERATIONS, OUTCOMES, RUN_STATUSES } from '../../agent-runs/model.js';
import { ASSERTION_NUMBER_FIELDS, ASSERTION_SET_FIELDS, ASSERTION_SINGLE_FIELDS, MEASUREMENTS, type EvaluatorKind } from '../model.js';
import { parseEvaluatorConfig, scoresOnlySessions } from './config.js';

const D: EvaluatorKind = 'EVALUATOR_KIND_DETERMINISTIC';
const T: EvaluatorKind = 'EVALUATOR_KIND_REFERENCE_TRAJECTORY';
const J: EvaluatorKind = 'EVALUATOR_KIND_LLM_JUDGE';
const json = (v: unknown) => JSON.stringify(v);

function refusal(kind: EvaluatorKind, config: unknown, raw = false): { reason: string; path: string; message: string } {
  try {
    parseEvaluatorConfig(kind, raw ? config : json(config));
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    const err = e as ApiError;
    expect(err.status).toBe(400);
    return { reason: String(err.details?.reason), path: String(err.details?.path), message: err.message };
  }
  throw new Error('accepted');
}

const gate = (...assertions: unknown[]) => ({ aggregation: 'all', assertions });

describe('the field table of deterministic assertions', () => {
  // | run.status | single value | equals, not_equals |
  // | run.error_steps, ... run.duration_ms / session.* | number | lte, gte |
  // | steps.outcomes, steps.tool_names, steps.canonical_operations | set | contains, not_contains |
  const table: [string, string[], unknown][] = [
    ...ASSERTION_SINGLE_FIELDS.map((f) => [f, ['equals', 'not_equals'], { value: RUN_STATUSES[0] }] as [string, string[], unknown]),
    ...ASSERTION_NUMBER_FIELDS.map((f) => [f, ['lte', 'gte'], { number: 3 }] as [string, string[], unknown]),
    ['steps.outcomes', ['contains', 'not_contains'], { value: 'OUTCOME_ERROR' }],
    ['steps.tool_names', ['contains', 'not_contains'], { value: 'send_email' }],
    ['steps.canonical_operations', ['contains', 'not_contains'], { value: 'CANONICAL_OPERATION_EXECUTE_TOOL' }],
  ];
  const allOps = ['equals', 'not_equals', 'lte', 'gte', 'contains', 'not_contains'];

  it.each(table)('%s takes exactly %j', (field, ops, operand) => {
    for (const op of allOps) {
      const config = gate({ field, op, ...(operand as object) });
      if (ops.includes(op)) expect(parseEvaluatorConfig(D, json(config))).toEqual({ kind: D, config: { form: 'assertion', aggregation: 'all', assertions: [{ field, op, ...(operand as object) }] } });
      else expect(refusal(D, config)).toMatchObject({ reason: 'op_not_for_field', path: '$.assertions[0].op' });
    }
  });

  it('the table covers every field of the vocabulary', () => {
    expect(table.map((r) => r[0]).sort()).toEqual([...ASSERTION_SINGLE_FIELDS, ...ASSERTION_NUMBER_FIELDS, ...ASSERTION_SET_FIELDS].sort());
  });

  it('"aggregation (all = gate ...; fraction = share of held assertions)": both are accepted, anything else is refused', () => {
    expect(parseEvaluatorConfig(D, json({ aggregation: 'fraction', assertions: [{ field: 'run.step_count', op: 'lte', number: 9 }] })).config).toMatchObject({ aggregation: 'fraction' });
    expect(refusal(D, { aggregation: 'any', assertions: [{ field: 'run.step_count', op: 'lte', number: 9 }] })).toMatchObject({ reason: 'aggregation_unknown', path: '$.aggregation' });
    expect(refusal(D, { assertions: [{ field: 'run.step_count', op: 'lte', number: 9 }] })).toMatchObject({ reason: 'aggregation_missing' });
    expect(refusal(D, { aggregation: 'all' })).toMatchObject({ reason: 'assertions_missing' });
  });

  it('values are checked against each field\'s vocabulary: run statuses, outcomes, canonical operations, any non-empty tool name', () => {
    for (const s of RUN_STATUSES) expect(() => parseEvaluatorConfig(D, json(gate({ field: 'run.status', op: 'equals', value: s })))).not.toThrow();
    for (const o of OUTCOMES) expect(() => parseEvaluatorConfig(D, json(gate({ field: 'steps.outcomes', op: 'contains', value: o })))).not.toThrow();
    expect(refusal(D, gate({ field: 'run.status', op: 'equals', value: 'done' }))).toMatchObject({ reason: 'value_unknown', path: '$.assertions[0].value' });
    expect(refusal(D, gate({ field: 'steps.outcomes', op: 'contains', value: 'OUTCOME_MAYBE' }))).toMatchObject({ reason: 'value_unknown' });
    expect(refusal(D, gate({ field: 'steps.canonical_operations', op: 'contains', value: 'CANONICAL_OPERATION_DANCE' }))).toMatchObject({ reason: 'value_unknown' });
    expect(refusal(D, gate({ field: 'steps.tool_names', op: 'contains', value: '' }))).toMatchObject({ reason: 'empty_string' });
    expect(refusal(D, gate({ field: 'steps.tool_names', op: 'contains', value: 'x'.repeat(257) }))).toMatchObject({ reason: 'string_too_long' });
  });
});

describe('refused rules, each naming its reason', () => {
  const cases: [string, EvaluatorKind, unknown, string, string][] = [
    ['assertions on OUTCOME_UNKNOWN', D, gate({ field: 'steps.outcomes', op: 'contains', value: 'OUTCOME_UNKNOWN' }), 'outcome_unknown_refused', '$.assertions[0].value'],
    ['assertions on CANONICAL_OPERATION_UNKNOWN', D, gate({ field: 'steps.canonical_operations', op: 'not_contains', value: 'CANONICAL_OPERATION_UNKNOWN' }), 'canonical_operation_unknown_refused', '$.assertions[0].value'],
    ['fields no instrumentation fills', D, gate({ field: 'run.vibes', op: 'gte', number: 1 }), 'field_not_filled', '$.assertions[0].field'],
    ['run.cost_nanos is a measurement, not an assertion field', D, gate({ field: 'run.cost_nanos', op: 'lte', number: 1 }), 'field_not_filled', '$.assertions[0].field'],
    ['an operator that does not fit the field', D, gate({ field: 'run.status', op: 'gte', value: 'completed' }), 'op_not_for_field', '$.assertions[0].op'],
    ['an unknown operator', D, gate({ field: 'run.status', op: 'is', value: 'completed' }), 'op_unknown', '$.assertions[0].op'],
    ['value and number both', D, gate({ field: 'run.step_count', op: 'lte', number: 1, value: '1' }), 'value_and_number', '$.assertions[0]'],
    ['value and number neither', D, gate({ field: 'run.step_count', op: 'lte' }), 'value_or_number_missing', '$.assertions[0]'],
    ['a number field given a value', D, gate({ field: 'run.step_count', op: 'lte', value: '3' }), 'number_required', '$.assertions[0].value'],
    ['a set field given a number', D, gate({ field: 'steps.tool_names', op: 'contains', number: 3 }), 'value_required', '$.assertions[0].number'],
    ['a number that is not a number', D, gate({ field: 'run.step_count', op: 'lte', number: '3' }), 'number_not_finite', '$.assertions[0].number'],
    ['assertions and measurement both', D, { measurement: 'run.duration_ms', aggregation: 'all', assertions: [{ field: 'run.step_count', op: 'lte', number: 1 }] }, 'forms_mixed', '$'],
    ['measurement with aggregation only', D, { measurement: 'run.duration_ms', aggregation: 'all' }, 'forms_mixed', '$'],
    ['neither form', D, {}, 'form_missing', '$'],
    ['an empty assertions list', D, gate(), 'assertions_empty', '$.assertions'],
    ['too many assertions', D, gate(...Array.from({ length: 51 }, () => ({ field: 'run.step_count', op: 'lte', number: 1 }))), 'too_many_assertions', '$.assertions'],
    ['mixing run/steps with session fields', D, gate({ field: 'run.step_count', op: 'lte', number: 1 }, { field: 'session.run_count', op: 'gte', number: 1 }), 'subject_families_mixed', '$.assertions'],
    ['an unknown measurement', D, { measurement: 'run.tokens' }, 'measurement_unknown', '$.measurement'],
    ['an unknown field beside the assertions', D, { ...gate({ field: 'run.step_count', op: 'lte', number: 1 }), weight: 2 }, 'unknown_field', '$.weight'],
    ['an unknown field inside an assertion', D, gate({ field: 'run.step_count', op: 'lte', number: 1, note: 'x' }), 'unknown_field', '$.assertions[0].note'],
    ['an assertion that is not an object', D, gate('run.step_count <= 1'), 'wrong_type', '$.assertions[0]'],
    ['trajectory: step_key missing', T, { reference: ['a'] }, 'step_key_missing', '$.step_key'],
    ['trajectory: step_key unknown', T, { step_key: 'span_name', reference: ['a'] }, 'step_key_unknown', '$.step_key'],
    ['trajectory: match unknown', T, { step_key: 'tool_name', match: 'fuzzy', reference: ['a'] }, 'match_unknown', '$.match'],
    ['trajectory: reference missing', T, { step_key: 'tool_name' }, 'reference_missing', '$.reference'],
    ['trajectory: reference empty', T, { step_key: 'tool_name', reference: [] }, 'reference_empty', '$.reference'],
    ['trajectory: reference too long', T, { step_key: 'tool_name', reference: Array.from({ length: 201 }, () => 'search') }, 'reference_too_long', '$.reference'],
    ['trajectory: an unknown canonical operation', T, { step_key: 'canonical_operation', reference: ['CANONICAL_OPERATION_CHAT', 'CANONICAL_OPERATION_NAP'] }, 'value_unknown', '$.reference[1]'],
    ['trajectory: CANONICAL_OPERATION_UNKNOWN', T, { step_key: 'canonical_operation', reference: ['CANONICAL_OPERATION_UNKNOWN'] }, 'canonical_operation_unknown_refused', '$.reference[0]'],
    ['trajectory: an empty tool name', T, { step_key: 'tool_name', reference: ['search', ''] }, 'empty_string', '$.reference[1]'],
    ['trajectory: an unknown field', T, { step_key: 'tool_name', reference: ['a'], threshold: 0.5 }, 'unknown_field', '$.threshold'],
  ];
  it.each(cases)('%s', (_name, kind, config, reason, path) => {
    const r = refusal(kind, config);
    expect(r).toMatchObject({ reason, path });
    expect(r.message).toContain(reason);
  });
});

const judge = (over: Record<string, unknown> = {}) => ({ criteria: [{ name: 'helpful', description: 'answers the question' }], evidence: ['run_summary'], ...over });

describe('LLM judge rubric', () => {
  it('defaults: weight 1, max_evidence_chars 12000; instructions and model kept', () => {
    expect(parseEvaluatorConfig(J, json(judge())).config).toEqual({ criteria: [{ name: 'helpful', description: 'answers the question', weight: 1 }], evidence: ['run_summary'], max_evidence_chars: 12000 });
    const full = judge({ instructions: 'be strict', model: 'gpt-x', max_evidence_chars: 500, evidence: ['run_summary', 'step_sequence', 'model_transcript', 'tool_calls'] });
    expect(parseEvaluatorConfig(J, json(full)).config).toMatchObject({ instructions: 'be strict', model: 'gpt-x', max_evidence_chars: 500 });
    expect(parseEvaluatorConfig(J, json(judge({ max_evidence_chars: 40000, criteria: [{ name: 'a', description: 'd', weight: 0.25 }] }))).config).toMatchObject({ max_evidence_chars: 40000, criteria: [{ weight: 0.25 }] });
  });

  const criteria = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `c${i}`, description: 'd' }));
  const cases: [string, unknown, string, string][] = [
    ['"criteria required"', { evidence: ['run_summary'] }, 'criteria_missing', '$.criteria'],
    ['"1 to 8 entries": none', judge({ criteria: [] }), 'criteria_count', '$.criteria'],
    ['"1 to 8 entries": nine', judge({ criteria: criteria(9) }), 'criteria_count', '$.criteria'],
    ['a criterion without name', judge({ criteria: [{ description: 'd' }] }), 'criterion_name_missing', '$.criteria[0].name'],
    ['a blank name', judge({ criteria: [{ name: ' ', description: 'd' }] }), 'empty_string', '$.criteria[0].name'],
    ['names are unique', judge({ criteria: [{ name: 'a', description: 'd' }, { name: 'a', description: 'e' }] }), 'criterion_name_repeated', '$.criteria[1].name'],
    ['a criterion without description', judge({ criteria: [{ name: 'a' }] }), 'criterion_description_missing', '$.criteria[0].description'],
    ['weight zero', judge({ criteria: [{ name: 'a', description: 'd', weight: 0 }] }), 'weight_invalid', '$.criteria[0].weight'],
    ['weight negative', judge({ criteria: [{ name: 'a', description: 'd', weight: -1 }] }), 'weight_invalid', '$.criteria[0].weight'],
    ['weight a string', judge({ criteria: [{ name: 'a', description: 'd', weight: '2' }] }), 'weight_invalid', '$.criteria[0].weight'],
    ['"unknown rubric fields are rejected" inside a criterion', judge({ criteria: [{ name: 'a', description: 'd', scale: 10 }] }), 'unknown_field', '$.criteria[0].scale'],
    ['"unknown rubric fields are rejected" at the top', judge({ temperature: 0 }), 'unknown_field', '$.temperature'],
    ['"evidence required"', { criteria: criteria(1) }, 'evidence_missing', '$.evidence'],
    ['evidence empty', judge({ evidence: [] }), 'evidence_empty', '$.evidence'],
    ['an unknown selector', judge({ evidence: ['screenshots'] }), 'evidence_unknown', '$.evidence[0]'],
    ['a repeated selector', judge({ evidence: ['tool_calls', 'tool_calls'] }), 'evidence_repeated', '$.evidence[1]'],
    ['"max_evidence_chars ... 500 to 40000": 499', judge({ max_evidence_chars: 499 }), 'max_evidence_chars_invalid', '$.max_evidence_chars'],
    ['"max_evidence_chars ... 500 to 40000": 40001', judge({ max_evidence_chars: 40001 }), 'max_evidence_chars_invalid', '$.max_evidence_chars'],
    ['max_evidence_chars not an integer', judge({ max_evidence_chars: 1000.5 }), 'max_evidence_chars_invalid', '$.max_evidence_chars'],
    ['an empty model', judge({ model: '' }), 'empty_string', '$.model'],
    ['a model that is not a string', judge({ model: 4 }), 'wrong_type', '$.model'],
    ['instructions too long', judge({ instructions: 'x'.repeat(8001) }), 'string_too_long', '$.instructions'],
  ];
  it.each(cases)('%s', (_name, config, reason, path) => expect(refusal(J, config)).toMatchObject({ reason, path }));
});

describe('config_json itself', () => {
  it('"config_json (a string holding JSON)": an object, a number or null is refused', () => {
    for (const v of [{ measurement: 'run.duration_ms' }, 3, null, ['x']]) expect(refusal(D, v, true)).toMatchObject({ reason: 'config_json_not_a_string', path: 'config_json' });
  });

  it('not JSON, JSON that is not an object, too long, nested too deep', () => {
    expect(refusal(D, '{measurement:', true).reason).toBe('config_json_not_json');
    expect(refusal(D, '[]', true).reason).toBe('config_not_an_object');
    expect(refusal(D, '"x"', true).reason).toBe('config_not_an_object');
    expect(refusal(D, `{"measurement":"run.duration_ms","x":"${'a'.repeat(70_000)}"}`, true).reason).toBe('config_json_too_long');
    const deep = `{"a":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    expect(refusal(D, deep, true).reason).toBe('config_too_deep');
  });

  it('a known field of another kind is unknown here (each kind takes its own members)', () => {
    expect(refusal(T, judge())).toMatchObject({ reason: 'unknown_field' });
    expect(refusal(J, { measurement: 'run.duration_ms' })).toMatchObject({ reason: 'unknown_field', path: '$.measurement' });
  });

  it('_UNSPECIFIED and unknown kinds are refused naming the accepted kinds', () => {
    for (const k of ['EVALUATOR_KIND_UNSPECIFIED', 'EVALUATOR_KIND_VIBES']) {
      const r = refusal(k as EvaluatorKind, { measurement: 'run.duration_ms' });
      expect(r.reason).toBe('kind_unknown');
      expect(r.message).toContain('EVALUATOR_KIND_LLM_JUDGE');
    }
  });
});

describe('measurement form', () => {
  it.each(MEASUREMENTS)('measurement %s is accepted', (m) => expect(parseEvaluatorConfig(D, json({ measurement: m })).config).toEqual({ form: 'measurement', measurement: m }));

  it('an evaluator of session.* fields or a session measurement scores only sessions; the others do not', () => {
    const only = (c: unknown, kind: EvaluatorKind = D) => scoresOnlySessions(parseEvaluatorConfig(kind, json(c)));
    expect(only({ measurement: 'session.turn_count' })).toBe(true);
    expect(only(gate({ field: 'session.run_count', op: 'gte', number: 2 }))).toBe(true);
    expect(only({ measurement: 'run.cost_nanos' })).toBe(false);
    expect(only({ measurement: 'safety.error_steps' })).toBe(false);
    expect(only(gate({ field: 'steps.outcomes', op: 'contains', value: 'OUTCOME_ERROR' }))).toBe(false);
    expect(only(judge(), J)).toBe(false);
    expect(only({ step_key: 'canonical_operation', reference: [CANONICAL_OPERATIONS[1]] }, T)).toBe(false);
  });

  it('trajectory defaults match to ordered_subsequence and keeps the reference in order', () => {
    const c = parseEvaluatorConfig(T, json({ step_key: 'canonical_operation', reference: ['CANONICAL_OPERATION_INVOKE_AGENT', 'CANONICAL_OPERATION_RETRIEVAL', 'CANONICAL_OPERATION_CHAT'] }));
    expect(c.config).toEqual({ step_key: 'canonical_operation', match: 'ordered_subsequence', reference: ['CANONICAL_OPERATION_INVOKE_AGENT', 'CANONICAL_OPERATION_RETRIEVAL', 'CANONICAL_OPERATION_CHAT'] });
    expect(parseEvaluatorConfig(T, json({ step_key: 'tool_name', match: 'exact', reference: ['search'] })).config).toMatchObject({ match: 'exact' });
  });
});
