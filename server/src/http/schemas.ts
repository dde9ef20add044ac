/** Schemas shared by many routes. */
import { Type, type TSchema } from '@sinclair/typebox';

export const ErrorResponse = Type.Object(
  { error: Type.String(), message: Type.String(), details: Type.Optional(Type.Record(Type.String(), Type.Unknown())) },
  { $id: 'ErrorResponse', description: 'Every non-2xx answer' },
);

const ERROR_MEANING: Record<number, string> = {
  400: 'invalid request: a malformed, repeated or invalid query parameter, an invalid body, or more than one credential',
  401: 'authentication required, or the credential is unknown, expired or revoked',
  403: 'permission denied: missing scope or role, or a project selector the credential may not use',
  404: 'not found (or not visible to this credential)',
  409: 'conflict with the current state',
  410: 'gone (expired)',
  413: 'request body too large',
  415: 'unsupported content type or content encoding',
  429: 'too many requests: an agent or evaluation budget is spent (Retry-After), or the result would be too large',
  501: 'not implemented for this kind of request',
  503: 'temporarily unavailable; retry after Retry-After seconds',
  504: 'the work ran past its time budget; nothing was stored',
};

/** Standard error answers a route can give, for the OpenAPI description: each is the named `ErrorResponse`. */
export function errors(...codes: number[]) {
  return Object.fromEntries(codes.map((c) => [c, Type.Ref('ErrorResponse', { description: ERROR_MEANING[c] ?? 'error' })]));
}

/** A 204 answer: no body (the OpenAPI description shows the status without content); the handler sends nothing. */
export const NoContent = Type.Unsafe<undefined>({ type: 'null', description: 'done; no body' });

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
