/**
 * Decoding shared by the three OTLP/HTTP export requests (metrics in decode.ts, traces and logs in
 * signal-decode.ts), on the official generated protobufjs code of @opentelemetry/otlp-transformer.
 *
 * The requests have the same three levels: Export*ServiceRequest { repeated Resource* = 1 },
 * Resource* { Resource resource = 1; repeated Scope* = 2 }, Scope* { InstrumentationScope scope = 1;
 * repeated <item> = 2 }. Protobuf bodies are walked level by level and each item (metric, span, log
 * record) is decoded on its own with the generated `decode`, so a large request never exists as one
 * object tree: each item's objects die young, which keeps the garbage collector's copying cost off the
 * ingest path (decoding the whole tree first measured 3x slower at 10,000 points because the young
 * generation overflowed). JSON bodies go through the same code's `fromObject`, so both encodings end in
 * the same classes with the same defaults (absent scalars and messages are null, absent repeated fields
 * are empty arrays).
 */
import { createRequire } from 'node:module';
import { invalidRequest } from '../../http/errors.js';
import type { KeyValue } from './decode.js';

/** protobufjs' Reader (the instance the generated code uses). */
export interface Reader {
  buf: Buffer;
  pos: number;
  len: number;
  uint32(): number;
  skipType(wireType: number): Reader;
  string(): string;
}

/** A generated message type, as the walk uses it (decoding `len` bytes at the reader's position). */
export interface Decodable<T> {
  decode(r: Reader, len: number): T;
}
export interface MessageType<T> {
  decode(buf: Uint8Array): T;
  fromObject(o: object): T;
  encode(m: object): { finish(): Uint8Array };
}

const require = createRequire(import.meta.url);
const ROOT = '@opentelemetry/otlp-transformer/build/src/generated/root.js';
/** The generated `opentelemetry.proto` namespace (`resource.v1.Resource`, `trace.v1.Span`, `collector`, ...). */
export const otlpProto = (require(ROOT) as { opentelemetry: { proto: Record<string, Record<string, Record<string, unknown>>> } }).opentelemetry.proto;
const protobufjs = createRequire(require.resolve(ROOT))('protobufjs/minimal') as { Reader: { create(buf: Uint8Array): Reader } };

const Resource = otlpProto.resource.v1.Resource as Decodable<{ attributes: KeyValue[] }>;
const InstrumentationScope = otlpProto.common.v1.InstrumentationScope as Decodable<{ name?: string | null }>;

/** Arrays and kvlists in an attribute value or a log body nest at most this many levels (a plain value is level 0). */
export const MAX_VALUE_DEPTH = 64;
const TOO_DEEP = `an attribute value or log body nests arrays or kvlists more than ${MAX_VALUE_DEPTH} levels deep; at most ${MAX_VALUE_DEPTH} levels are accepted`;
/** JSON nesting of the deepest valid request: the envelope (about a dozen levels) and 4 per value level (kvlist). */
const MAX_JSON_DEPTH = 16 + 4 * (MAX_VALUE_DEPTH + 1);

/** Thrown when a value nests too deep; answered with its own message (never the engine's stack overflow). */
class TooDeep extends Error {}

type AnyValueType = { decode(r: unknown, len?: number, err?: number): unknown; fromObject(o: unknown): unknown };

/**
 * AnyValue is the one recursive OTLP message. Its generated `decode` and `fromObject` reach nested values
 * through `$root....AnyValue.decode` at call time, so wrapping the two functions counts the nesting of
 * every value they decode: the limit holds at decode time for protobuf and JSON, before anything recurses
 * deep enough to overflow the stack (decoding, the JSON text of the value, the label text of metrics).
 * Explicit parameters (no rest array): this runs once per attribute value on the ingest path.
 */
function limitValueDepth(type: AnyValueType): void {
  const { decode, fromObject } = type;
  let depth = 0;
  const enter = () => {
    if (++depth > MAX_VALUE_DEPTH + 1) {
      depth--;
      throw new TooDeep(TOO_DEEP);
    }
  };
  type.decode = function (r, len, err) {
    enter();
    try {
      return decode.call(this, r, len, err);
    } finally {
      depth--;
    }
  };
  type.fromObject = function (o) {
    enter();
    try {
      return fromObject.call(this, o);
    } finally {
      depth--;
    }
  };
}
limitValueDepth(otlpProto.common.v1.AnyValue as unknown as AnyValueType);

/** One export request type, and what tells the decoding of one type from another's. */
export interface RequestKind<I> {
  /** `ExportMetricsServiceRequest`, ... (in error messages). */
  name: string;
  request: MessageType<object>;
  item: Decodable<I>;
  /** The repeated fields of the three levels, as named in JSON: `['resourceSpans', 'scopeSpans', 'spans']`. */
  levels: [string, string, string];
  /** How errors of the protobuf walk name the levels: "a field runs past its <resource>", "<item> does not end ...". */
  walkNames: { resource: string; scope: string; item: string };
  /** Whether items are visited with their scope name (read in a pass over each scope before its items). */
  scopeNames: boolean;
  /** The type-name prefix left out of decoder messages. */
  typePrefix: RegExp;
  /** Left out of JSON bodies before `fromObject`: nothing stores it, and its hex ids are not what `fromObject` expects for bytes. */
  dropJsonField: string;
}

/** Visits every item of a request with its resource attributes (the same array for one resource) and scope name. */
export type Visit<I> = (resourceAttributes: KeyValue[], scopeName: string | null, item: I) => void;

/** A request body, decoded while it is walked; throws ApiError 400 when it turns out malformed part way. */
export interface SignalInput<I> {
  forEach(visit: Visit<I>): void;
}

const LEN = 2; // wire type of length-delimited fields

/** The extent of a length-delimited field starting at the reader's position, checked against its parent. */
function submessage(r: Reader, end: number): number {
  const len = r.uint32();
  const stop = r.pos + len;
  if (stop > end) throw new Error(`length ${len} at offset ${r.pos} runs past its enclosing message`);
  return stop;
}

/**
 * Short ASCII strings (attribute keys and values, metric, span and scope names) repeat across items and
 * requests; they are taken from this table instead of being decoded again, which measured ~2x faster than
 * `utf8Slice` per string and makes fewer new strings. An entry is used only when every byte matches it.
 */
const INTERN_MAX_LENGTH = 48;
const INTERN_MAX_ENTRIES = 50_000;
let interned = new Map<number, string>();

function readString(this: Reader): string {
  const len = this.uint32();
  const start = this.pos;
  const end = start + len;
  if (end > this.len) throw new RangeError(`index out of range: ${start} + ${len} > ${this.len}`);
  this.pos = end;
  const buf = this.buf;
  if (len > INTERN_MAX_LENGTH) return buf.toString('utf8', start, end);
  let h = len;
  for (let i = start; i < end; i++) {
    const b = buf[i];
    if (b > 0x7f) return buf.toString('utf8', start, end);
    h = (Math.imul(h, 31) + b) | 0;
  }
  const hit = interned.get(h);
  if (hit !== undefined && hit.length === len) {
    let same = true;
    for (let i = 0; i < len; i++) {
      if (hit.charCodeAt(i) !== buf[start + i]) {
        same = false;
        break;
      }
    }
    if (same) return hit;
  }
  const s = buf.toString('latin1', start, end);
  if (interned.size >= INTERN_MAX_ENTRIES) interned = new Map();
  interned.set(h, s);
  return s;
}

/** Carries an error of the visitor through the walk, so it is not mistaken for a malformed body. */
class VisitError {
  constructor(readonly error: unknown) {}
}

/**
 * Fields may come in any order, so a Resource* is scanned once for its resource (the last one wins, as in
 * the generated decoder) and, with `scopeNames`, a Scope* for its scope before their items are decoded.
 * Unknown fields are skipped.
 */
function walk<I>(bytes: Uint8Array, kind: RequestKind<I>, visit: Visit<I>): void {
  const { item, scopeNames, walkNames } = kind;
  const r = protobufjs.Reader.create(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  r.string = readString; // this reader only; the library's prototype is untouched
  const scopes: number[] = [];
  while (r.pos < r.len) {
    const tag = r.uint32();
    if (tag >>> 3 !== 1 || (tag & 7) !== LEN) {
      r.skipType(tag & 7);
      continue;
    }
    const rEnd = submessage(r, r.len);
    let attrs: KeyValue[] = [];
    scopes.length = 0;
    while (r.pos < rEnd) {
      const t = r.uint32();
      const field = t >>> 3;
      if ((field === 1 || field === 2) && (t & 7) === LEN) {
        const start = r.pos;
        const end = submessage(r, rEnd);
        if (field === 1) {
          attrs = Resource.decode(r, end - r.pos).attributes ?? [];
          if (r.pos !== end) throw new Error('a Resource does not end where its length says');
        } else scopes.push(start);
        r.pos = end;
      } else r.skipType(t & 7);
      if (r.pos > rEnd) throw new Error(`a field runs past its ${walkNames.resource}`);
    }
    for (const start of scopes) {
      r.pos = start;
      const sEnd = submessage(r, rEnd);
      let scopeName: string | null = null;
      if (scopeNames) {
        const itemsAt = r.pos;
        while (r.pos < sEnd) {
          const t = r.uint32();
          if (t >>> 3 === 1 && (t & 7) === LEN) {
            const end = submessage(r, sEnd);
            scopeName = InstrumentationScope.decode(r, end - r.pos).name || null;
            r.pos = end;
          } else r.skipType(t & 7);
          if (r.pos > sEnd) throw new Error(`a field runs past its ${walkNames.scope}`);
        }
        r.pos = itemsAt;
      }
      while (r.pos < sEnd) {
        const t = r.uint32();
        if (t >>> 3 === 2 && (t & 7) === LEN) {
          const end = submessage(r, sEnd);
          const decoded = item.decode(r, end - r.pos);
          if (r.pos !== end) throw new Error(`${walkNames.item} does not end where its length says`);
          try {
            visit(attrs, scopeName, decoded);
          } catch (e) {
            throw new VisitError(e);
          }
        } else r.skipType(t & 7);
        if (r.pos > sEnd) throw new Error(`a field runs past its ${walkNames.scope}`);
      }
    }
    r.pos = rEnd;
  }
}

/** A protobuf body, decoded item by item while it is walked. */
export function protobufInput<I>(bytes: Uint8Array, kind: RequestKind<I>): SignalInput<I> {
  return {
    forEach(visit) {
      try {
        walk(bytes, kind, visit);
      } catch (e) {
        if (e instanceof VisitError) throw e.error;
        if (e instanceof TooDeep) throw invalidRequest(e.message);
        throw invalidRequest(`request body is not a valid protobuf ${kind.name}: ${reason(e, kind)}`);
      }
    },
  };
}

/**
 * An OTLP/HTTP JSON body: lowerCamelCase field names (the proto snake_case names are accepted too), int64
 * as string or number, enums as integers (or names), bytes as base64. `fixItem` sees each item (as plain
 * JSON, names normalized) before `fromObject`, to put right what the generated code does not know (the
 * hex trace and span ids of OTLP JSON, see signal-decode.ts).
 */
export function jsonInput<I>(bytes: Uint8Array, kind: RequestKind<I>, fixItem?: (item: Record<string, unknown>) => void): SignalInput<I> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    throw invalidRequest('request body is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalidRequest(`request body must be a JSON object (an OTLP ${kind.name})`);
  try {
    const o = normalizeJson(parsed, kind.dropJsonField) as Record<string, unknown>;
    if (fixItem) eachJsonItem(o, kind.levels, fixItem);
    return treeInput(kind.request.fromObject(o) as Record<string, unknown>, kind.levels);
  } catch (e) {
    if (e instanceof TooDeep) throw invalidRequest(e.message);
    if (e instanceof OutOfRange) throw invalidRequest(`request body is not a valid OTLP JSON ${kind.name}: ${e.message}`);
    throw invalidRequest(`request body is not a valid OTLP JSON ${kind.name}: ${reason(e, kind)}`);
  }
}

/** A decoded request tree walked the same way: `levels` names the repeated fields. */
function treeInput<I>(tree: Record<string, unknown>, levels: [string, string, string]): SignalInput<I> {
  const [l1, l2, l3] = levels;
  type R = { resource?: { attributes?: KeyValue[] } | null } & Record<string, unknown>;
  type S = { scope?: { name?: string | null } | null } & Record<string, unknown>;
  return {
    forEach(visit) {
      for (const rs of (tree[l1] as R[] | undefined) ?? []) {
        const attrs = rs.resource?.attributes ?? [];
        for (const ss of (rs[l2] as S[] | undefined) ?? []) {
          const scopeName = ss.scope?.name || null;
          for (const it of (ss[l3] as I[] | undefined) ?? []) visit(attrs, scopeName, it);
        }
      }
    },
  };
}

/** Items at `path` (arrays of objects at each level) of a normalized JSON tree; non-arrays are skipped (fromObject refuses them). */
function eachJsonItem(o: Record<string, unknown>, path: [string, string, string], fn: (item: Record<string, unknown>) => void): void {
  const arr = (v: unknown) => (Array.isArray(v) ? (v as unknown[]).filter((x): x is Record<string, unknown> => x !== null && typeof x === 'object') : []);
  for (const a of arr(o[path[0]])) for (const b of arr(a[path[1]])) for (const item of arr(b[path[2]])) fn(item);
}

function reason(e: unknown, kind: RequestKind<unknown>): string {
  // A stack overflow elsewhere (e.g. deeply nested unknown groups the decoder skips) is told in our words.
  if (e instanceof RangeError && /call stack/i.test(e.message)) return 'it nests too deeply';
  const msg = e instanceof Error ? e.message : String(e);
  return msg.replace(kind.typePrefix, '').slice(0, 300);
}

const camel = (k: string) => k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/**
 * In place: snake_case keys become lowerCamelCase (the camelCase one wins when both are sent); `drop` goes.
 * Nesting deeper than any valid request is refused here, before `fromObject` recurses.
 */
/** The 64-bit integer fields of the OTLP messages (JSON carries them as decimal strings or numbers). */
const SIGNED_64 = new Set(['intValue', 'asInt']);
const UNSIGNED_64 = new Set(['timeUnixNano', 'startTimeUnixNano', 'endTimeUnixNano', 'observedTimeUnixNano', 'count', 'zeroCount', 'bucketCounts']);
const MAX_U64 = 2n ** 64n - 1n;
const MIN_S64 = -(2n ** 63n);
const MAX_S64 = 2n ** 63n - 1n;

/** Thrown when a 64-bit field's value does not fit it (the generated code would wrap or clamp it silently). */
class OutOfRange extends Error {}

/** Refuses an integer outside the field's 64-bit range; other forms are left to the generated code's own checks. */
function check64(field: string, v: unknown): void {
  let n: bigint;
  if (typeof v === 'string' && /^[+-]?\d+$/.test(v.trim())) n = BigInt(v.trim());
  else if (typeof v === 'number' && Number.isFinite(v) && Number.isInteger(v)) n = BigInt(v);
  else if (typeof v === 'number' && !Number.isFinite(v)) throw new OutOfRange(`${snake(field)} must be an integer; got ${v}`);
  else return;
  const [lo, hi, what] = SIGNED_64.has(field) ? [MIN_S64, MAX_S64, 'a signed 64-bit integer'] : [0n, MAX_U64, 'an unsigned 64-bit integer'];
  if (n < lo || n > hi) throw new OutOfRange(`${snake(field)} is out of range: ${String(v).slice(0, 40)} does not fit ${what}`);
}

function snake(camelName: string): string {
  return camelName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

function normalizeJson(v: unknown, drop: string, depth = 0): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (depth > MAX_JSON_DEPTH)
    throw new TooDeep(
      `request body nests JSON more than ${MAX_JSON_DEPTH} levels deep (attribute values and log bodies may nest arrays and kvlists at most ${MAX_VALUE_DEPTH} levels)`,
    );
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = normalizeJson(v[i], drop, depth + 1);
    return v;
  }
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (k === '__proto__' || k === drop) {
      delete o[k];
      continue;
    }
    const value = normalizeJson(o[k], drop, depth + 1);
    const field = k.includes('_') ? camel(k) : k;
    if (SIGNED_64.has(field) || UNSIGNED_64.has(field)) {
      if (Array.isArray(value)) for (const x of value) check64(field, x);
      else check64(field, value);
    }
    if (k.includes('_')) {
      delete o[k];
      if (!Object.prototype.hasOwnProperty.call(o, field)) o[field] = value;
    } else o[k] = value;
  }
  return o;
}
