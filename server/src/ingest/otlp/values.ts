/** OTLP value helpers: int64 fields, attribute values as label text, labels, resource identity, series ids. */
import { createHash } from 'node:crypto';
import type { MetricType } from '../../domains/metrics/rows.js';
import type { AnyValue, Int64, KeyValue } from './decode.js';

const TWO32 = 4294967296;

/** An int64 field as a JS number (exact up to 2^53, nearest double above). */
export function int64ToNumber(v: Int64): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return v;
  if (typeof v === 'string') return v.trim() === '' ? NaN : Number(v);
  return (v.unsigned ? v.high >>> 0 : v.high | 0) * TWO32 + (v.low >>> 0);
}

/** A fixed64 nanosecond timestamp as whole milliseconds (floor), exact: no double rounding of the nanoseconds. */
export function nanosToMs(v: Int64): number {
  if (v === null || v === undefined) return 0;
  if (typeof v === 'number') return Math.floor(v / 1e6);
  if (typeof v === 'string') return /^\d{1,20}$/.test(v) ? (v.length > 6 ? Number(v.slice(0, -6)) : 0) : NaN;
  const high = v.high >>> 0;
  const low = v.low >>> 0;
  // 2^32 = 4294 * 1e6 + 967296, so (high * 2^32 + low) / 1e6 splits into two exact parts.
  return high * 4294 + Math.floor((high * 967296 + low) / 1e6);
}

/**
 * A uint64 count as bigint; undefined when it is not a non-negative integer. Counts of 2^63 or more are
 * refused too: the JSON path (`fromObject`) turns "-5" into the same bits as 2^64 - 5.
 */
export function uint64ToBigInt(v: Int64): bigint | undefined {
  if (v === null || v === undefined) return 0n;
  if (typeof v === 'number') return Number.isSafeInteger(v) && v >= 0 ? BigInt(v) : undefined;
  if (typeof v === 'string') return /^\d{1,20}$/.test(v) ? BigInt(v) : undefined;
  if ((v.high | 0) < 0) return undefined;
  const high = v.high >>> 0;
  const low = v.low >>> 0;
  return high < 0x200000 ? BigInt(high * TWO32 + low) : (BigInt(high) << 32n) | BigInt(low);
}

function int64Text(v: Int64): string {
  if (v === null || v === undefined) return '0';
  if (typeof v === 'number' || typeof v === 'string') return String(v);
  const high = v.unsigned ? v.high >>> 0 : v.high | 0;
  if (high > -0x200000 && high < 0x200000) return String(high * TWO32 + (v.low >>> 0));
  return ((BigInt(high) << 32n) | BigInt(v.low >>> 0)).toString();
}

/**
 * An attribute value as plain JSON: string, bool and number values as such, int64 as a number when it is
 * exact in a double (else its decimal string), a double that JSON cannot hold (NaN, ±Infinity) as its
 * string, arrays as arrays, kvlists as objects (`attributeMap`), bytes as base64.
 */
export function anyValueJson(v: AnyValue | null | undefined): unknown {
  if (!v) return null;
  if (v.stringValue !== null && v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== null && v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== null && v.intValue !== undefined) {
    const n = int64ToNumber(v.intValue);
    return Number.isSafeInteger(n) ? n : int64Text(v.intValue);
  }
  if (v.doubleValue !== null && v.doubleValue !== undefined) return Number.isFinite(v.doubleValue) ? v.doubleValue : String(v.doubleValue);
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(anyValueJson);
  if (v.kvlistValue) return attributeMap(v.kvlistValue.values ?? []);
  // A JSON body may give bytes as an array of numbers (`fromObject` keeps it as sent), hence Buffer.from.
  if (v.bytesValue) return (Buffer.isBuffer(v.bytesValue) ? v.bytesValue : Buffer.from(v.bytesValue)).toString('base64');
  return null;
}

/** Key-values as a JSON object (no prototype, so any key is an own property). A repeated key keeps its last value. */
export function attributeMap(kvs: readonly KeyValue[]): Record<string, unknown> {
  const o: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
  for (const kv of kvs) o[kv.key ?? ''] = anyValueJson(kv.value);
  return o;
}

/** An attribute value as label text: strings as sent, numbers and booleans stringified, arrays and maps as JSON. */
export function anyValueText(v: AnyValue | null | undefined): string {
  if (!v) return '';
  if (v.stringValue !== null && v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== null && v.boolValue !== undefined) return v.boolValue ? 'true' : 'false';
  if (v.intValue !== null && v.intValue !== undefined) return int64Text(v.intValue);
  if (v.doubleValue !== null && v.doubleValue !== undefined) return String(v.doubleValue);
  if (v.arrayValue || v.kvlistValue || v.bytesValue) return JSON.stringify(anyValueJson(v));
  return '';
}

const byKey = (a: KeyValue, b: KeyValue) => ((a.key ?? '') < (b.key ?? '') ? -1 : (a.key ?? '') > (b.key ?? '') ? 1 : 0);

/**
 * The labels of a point: a JSON object with string values and keys sorted by code unit (written by
 * hand, because a JS object would put integer-like keys first). A repeated key keeps its last value.
 */
export function labelsJson(attrs: KeyValue[]): string {
  const n = attrs.length;
  if (n === 0) return '{}';
  if (n === 1) return `{${JSON.stringify(attrs[0].key ?? '')}:${JSON.stringify(anyValueText(attrs[0].value))}}`;
  let order = attrs;
  for (let i = 1; i < n; i++) {
    if (!((attrs[i - 1].key ?? '') < (attrs[i].key ?? ''))) {
      order = attrs.slice().sort(byKey); // stable: among equal keys the last sent stays last
      break;
    }
  }
  let out = '{';
  for (let i = 0; i < n; i++) {
    const key = order[i].key ?? '';
    if (i + 1 < n && (order[i + 1].key ?? '') === key) continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(key)}:${JSON.stringify(anyValueText(order[i].value))}`;
  }
  return `${out}}`;
}

/** `service.name` and the deployment environment of a resource; null when absent. */
export function resourceIdentity(attrs: KeyValue[]): { serviceName: string | null; environment: string | null } {
  let serviceName: string | null = null;
  let envName: string | null = null;
  let envLegacy: string | null = null;
  for (const kv of attrs) {
    if (kv.key === 'service.name') serviceName = anyValueText(kv.value);
    else if (kv.key === 'deployment.environment.name') envName = anyValueText(kv.value);
    else if (kv.key === 'deployment.environment') envLegacy = anyValueText(kv.value);
  }
  return { serviceName, environment: envName ?? envLegacy };
}

/** 64-bit series id: the first 8 bytes of sha256 over (name, type, service_name, environment, labels). */
export function seriesId(name: string, type: MetricType, serviceName: string | null, environment: string | null, labels: string): bigint {
  return createHash('sha256').update(JSON.stringify([name, type, serviceName, environment, labels])).digest().readBigUInt64BE(0);
}
