/**
 * What the endpoint reads of a SQL text without parsing it (the engine parses it), and how it quotes values and
 * names it writes into SQL itself (settings it restores, the database a session uses).
 */

/** A ClickHouse string literal for any value (backslash and quote escaped; the engine parses the rest). */
export function quoteString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** A ClickHouse identifier in backquotes, escaped. */
export function quoteIdentifier(name: string): string {
  return `\`${name.replace(/\\/g, '\\\\').replace(/`/g, '\\`')}\``;
}

/** Skips whitespace and comments at the start of a SQL text; returns the first keyword, upper-cased. */
export function firstKeyword(sql: string): string {
  const lead = /^(?:\s+|--[^\n]*(?:\n|$)|#[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/.exec(sql);
  const rest = sql.slice(lead ? lead[0].length : 0);
  return (/^[A-Za-z]+/.exec(rest)?.[0] ?? '').toUpperCase();
}

/** The format named by a trailing FORMAT clause (optionally followed by SETTINGS), if any. */
export function trailingFormat(sql: string): string | undefined {
  const m = /\bFORMAT\s+([A-Za-z][A-Za-z0-9_]*)(?:\s+SETTINGS\b[^;]*)?\s*;?\s*$/i.exec(sql);
  return m?.[1];
}

/** An INSERT whose rows are expected after the statement (`… FORMAT X` or `… VALUES` with nothing after). */
export function insertExpectsData(sql: string): boolean {
  return firstKeyword(sql) === 'INSERT' && (trailingFormat(sql) !== undefined || /\bVALUES\s*;?\s*$/i.test(sql));
}
