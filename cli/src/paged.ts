/**
 * Reads a cursor-paged list (`{<key>: [...], next_cursor}`), with the query of its own a list may take
 * (filters, repeated keys): one page or, with `all`, every page (the same query, each next_cursor in turn).
 */
import type { Context } from './context.js';
import type { Query } from './http.js';

export async function readPages<T>(
  ctx: Context,
  path: string,
  key: string,
  opts: { limit?: number; cursor?: string; all?: boolean },
  query: Query = {},
): Promise<{ items: T[]; next_cursor: string | null }> {
  const client = ctx.client();
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor = opts.cursor;
  for (;;) {
    const page = await client.get<Record<string, unknown>>(path, { query: { ...query, limit: opts.limit, cursor } });
    items.push(...((page?.[key] as T[] | undefined) ?? []));
    const next = (page?.next_cursor as string | null | undefined) ?? null;
    if (!opts.all || next === null || seen.has(next)) return { items, next_cursor: opts.all ? null : next };
    seen.add(next);
    cursor = next;
  }
}
