/** Schemas of the evaluation budget (`/evaluation/budget`). */
import { Type, type TSchema } from '@sinclair/typebox';
import { MAX_BUDGET_INTEGER } from './budget.js';

const Nullable = <T extends TSchema>(t: T, description: string) => Type.Union([t, Type.Null()], { description });

/** Fields the server keeps: sending one in a PUT is 400 naming it. */
export const READ_ONLY_FIELDS = [
  'day',
  'spent_nano_usd',
  'evaluations',
  'remaining_nano_usd',
  'remaining_evaluations',
  'resets_at',
  'budget_set',
  'updated_at',
  'updated_by',
  'version',
  'org_id',
  'organization_id',
];

export const BudgetQuery = Type.Object({}, { additionalProperties: false, description: 'no parameters: the budget is organization-wide (project_id is 400)' });

export const BudgetBody = Type.Object(
  {
    daily_limit_nano_usd: Type.Integer({
      minimum: 0,
      maximum: MAX_BUDGET_INTEGER,
      description: 'the cap on charged model-judge cost per UTC day, in billionths of a US dollar (1 USD = 1000000000); 0 refuses every model judge',
    }),
    daily_evaluation_limit: Type.Optional(
      Nullable(
        Type.Integer({ minimum: 1, maximum: MAX_BUDGET_INTEGER }),
        'the cap on evaluations of every kind (free ones too) per UTC day; absent or null: no count cap; 0 is refused (disable the rules instead)',
      ),
    ),
  },
  { additionalProperties: false, description: 'replaces the budget; updated_by comes from the credential' },
);

export const BudgetView = Type.Object(
  {
    daily_limit_nano_usd: Type.Integer({ description: 'billionths of a US dollar of charged judge cost per UTC day (0 when never set)' }),
    daily_evaluation_limit: Nullable(Type.Integer(), 'evaluations of every kind per UTC day; null: no count cap'),
    budget_set: Type.Boolean({ description: 'false: never set, the default is in force' }),
    day: Type.String({ description: 'the UTC date the spend is of (YYYY-MM-DD)' }),
    spent_nano_usd: Type.Integer({ description: 'charged judge cost so far today (billionths of a US dollar); free and unpriced evaluations add 0' }),
    evaluations: Type.Integer({ description: 'evaluations so far today, of every kind' }),
    remaining_nano_usd: Type.Integer({ description: 'daily_limit_nano_usd minus spent_nano_usd, at least 0' }),
    remaining_evaluations: Nullable(Type.Integer(), 'daily_evaluation_limit minus evaluations, at least 0; null without a count cap'),
    resets_at: Type.String({ format: 'date-time', description: 'the next UTC midnight, when the spend starts again from 0' }),
    updated_at: Nullable(Type.String({ format: 'date-time' }), 'when the budget was last set; null when never set'),
    updated_by: Nullable(Type.String(), 'user:<id> or api_key:<id> of the credential that set it; null when never set'),
    version: Type.Integer({ minimum: 0, description: '1 for the first PUT, one more for each later one; 0 when never set' }),
  },
  { $id: 'EvaluationBudget', description: "The organization's daily evaluation budget and today's spend" },
);
