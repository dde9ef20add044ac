/**
 * What one request may do with recorded content at one boundary (`store` at ingest, `read` on the read
 * routes), decided once per request, and its application to attribute maps and metric labels. Every
 * content key is classified by the one table (domains/content/content-keys.ts). No HTTP, no SQL.
 *
 * - `allow`: the value as sent.
 * - `allow_metadata`: the key stays, its value becomes a marker naming its size in bytes
 *   (`[content withheld by policy: 123 bytes]`, model.ts), never the bytes.
 * - `deny`: the key is left out (on reads it is named in `withheld_attribute_keys`).
 */
import { permissionDenied } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import { CONTENT_CLASSES, contentClassOf } from '../content/content-keys.js';
import type { KeyValue } from '../../ingest/otlp/decode.js';
import { isContentClass } from '../content/content-keys.js';
import { isMetadataMarker, metadataMarker, sizeMarker, type Boundary, type ContentClass, type Decider, type Decision, type Grid } from './model.js';

export { metadataMarker };

/** Why content is not given: a decider of the policy, or the credential's missing scope (never audited as a policy refusal). */
export type Withholder = Decider | 'credential_scope';

export interface ContentAccess {
  readonly boundary: Boundary;
  /** Every class is `allow`: nothing to do. */
  readonly allowsAll: boolean;
  of(cls: ContentClass): Decision;
  /** Who decided what `of` answers. */
  readonly decidedBy: Withholder;
  /** Counts one refused value of `cls` in the refusal audit (a credential-scope refusal is not a policy refusal and is not counted). */
  refused(cls: ContentClass, decision: Exclude<Decision, 'allow'>): void;
}

/** The scope a reader needs for any recorded content (and then the project's read cell). */
export const CONTENT_READ_SCOPE = 'agents:content:read';

export type RefusalSink = (boundary: Boundary, decider: Decider, cls: ContentClass, decision: Exclude<Decision, 'allow'>, n: number) => void;

/** The access of a policy grid (null: the project has none, or it could not be read: every class denied). */
export function gridAccess(boundary: Boundary, grid: Grid | null, decidedBy: Withholder, sink: RefusalSink): ContentAccess {
  const row = (cls: ContentClass): Decision => (grid === null ? 'deny' : grid[cls][boundary]);
  const allowsAll = grid !== null && Object.values(grid).every((r) => r[boundary] === 'allow');
  return {
    boundary,
    allowsAll,
    decidedBy,
    of: row,
    refused(cls, decision) {
      if (decidedBy !== 'credential_scope') sink(boundary, decidedBy, cls, decision, 1);
    },
  };
}

/** Memo of the content-key table for the ingest hot path (attribute keys repeat; bounded). */
const classMemo = new Map<string, ContentClass | null>();
const MAX_MEMO = 50_000;
export function classOf(key: string): ContentClass | undefined {
  let c = classMemo.get(key);
  if (c === undefined) {
    if (classMemo.size >= MAX_MEMO) classMemo.clear();
    classMemo.set(key, (c = contentClassOf(key) ?? null));
  }
  return c ?? undefined;
}

/** The map as `access` lets it through; the same object when nothing changes. Left-out keys go into `withheld`. */
export function applyToAttributes(attrs: Record<string, unknown>, access: ContentAccess, withheld?: Set<string>): Record<string, unknown> {
  if (access.allowsAll) return attrs;
  let out: Record<string, unknown> | undefined;
  for (const k of Object.keys(attrs)) {
    const cls = classOf(k);
    if (cls === undefined) continue;
    const d = access.of(cls);
    if (d === 'allow') continue;
    out ??= { ...attrs };
    access.refused(cls, d);
    if (d === 'allow_metadata') out[k] = metadataMarker(attrs[k]);
    else {
      delete out[k];
      withheld?.add(k);
    }
  }
  return out ?? attrs;
}

/**
 * A stored log body of content class `cls` (null: an ordinary body, returned as is) as `access` lets it
 * through: `allow` as stored, `allow_metadata` its size marker, `deny` null with `withheld` set. `bytes`
 * is the stored body's UTF-8 size when `body` is only its beginning (log patterns). A class this version
 * does not know is withheld.
 */
export function applyToBody<B extends string | null>(body: B, cls: string | null, access: ContentAccess, bytes?: number): { body: B | string | null; withheld: boolean } {
  if (cls === null || body === null || access.allowsAll) return { body, withheld: false };
  const d = isContentClass(cls) ? access.of(cls) : 'deny';
  if (d === 'allow') return { body, withheld: false };
  if (isContentClass(cls)) access.refused(cls, d);
  if (d === 'deny') return { body: null, withheld: true };
  return { body: bytes === undefined || isMetadataMarker(body) ? metadataMarker(body) : sizeMarker(bytes), withheld: false };
}

/** The classes `access` serves in full (a text search may match their bodies). */
export const readableClasses = (access: ContentAccess): ContentClass[] => CONTENT_CLASSES.filter((c) => access.of(c) === 'allow');

/** OTLP key-values (metric point attributes) as `access` lets them through; the same array when nothing changes. */
export function applyToKeyValues(kvs: KeyValue[], access: ContentAccess, text: (kv: KeyValue) => unknown): KeyValue[] {
  if (access.allowsAll) return kvs;
  let out: KeyValue[] | undefined;
  for (let i = 0; i < kvs.length; i++) {
    const cls = classOf(kvs[i].key ?? '');
    const d = cls === undefined ? 'allow' : access.of(cls);
    if (d !== 'allow' && out === undefined) out = kvs.slice(0, i);
    if (d !== 'allow') access.refused(cls!, d);
    if (out === undefined) continue;
    if (d === 'allow') out.push(kvs[i]);
    else if (d === 'allow_metadata') out.push({ key: kvs[i].key, value: { stringValue: metadataMarker(text(kvs[i])) } } as KeyValue);
  }
  return out ?? kvs;
}

/**
 * A filter or group on a recorded-content key is refused (403, before querying) unless the reader is
 * served that class in full: a filter or group would reveal the values `allow_metadata` withholds.
 */
export function refuseContentDimensions(access: ContentAccess, keys: string[], what: 'attribute' | 'label'): void {
  for (const k of keys) {
    const cls = contentClassOf(k);
    if (cls === undefined || access.of(cls) === 'allow') continue;
    throw permissionDenied(
      access.decidedBy === 'credential_scope'
        ? `${what} "${k}" holds recorded content; filtering or grouping on it needs ${CONTENT_READ_SCOPE}`
        : `${what} "${k}" holds recorded content (${cls}); the project's content policy does not allow reading ${cls}, so it cannot be filtered or grouped on`,
    );
  }
}

/** What a reader may ask for (the reads take it once per request). */
export interface ContentReadPolicy {
  readAccess(caller: Principal, projectId: string): Promise<ContentAccess>;
}
