/**
 * Decoding shared by the trace and log requests, on the official generated protobufjs code of
 * @opentelemetry/otlp-transformer (the same root decode.ts uses for metrics).
 *
 * Both requests have the same three levels: Export*ServiceRequest { repeated Resource* = 1 },
 * Resource* { Resource resource = 1; repeated Scope* = 2 }, Scope* { InstrumentationScope scope = 1;
 * repeated <item> = 2 }. Protobuf bodies are walked level by level and each item (span, log record) is
 * decoded on its own with the generated `decode`, so a large request never exists as one object tree
 * (see decode.ts for why that matters to the garbage collector). JSON bodies go through `fromObject`
 * after the OTLP JSON rules the generated code does not know (hex ids, see `hexIdsToBytes`).
 */
import { createRequire } from 'node:module';
import { invalidRequest } from '../../http/errors.js';
import type { AnyValue, Int64, KeyValue } from './decode.js';

/** protobufjs' Reader (the instance the generated code uses). */
export interface Reader {
  buf: Buffer;
  pos: number;
  len: number;
  uint32(): number;
  skipType(wireType: number): Reader;
  string(): string;
}

interface Decodable<T> {
  decode(r: Reader, len: number): T;
}
interface MessageType<T> {
  decode(buf: Uint8Array): T;
  fromObject(o: object): T;
  encode(m: object): { finish(): Uint8Array };
}

export interface SpanEventMessage {
  timeUnixNano?: Int64;
  name?: string | null;
  attributes: KeyValue[];
}
export interface SpanMessage {
  traceId?: Uint8Array | null;
  spanId?: Uint8Array | null;
  parentSpanId?: Uint8Array | null;
  name?: string | null;
  kind?: number | null;
  startTimeUnixNano?: Int64;
  endTimeUnixNano?: Int64;
  attributes: KeyValue[];
  events: SpanEventMessage[];
  status?: { code?: number | null; message?: string | null } | null;
}
export interface LogRecordMessage {
  timeUnixNano?: Int64;
  observedTimeUnixNano?: Int64;
  severityNumber?: number | null;
  severityText?: string | null;
  body?: AnyValue | null;
  attributes: KeyValue[];
  traceId?: Uint8Array | null;
  spanId?: Uint8Array | null;
}
interface Scope {
  name?: string | null;
}

const require = createRequire(import.meta.url);
const ROOT = '@opentelemetry/otlp-transformer/build/src/generated/root.js';
const proto = (require(ROOT) as { opentelemetry: { proto: Record<string, Record<string, Record<string, unknown>>> } }).opentelemetry.proto;
const protobufjs = createRequire(require.resolve(ROOT))('protobufjs/minimal') as { Reader: { create(buf: Uint8Array): Reader } };

const Resource = proto.resource.v1.Resource as Decodable<{ attributes: KeyValue[] }>;
const InstrumentationScope = proto.common.v1.InstrumentationScope as Decodable<Scope>;
export const SpanMessageType = proto.trace.v1.Span as Decodable<SpanMessage>;
export const LogRecordMessageType = proto.logs.v1.LogRecord as Decodable<LogRecordMessage>;

/** The generated collector messages (also used by tests to build bodies and read responses). */
export const otlpTraces = (proto.collector as unknown as { trace: { v1: Record<string, MessageType<object>> } }).trace.v1 as {
  ExportTraceServiceRequest: MessageType<object>;
  ExportTraceServiceResponse: MessageType<object>;
};
export const otlpLogs = (proto.collector as unknown as { logs: { v1: Record<string, MessageType<object>> } }).logs.v1 as {
  ExportLogsServiceRequest: MessageType<object>;
  ExportLogsServiceResponse: MessageType<object>;
};

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
 * Short ASCII strings (attribute keys, span names, scope names) repeat across items and requests; they
 * come from this table instead of being decoded again when every byte matches (as in decode.ts).
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
 * the generated decoder) and a Scope* for its scope before their items are decoded. Unknown fields are skipped.
 */
function walk<I>(bytes: Uint8Array, item: Decodable<I>, visit: Visit<I>): void {
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
      if (r.pos > rEnd) throw new Error('a field runs past its resource');
    }
    for (const start of scopes) {
      r.pos = start;
      const sEnd = submessage(r, rEnd);
      const itemsAt = r.pos;
      let scopeName: string | null = null;
      while (r.pos < sEnd) {
        const t = r.uint32();
        if (t >>> 3 === 1 && (t & 7) === LEN) {
          const end = submessage(r, sEnd);
          scopeName = InstrumentationScope.decode(r, end - r.pos).name || null;
          r.pos = end;
        } else r.skipType(t & 7);
        if (r.pos > sEnd) throw new Error('a field runs past its scope');
      }
      r.pos = itemsAt;
      while (r.pos < sEnd) {
        const t = r.uint32();
        if (t >>> 3 === 2 && (t & 7) === LEN) {
          const end = submessage(r, sEnd);
          const decoded = item.decode(r, end - r.pos);
          if (r.pos !== end) throw new Error('an item does not end where its length says');
          try {
            visit(attrs, scopeName, decoded);
          } catch (e) {
            throw new VisitError(e);
          }
        } else r.skipType(t & 7);
        if (r.pos > sEnd) throw new Error('a field runs past its scope');
      }
    }
    r.pos = rEnd;
  }
}

/** A protobuf body of `messageName`, decoded item by item while it is walked. */
export function protobufInput<I>(bytes: Uint8Array, item: Decodable<I>, messageName: string): SignalInput<I> {
  return {
    forEach(visit) {
      try {
        walk(bytes, item, visit);
      } catch (e) {
        if (e instanceof VisitError) throw e.error;
        throw invalidRequest(`request body is not a valid protobuf ${messageName}: ${reason(e)}`);
      }
    },
  };
}

/** A decoded request tree (JSON bodies) walked the same way: `levels` names the repeated fields. */
export function treeInput<I>(tree: Record<string, unknown>, levels: [string, string, string]): SignalInput<I> {
  const [l1, l2, l3] = levels;
  type R = { resource?: { attributes?: KeyValue[] } | null } & Record<string, unknown>;
  type S = { scope?: Scope | null } & Record<string, unknown>;
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

/**
 * An OTLP/HTTP JSON body: lowerCamelCase field names (the proto snake_case names are accepted too),
 * int64 as string or number, enums as integers (or names), bytes as base64, except trace and span ids,
 * which OTLP JSON sends as hex strings (case-insensitive): `fixIds` turns those into bytes before
 * `fromObject` (which would read them as base64).
 */
export function decodeJsonBody<M>(bytes: Uint8Array, type: MessageType<M>, messageName: string, fixIds: (o: Record<string, unknown>) => void): M {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
  } catch {
    throw invalidRequest('request body is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
    throw invalidRequest(`request body must be a JSON object (an OTLP ${messageName})`);
  try {
    const o = normalizeJson(parsed) as Record<string, unknown>;
    fixIds(o);
    return type.fromObject(o);
  } catch (e) {
    throw invalidRequest(`request body is not a valid OTLP JSON ${messageName}: ${reason(e)}`);
  }
}

/** Items at `path` (arrays of objects at each level) of a normalized JSON tree; non-arrays are skipped (fromObject refuses them). */
export function eachJsonItem(o: Record<string, unknown>, path: [string, string, string], fn: (item: Record<string, unknown>) => void): void {
  const arr = (v: unknown) => (Array.isArray(v) ? (v as unknown[]).filter((x): x is Record<string, unknown> => x !== null && typeof x === 'object') : []);
  for (const a of arr(o[path[0]])) for (const b of arr(a[path[1]])) for (const item of arr(b[path[2]])) fn(item);
}

/** Bytes that no valid id has (wrong length, not zero): what a malformed hex id becomes, so it is refused like one. */
const MALFORMED_ID = Uint8Array.of(0xff);

/** Replaces a hex id field of a JSON item by its bytes (an empty string is no id; malformed hex is refused later). */
export function hexField(item: Record<string, unknown>, field: string): void {
  const v = item[field];
  if (typeof v !== 'string') return;
  item[field] = v.length % 2 === 0 && /^[0-9a-fA-F]*$/.test(v) ? Buffer.from(v, 'hex') : MALFORMED_ID;
}

function reason(e: unknown): string {
  const msg = e instanceof Error ? e.message : String(e);
  return msg.replace(/^\.opentelemetry\.proto\.(?:collector\.)?(?:trace|logs|common|resource)\.v1\./, '').slice(0, 300);
}

const camel = (k: string) => k.replace(/_([a-z0-9])/g, (_m, c: string) => c.toUpperCase());

/** In place: snake_case keys become lowerCamelCase (the camelCase one wins when both are sent); span links go (not stored). */
function normalizeJson(v: unknown): unknown {
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) v[i] = normalizeJson(v[i]);
    return v;
  }
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, unknown>;
  for (const k of Object.keys(o)) {
    if (k === '__proto__' || k === 'links') {
      delete o[k];
      continue;
    }
    const value = normalizeJson(o[k]);
    if (k.includes('_')) {
      delete o[k];
      const c = camel(k);
      if (!Object.prototype.hasOwnProperty.call(o, c)) o[c] = value;
    } else o[k] = value;
  }
  return o;
}

/** Lower-case hex of raw id bytes. */
export function hexOf(b: Uint8Array): string {
  return (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength)).toString('hex');
}

/** True when the id has `size` bytes and is not all zero (the OTLP rule for a valid trace or span id). */
export function validId(b: Uint8Array | null | undefined, size: number): b is Uint8Array {
  if (!b || b.length !== size) return false;
  for (let i = 0; i < size; i++) if (b[i] !== 0) return true;
  return false;
}

/** True when the field carries no id: absent, empty, or all zero bytes. */
export function noId(b: Uint8Array | null | undefined): boolean {
  if (!b || b.length === 0) return true;
  for (let i = 0; i < b.length; i++) if (b[i] !== 0) return false;
  return true;
}
