/** SQL pieces the ClickHouse adapters share. */
import type { AttrFilter } from '../../../domains/traces/query-rules.js';
import type { QueryParams } from './client.js';

/** A number from a ClickHouse JSON value (64-bit integers arrive as strings); 0 for null. */
export const chNum = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
export const chNumOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
export const chStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

/**
 * One attribute of a JSON object column as text, as DuckDB's `json_extract_string` gives it: a string as
 * itself, any other value as its JSON text, NULL when the key is absent or the value is null. The key is a
 * literal key (dots are part of it), passed as a parameter. A query using it runs with `allow_simdjson = 0`: the
 * default parser refuses a whole document holding an integer beyond 64 bits (JSON.stringify writes some doubles so).
 */
export function jsonText(column: string, keyParam: string): string {
  return `multiIf(JSONType(${column}, {${keyParam}:String}) = 'String', JSONExtractString(${column}, {${keyParam}:String}), JSONType(${column}, {${keyParam}:String}) IN ('Null', 'Nothing'), NULL, JSONExtractRaw(${column}, {${keyParam}:String}))`;
}

/** Attribute conditions: the row's own attribute, else its resource attribute, equals one of the values. */
export function chAttrConditions(filters: AttrFilter[], params: QueryParams, prefix: string, alias = ''): string[] {
  const a = alias ? `${alias}.` : '';
  return filters.map((f, i) => {
    params[`${prefix}${i}k`] = f.key;
    params[`${prefix}${i}v`] = f.values;
    return `has({${prefix}${i}v:Array(String)}, coalesce(${jsonText(`${a}attributes`, `${prefix}${i}k`)}, ${jsonText(`${a}resource_attributes`, `${prefix}${i}k`)}))`;
  });
}

/** The traces of a project deleted for good (their late copies stay out of every read). */
export const NOT_TOMBSTONED = (projectParam: string) => `trace_id NOT IN (SELECT trace_id FROM trace_tombstones WHERE project_id = {${projectParam}:String})`;
