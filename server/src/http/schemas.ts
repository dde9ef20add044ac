/** Schemas shared by many routes. */
import { Type, type TSchema } from '@sinclair/typebox';

export const ErrorResponse = Type.Object(
  { error: Type.String(), message: Type.String(), details: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
  { $id: 'ErrorResponse', description: 'Every non-2xx answer' },
);

/** Standard error answers a route can give, for the OpenAPI description. */
export function errors(...codes: number[]) {
  return Object.fromEntries(codes.map((c) => [c, Type.Ref('ErrorResponse')]));
}

export const ProjectSelectorQuery = {
  project_id: Type.Optional(
    Type.String({ description: 'required for organization-level credentials; a project-scoped key may omit it or repeat its own project' }),
  ),
};

/** The query string of a route that takes nothing but the project selector. */
export const ProjectQuery = Type.Object({ ...ProjectSelectorQuery }, { additionalProperties: false });

/** A string enum as a plain `enum` keyword, so an unknown value gets "must be one of: ..." naming the allowed ones. */
export function stringEnum<T extends string>(values: readonly T[], opts: { description?: string; default?: T } = {}): TSchema & { static: T } {
  return Type.Unsafe<T>({ type: 'string', enum: [...values], ...opts }) as TSchema & { static: T };
}

export const Uuidish = Type.String({ minLength: 1, maxLength: 200 });
