/** Schemas of evaluators and sampling rules (`/evaluation/evaluators`, `/evaluation/sampling-rules`). */
import { Type } from '@sinclair/typebox';
import { NextCursorField, PageQuery, U32_MAX } from '../../../http/pagination.js';
import { ProjectSelectorQuery, stringEnum } from '../../../http/schemas.js';
import { EVALUATOR_KINDS, SUBJECT_KINDS } from '../model.js';
import { MAX_CONFIG_JSON } from './config-read.js';
import { MAX_PER_TICK_LIMIT, RULE_ID_PATTERN, RULE_PAGE } from './sampling-rules.js';
import { EVALUATOR_ID_PATTERN, EVALUATOR_PAGE, MAX_DISPLAY_NAME, MAX_VERSIONS, MAX_VERSION_NUMBER, METRIC_NAME_PATTERN } from './service.js';

const Timestamp = (description: string) => Type.String({ format: 'date-time', description });
const Actor = (description: string) => Type.String({ description: `${description}: user:<id> or api_key:<id>, from the credential` });
const Kind = stringEnum(EVALUATOR_KINDS, { description: 'the evaluator kind; EVALUATOR_KIND_UNSPECIFIED and anything else is refused' });
const EvaluatorId = Type.String({ maxLength: 200, description: `a caller-chosen slug matching ${EVALUATOR_ID_PATTERN}; legacy/ ids are reserved` });
const DisplayName = Type.String({ minLength: 1, maxLength: MAX_DISPLAY_NAME, description: `not blank; at most ${MAX_DISPLAY_NAME} characters` });
const MetricName = Type.String({ maxLength: 200, description: `the metric its results carry; matches ${METRIC_NAME_PATTERN}` });
const ConfigJson = Type.String({
  description: `a string holding the JSON configuration of the kind (not a JSON object); at most ${MAX_CONFIG_JSON} characters; kept exactly as sent`,
});

export const EvaluatorPath = Type.Object({ evaluatorId: Type.String({ minLength: 1, maxLength: 200, description: 'the evaluator id' }) });
export const VersionPath = Type.Object({
  evaluatorId: Type.String({ minLength: 1, maxLength: 200, description: 'the evaluator id' }),
  version: Type.String({ maxLength: 20, description: `an exact integer from 1 to ${MAX_VERSION_NUMBER}; there is no "latest" alias and 0 belongs to legacy results (400)` }),
});
export const RulePath = Type.Object({ ruleId: Type.String({ minLength: 1, maxLength: 200, description: 'the rule id' }) });
export const ProjectOnlyQuery = Type.Object({ ...ProjectSelectorQuery }, { additionalProperties: false });

export const CreateEvaluatorBody = Type.Object(
  { evaluator_id: EvaluatorId, display_name: DisplayName, metric_name: MetricName, kind: Kind, config_json: ConfigJson },
  { additionalProperties: false, description: 'created_by and created_at come from the credential and the clock; sending them is 400' },
);

export const AppendVersionBody = Type.Object(
  {
    display_name: Type.Optional(DisplayName),
    metric_name: Type.Optional(MetricName),
    kind: stringEnum(EVALUATOR_KINDS, { description: 'must be the kind the evaluator was created with (409 otherwise); EVALUATOR_KIND_UNSPECIFIED is refused' }),
    config_json: ConfigJson,
  },
  { additionalProperties: false, description: 'display_name and metric_name default to the latest version\'s' },
);

export const EvaluatorVersion = Type.Object(
  {
    project_id: Type.String(),
    evaluator_id: Type.String(),
    version: Type.Integer({ minimum: 1, description: 'an exact, immutable version' }),
    display_name: Type.String(),
    metric_name: Type.String(),
    kind: Kind,
    config_json: Type.String({ description: 'exactly as sent' }),
    created_at: Timestamp('when this version was written'),
    created_by: Actor('who wrote this version'),
  },
  { $id: 'EvaluatorVersion', description: 'One immutable version of an evaluator' },
);

export const AppendVersionResponse = Type.Intersect([
  EvaluatorVersion,
  Type.Object({ created: Type.Boolean({ description: 'false: identical to the latest version, which is answered and nothing was written' }) }),
]);

const summaryFields = {
  project_id: Type.String(),
  evaluator_id: Type.String(),
  kind: Kind,
  created_at: Timestamp('when version 1 was written'),
  created_by: Actor('who created the evaluator'),
  latest_version: Type.Integer({ minimum: 1, description: 'the highest version; versions are 1 to latest_version, none ever removed' }),
  latest: EvaluatorVersion,
};

export const EvaluatorSummary = Type.Object(summaryFields, { $id: 'EvaluatorSummary', description: 'An evaluator and its latest version' });
export const Evaluator = Type.Object(
  { ...summaryFields, versions: Type.Array(Type.Integer({ minimum: 1 }), { maxItems: MAX_VERSIONS, description: `every version number, ascending (at most ${MAX_VERSIONS})` }) },
  { $id: 'Evaluator', description: 'An evaluator, its latest version and its version numbers' },
);

const limitQuery = (d: { default: number; max: number }) =>
  Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: `default ${d.default}, at most ${d.max} (above is 400, never truncated); 0 is refused` }));

export const ListEvaluatorsQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit: limitQuery(EVALUATOR_PAGE),
    kind: Type.Optional(Type.Array(Type.String(), { description: `repeated or comma-separated, OR within; one of ${EVALUATOR_KINDS.join(', ')}` })),
  },
  { additionalProperties: false },
);

export const ListEvaluatorsResponse = Type.Object({
  evaluators: Type.Array(EvaluatorSummary, { description: 'by evaluator_id ascending' }),
  next_cursor: NextCursorField,
});

export const RuleBody = Type.Object(
  {
    rule_id: Type.String({ maxLength: 200, description: `the upsert key: a caller-chosen slug matching ${RULE_ID_PATTERN}` }),
    evaluator: Type.Object(
      {
        evaluator_id: EvaluatorId,
        version: Type.Integer({ minimum: 1, maximum: MAX_VERSION_NUMBER, description: 'an exact existing version (no "latest"; 404 when missing)' }),
      },
      { additionalProperties: false },
    ),
    subject_kind: stringEnum(SUBJECT_KINDS, { description: 'only SUBJECT_KIND_AGENT_RUN can be sampled; the others are 400' }),
    sampling_rate: Type.Number({ minimum: 0, maximum: 1, description: 'share of new runs selected, 0 to 1 inclusive (0 disables the rule)' }),
    per_tick_limit: Type.Integer({ minimum: 0, maximum: MAX_PER_TICK_LIMIT, description: `most runs selected per sampling tick, 0 to ${MAX_PER_TICK_LIMIT} (0 disables the rule)` }),
    enabled: Type.Boolean({ description: 'false disables the rule' }),
  },
  { additionalProperties: false, description: 'every field is required: a PUT replaces the rule; updated_by comes from the credential' },
);

const RuleFields = {
  rule_id: Type.String(),
  project_id: Type.String(),
  evaluator: Type.Object({ evaluator_id: Type.String(), version: Type.Integer({ minimum: 1 }) }),
  subject_kind: stringEnum(SUBJECT_KINDS),
  sampling_rate: Type.Number(),
  per_tick_limit: Type.Integer(),
  enabled: Type.Boolean(),
  active: Type.Boolean({ description: 'the rule can select runs: enabled, a rate above 0 and a per-tick limit above 0' }),
  created_at: Timestamp('when the rule was first written'),
  created_by: Actor('who first wrote the rule'),
  updated_at: Timestamp('when the rule last changed (an identical PUT changes nothing)'),
  updated_by: Actor('who last changed the rule'),
};

export const SamplingRule = Type.Object(RuleFields, { $id: 'SamplingRule', description: 'A sampling rule' });
export const PutRuleResponse = Type.Object({ ...RuleFields, created: Type.Boolean({ description: 'true: this PUT created the rule' }) });

export const ListRulesQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    ...PageQuery,
    limit: limitQuery(RULE_PAGE),
    evaluator_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'only rules citing this evaluator' })),
    enabled: Type.Optional(Type.Boolean({ description: 'only enabled (true) or disabled (false) rules' })),
  },
  { additionalProperties: false },
);

export const ListRulesResponse = Type.Object({ sampling_rules: Type.Array(SamplingRule, { description: 'by rule_id ascending' }), next_cursor: NextCursorField });
