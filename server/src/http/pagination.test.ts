import { describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor, page, readLimit } from './pagination.js';

describe('pagination helpers', () => {
  it('a cursor round-trips and is opaque url-safe text', () => {
    const c = encodeCursor({ k: '2026-01-01T00:00:00.000Z', id: 'x' });
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(c)).toEqual({ k: '2026-01-01T00:00:00.000Z', id: 'x' });
  });

  it('rule 3: a single cursor can still be rejected as malformed', () => {
    expect(() => decodeCursor('not a cursor')).toThrow(/cursor/);
    expect(() => decodeCursor(Buffer.from('[1]').toString('base64url'))).toThrow(/cursor/);
  });

  it('an empty cursor is the first page', () => {
    expect(decodeCursor('')).toBeUndefined();
  });

  it('rule 4: omission keeps the default; the maximum is refused above it; 0 follows the endpoint', () => {
    expect(readLimit(undefined, { default: 100, max: 200 })).toBe(100);
    expect(() => readLimit(201, { default: 100, max: 200 })).toThrow(/between 1 and 200/);
    expect(() => readLimit(0, { default: 100, max: 200 })).toThrow();
    expect(readLimit(0, { default: 100, max: 200, zero: 'empty' })).toBe(0);
  });

  it('a page says where to continue only when more rows follow', () => {
    const rows = [1, 2, 3].map((n) => ({ n }));
    expect(page(rows, 2, (r) => ({ k: r.n, id: String(r.n) })).next_cursor).not.toBeNull();
    expect(page(rows, 3, (r) => ({ k: r.n, id: String(r.n) })).next_cursor).toBeNull();
  });
});
