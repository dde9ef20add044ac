/** Schemas of the LLM model price table (`/api/v1/llm/pricing`). */
import { Type } from '@sinclair/typebox';
import { PageQuery, NextCursorField } from '../../http/pagination.js';
import { ProjectSelectorQuery } from '../../http/schemas.js';

export const MAX_USD_PER_MILLION = 10_000;
export const MAX_PRICE_DECIMALS = 6;

const Model = Type.String({
  minLength: 1,
  maxLength: 256,
  description: 'the exact model string of the steps it prices (`gen_ai.response.model`, else `gen_ai.request.model`); compared exactly, case included',
});

const Provider = Type.String({
  minLength: 1,
  maxLength: 256,
  description: 'the exact `gen_ai.provider.name` (else `gen_ai.system`) it applies to',
});

const Usd = (what: string) =>
  Type.Number({
    minimum: 0,
    maximum: MAX_USD_PER_MILLION,
    description: `US dollars per million ${what} tokens: a finite decimal number from 0 to ${MAX_USD_PER_MILLION} with at most ${MAX_PRICE_DECIMALS} decimal places (stored exactly as whole micro-dollars); nanos per token = this × 1000`,
  });

export const LlmPriceEntry = Type.Object(
  {
    project_id: Type.String(),
    model: Model,
    provider: Type.Union([Provider, Type.Null()], {
      description: 'null: any provider. A step whose provider has its own entry uses that entry; otherwise the any-provider entry',
    }),
    input_usd_per_million_tokens: Usd('input'),
    output_usd_per_million_tokens: Usd('output'),
    updated_at: Type.String({ format: 'date-time', description: 'when the price last changed (an identical PUT changes nothing)' }),
    updated_by: Type.Object(
      {
        user_id: Type.Union([Type.String(), Type.Null()], { description: 'the person behind the credential that set the price' }),
        api_key_id: Type.Union([Type.String(), Type.Null()], { description: 'the API key that set it, when the credential was one' }),
      },
      { description: 'taken from the credential, never from the request body' },
    ),
  },
  { $id: 'LlmPrice',
    description:
      'The price of a model in one project. A model step without a reported `svc.cost.nanos` costs input tokens × input price + output tokens × output price, ' +
      'computed exactly and rounded once per step, half up, to whole nanos (billionths of a US dollar). Prices are read when a run is read. ' +
      'A model without an entry is unpriced, never free.',
  },
);

export const PutLlmPriceBody = Type.Object(
  {
    model: Model,
    provider: Type.Optional(Type.Union([Provider, Type.Null()], { description: 'omitted or null: the any-provider entry' })),
    input_usd_per_million_tokens: Usd('input'),
    output_usd_per_million_tokens: Usd('output'),
  },
  { additionalProperties: false },
);

export const ListLlmPricesQuery = Type.Object(
  { ...ProjectSelectorQuery, ...PageQuery, model: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'only the entries of this exact model' })) },
  { additionalProperties: false },
);

export const ListLlmPricesResponse = Type.Object({
  prices: Type.Array(LlmPriceEntry, { description: 'ordered by model, then provider (the any-provider entry first)' }),
  next_cursor: NextCursorField,
});

export const DeleteLlmPriceQuery = Type.Object(
  {
    ...ProjectSelectorQuery,
    model: Model,
    provider: Type.Optional(Type.String({ minLength: 1, maxLength: 256, description: 'omitted: the any-provider entry of the model (not every entry of it)' })),
  },
  { additionalProperties: false },
);
