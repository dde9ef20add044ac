/**
 * OTLP attribute maps as the JSON objects stored in `spans.attributes`, `span_events.attributes` and
 * `logs.attributes`: string, bool and number values as such, int64 as a number when it is exact in a
 * double (else its decimal string), a double that JSON cannot hold (NaN, ±Infinity) as its string,
 * arrays as arrays, kvlists as objects, bytes as base64. A repeated key keeps its last value.
 */
import type { AnyValue, Int64, KeyValue } from './decode.js';
import { anyValueJson, attributeMap } from './values.js';
import { applyToAttributes, type ContentAccess } from '../../domains/content-policy/access.js';

/**
 * The attribute list as JSON object text; with `store`, recorded-content keys as the project's content
 * policy lets them be stored (left out, or their value replaced by a size marker: docs/content-policy.md).
 */
export function attributesJson(kvs: readonly KeyValue[] | null | undefined, store?: ContentAccess): string {
  if (!kvs || kvs.length === 0) return '{}';
  const map = attributeMap(kvs);
  return JSON.stringify(store ? applyToAttributes(map, store) : map);
}

/** A log body: a string as is, any other value as JSON; null when there is none. */
export function bodyText(v: AnyValue | null | undefined): string | null {
  if (!v) return null;
  if (v.stringValue !== null && v.stringValue !== undefined) return v.stringValue;
  const j = anyValueJson(v);
  return j === null ? null : JSON.stringify(j);
}

/**
 * A fixed64 nanosecond timestamp as whole microseconds (floor), exact: 2^32 = 4294967 * 1000 + 296, so
 * (high * 2^32 + low) / 1000 splits into two exact parts. NaN when it is not a non-negative integer.
 */
export function nanosToUs(v: Int64): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return Number.isFinite(v) && v >= 0 ? Math.floor(v / 1000) : NaN;
  if (typeof v === 'string') return /^\d{1,20}$/.test(v) ? (v.length > 3 ? Number(v.slice(0, -3)) : 0) : NaN;
  if (!v.unsigned && (v.high | 0) < 0) return NaN;
  const high = v.high >>> 0;
  const low = v.low >>> 0;
  return high * 4294967 + Math.floor((high * 296 + low) / 1000);
}
