/**
 * The one query-string parser (spec 1, "General query rules" 1, 4, 5 and "Pagination" 2, 4, 6).
 *
 * Fastify is given `lenientQuery` so that route schemas can read values; the `strictQuery`
 * check runs on every request before any handler and refuses what the lenient reading
 * would have had to guess about: malformed syntax, repeated parameters, empty or
 * malformed numbers and booleans.
 */
import { invalidRequest } from './errors.js';

export interface QueryPair {
  key: string;
  value: string;
  /** Why this pair could not be read exactly (bad percent escape, unescaped `;`). */
  malformed?: string;
  rawKey: string;
}

const PERCENT_OK = /^(?:[^%]|%[0-9A-Fa-f]{2})*$/;

function decodeComponent(raw: string): string | undefined {
  if (!PERCENT_OK.test(raw)) return undefined;
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return undefined; // percent escapes that are not valid UTF-8
  }
}

/** Splits a raw query string (without `?`) into pairs, marking the malformed ones instead of dropping them. */
export function splitQuery(raw: string): QueryPair[] {
  const pairs: QueryPair[] = [];
  if (raw === '') return pairs;
  for (const segment of raw.split('&')) {
    if (segment === '') continue;
    const eq = segment.indexOf('=');
    const rawKey = eq < 0 ? segment : segment.slice(0, eq);
    const rawValue = eq < 0 ? '' : segment.slice(eq + 1);
    const key = decodeComponent(rawKey.split(';')[0]);
    const value = decodeComponent(rawValue);
    let malformed: string | undefined;
    if (segment.includes(';')) malformed = 'unescaped ";" in query string (encode it as %3B)';
    else if (key?.includes('\u0000') || value?.includes('\u0000')) malformed = 'a query parameter contains a NUL character (%00), which no text field takes';
    else if (key === undefined || value === undefined) malformed = 'invalid percent escape in query string';
    pairs.push({ key: key ?? rawKey, value: value ?? rawValue, malformed, rawKey });
  }
  return pairs;
}

/**
 * Every value a parameter could be read as by any common parser, including values hidden behind an
 * unescaped `;` (which some parsers treat as a separator). Used to fail closed on the project selector.
 */
export function candidateValues(raw: string, name: string): { values: string[]; malformed: boolean } {
  const values: string[] = [];
  let malformed = false;
  for (const segment of raw.split('&')) {
    for (const sub of segment.split(';')) {
      const eq = sub.indexOf('=');
      const k = decodeComponent(eq < 0 ? sub : sub.slice(0, eq));
      if (k !== name) continue;
      const v = decodeComponent(eq < 0 ? '' : sub.slice(eq + 1));
      if (v === undefined || segment.includes(';')) malformed = true;
      if (v !== undefined) values.push(v);
    }
  }
  return { values, malformed };
}

/** Fastify's querystring parser: repeated keys become arrays; never throws (strictQuery refuses later). */
export function lenientQuery(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  for (const { key, value } of splitQuery(raw)) {
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[key] = [prev, value];
  }
  return { ...out };
}

type JsonSchema = { type?: string | string[]; properties?: Record<string, JsonSchema>; items?: JsonSchema; anyOf?: JsonSchema[] };

function typeOf(schema: JsonSchema | undefined): string | undefined {
  if (!schema) return undefined;
  if (schema.anyOf) return typeOf(schema.anyOf.find((s) => s.type !== 'null'));
  const t = Array.isArray(schema.type) ? schema.type.find((x) => x !== 'null') : schema.type;
  return t === 'array' ? `array:${typeOf(schema.items) ?? 'string'}` : t;
}

const INTEGER = /^-?\d+$/;
const NUMBER = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

function checkScalar(name: string, value: string, type: string | undefined): void {
  if (type === 'integer' || type === 'number') {
    if (value === '') throw invalidRequest(`query parameter "${name}" must not be empty`);
    if (!(type === 'integer' ? INTEGER : NUMBER).test(value))
      throw invalidRequest(`query parameter "${name}" must be ${type === 'integer' ? 'an integer' : 'a number'}`);
  } else if (type === 'boolean') {
    if (value !== 'true' && value !== 'false')
      throw invalidRequest(`query parameter "${name}" must be true or false`);
  }
}

/**
 * The strict reading, run before every handler. `schema` is the route's querystring schema;
 * parameters typed as arrays there are the repeatable ones, every other one may appear once.
 */
export function strictQuery(raw: string, schema: JsonSchema | undefined, opts: { undeclaredIsNone?: boolean } = {}): void {
  const pairs = splitQuery(raw);
  const bad = pairs.find((p) => p.malformed);
  if (bad) throw invalidRequest(`malformed query string: ${bad.malformed}`);
  // A REST route that declares no query parameters takes none: one sent anyway would be silently ignored.
  if (schema === undefined && opts.undeclaredIsNone && pairs.length > 0)
    throw invalidRequest(`unknown query parameter "${pairs[0].key}": this route takes no query parameters`);
  const seen = new Map<string, number>();
  for (const p of pairs) seen.set(p.key, (seen.get(p.key) ?? 0) + 1);
  const props = schema?.properties ?? {};
  for (const [name, count] of seen) {
    const type = typeOf(props[name]);
    if (count > 1 && !type?.startsWith('array')) {
      throw invalidRequest(
        name === 'cursor'
          ? 'cursor must be provided at most once'
          : `query parameter "${name}" must be provided at most once`,
      );
    }
  }
  for (const p of pairs) {
    const type = typeOf(props[p.key]);
    checkScalar(p.key, p.value, type?.startsWith('array:') ? type.slice(6) : type);
  }
}

/** Values of a repeated-or-comma-separated filter: OR within the parameter. */
export function listParam(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const parts = (Array.isArray(value) ? value : [value]).flatMap((v) => v.split(','));
  const trimmed = parts.map((s) => s.trim());
  if (trimmed.some((s) => s === '')) throw invalidRequest('filter values must not be empty');
  return [...new Set(trimmed)];
}

