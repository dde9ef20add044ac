/**
 * Cursor and limit rules shared by every list route (spec 1, "Pagination of agent evidence").
 * Duplicate cursors are refused by strictQuery before the route runs (rule 2, 6); this module
 * reads the single cursor (rule 3) and the limit (rule 4).
 */
import { Type } from '@sinclair/typebox';
import { invalidRequest } from './errors.js';

export const U32_MAX = 4294967295;

/** Query fields every paged list declares. */
export const PageQuery = {
  cursor: Type.Optional(Type.String({ description: 'opaque; omit or send empty for the first page' })),
  limit: Type.Optional(Type.Integer({ minimum: 0, maximum: U32_MAX, description: 'unsigned 32-bit integer' })),
};

/** `next_cursor` of every paged list: a named OpenAPI component (`#/components/schemas/NextCursor`). */
export const NextCursor = Type.Union([Type.String(), Type.Null()], {
  $id: 'NextCursor',
  description: 'send as cursor to continue with the same query; null at the end',
});

/** The `next_cursor` field of a list response. */
export const NextCursorField = Type.Ref(NextCursor);

export interface LimitRule {
  default: number;
  max: number;
  /** What an explicit 0 means for this endpoint; by default it is refused. */
  zero?: 'refuse' | 'empty';
}

export function readLimit(limit: number | undefined, rule: LimitRule): number {
  if (limit === undefined) return rule.default;
  if (limit === 0 && rule.zero === 'empty') return 0;
  if (limit < 1 || limit > rule.max) throw invalidRequest(`limit must be between 1 and ${rule.max}`);
  return limit;
}

/** A position in a list ordered by (sort key, id). */
export interface CursorPosition {
  k: string | number;
  id: string;
}

export function encodeCursor(pos: CursorPosition): string {
  return Buffer.from(JSON.stringify([pos.k, pos.id])).toString('base64url');
}

export function decodeCursor(cursor: string | undefined): CursorPosition | undefined {
  if (cursor === undefined || cursor === '') return undefined;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error('bad alphabet');
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(v) && v.length === 2 && (typeof v[0] === 'string' || typeof v[0] === 'number') && typeof v[1] === 'string')
      return { k: v[0], id: v[1] };
  } catch {
    /* fall through */
  }
  throw invalidRequest('cursor is malformed or expired');
}

/** Builds a page from `limit + 1` rows read after the cursor. */
export function page<T>(rows: T[], limit: number, position: (row: T) => CursorPosition) {
  const more = rows.length > limit;
  const items = more ? rows.slice(0, limit) : rows;
  return {
    items,
    next_cursor: more && items.length > 0 ? encodeCursor(position(items[items.length - 1])) : null,
  };
}
