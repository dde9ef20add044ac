/**
 * The AI bill of materials (ABOM) artifact, schema `svc.abom.v1` (docs/signatures.md): its members,
 * the AssetKind enumeration its components carry as integers, the canonical form, and the reading of
 * a stored canonical form back (with the defect when it cannot be read under the current contract).
 */
import { canonicalJson, nanoTimestamp } from '../signing/byte-contract.js';

export const ABOM_SCHEMA = 'svc.abom.v1';

/**
 * AssetKind: what a component of an agent is. The position is the integer value that enters the
 * canonical form; `ASSET_KIND_UNSPECIFIED` (0) is refused on write. Append only: a value never changes.
 */
export const ASSET_KINDS = [
  'ASSET_KIND_UNSPECIFIED',
  'ASSET_KIND_AGENT',
  'ASSET_KIND_MODEL',
  'ASSET_KIND_PROMPT',
  'ASSET_KIND_TOOL',
  'ASSET_KIND_MCP_SERVER',
  'ASSET_KIND_KNOWLEDGE_SOURCE',
  'ASSET_KIND_LIBRARY',
  'ASSET_KIND_CONFIGURATION',
  'ASSET_KIND_GUARDRAIL',
] as const;
export type AssetKind = (typeof ASSET_KINDS)[number];
export const WRITABLE_ASSET_KINDS = ASSET_KINDS.filter((k) => k !== 'ASSET_KIND_UNSPECIFIED');
export const kindValue = (k: AssetKind) => ASSET_KINDS.indexOf(k);
export const kindName = (v: number): AssetKind | undefined => ASSET_KINDS[v];

export const AUTHORITIES = ['declared', 'mediated'] as const;
export type Authority = (typeof AUTHORITIES)[number];

export const DEFECTS = ['', 'canonical_form_superseded', 'canonical_form_unreadable', 'digest_mismatch'] as const;
export type Defect = (typeof DEFECTS)[number];

/** A component as it enters the canonical form. */
export interface CanonicalComponent {
  content_sha256: string;
  declared_by: string;
  kind: number;
  ref: string;
  version: string;
}

/** Every member of a `svc.abom.v1` manifest (all always present; empty optional ids are ""). */
export interface AbomMembers {
  asset_id: string;
  asset_version_id: string;
  authority: Authority;
  components: CanonicalComponent[];
  deployment_id: string;
  generated_at: string;
  manifest_id: string;
  /** null: no release named; "": the empty label. */
  release: string | null;
  schema: typeof ABOM_SCHEMA;
  scope: { environment: string; org_id: string; project_id: string };
  signature_alg: string;
  signing_key_id: string;
}

const MEMBERS = ['asset_id', 'asset_version_id', 'authority', 'components', 'deployment_id', 'generated_at', 'manifest_id', 'release', 'schema', 'scope', 'signature_alg', 'signing_key_id'];
const COMPONENT_MEMBERS = ['content_sha256', 'declared_by', 'kind', 'ref', 'version'];
const SCOPE_MEMBERS = ['environment', 'org_id', 'project_id'];

/** Code-unit order, the order RFC 8785 sorts member names in. */
const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The component order of the contract: (kind, ref, version, content_sha256, declared_by). */
export function compareComponents(a: CanonicalComponent, b: CanonicalComponent): number {
  return a.kind - b.kind || cmp(a.ref, b.ref) || cmp(a.version, b.version) || cmp(a.content_sha256, b.content_sha256) || cmp(a.declared_by, b.declared_by);
}

/** The exact bytes signed (as a string; UTF-8 on the wire). */
export function abomCanonicalForm(m: AbomMembers): string {
  return canonicalJson({ ...m, components: [...m.components].sort(compareComponents) });
}

const NINE_DIGITS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{9}Z$/;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const sameKeys = (o: Record<string, unknown>, keys: string[]) => {
  const have = Object.keys(o).sort();
  return have.length === keys.length && have.every((k, i) => k === keys[i]);
};
const strings = (o: Record<string, unknown>, keys: string[]) => keys.every((k) => typeof o[k] === 'string');

export type ReadAbom = { ok: true; members: AbomMembers } | { ok: false; defect: 'canonical_form_unreadable' | 'canonical_form_superseded' };

/**
 * Reads a stored canonical form. Not JSON (or not an object): unreadable. JSON, but not a manifest of
 * the current contract (another schema, other members, an enumeration as text, a timestamp without nine
 * fractional digits, components out of order, bytes that are not the canonical serialization): superseded.
 */
export function readAbom(canonical: string): ReadAbom {
  let doc: unknown;
  try {
    doc = JSON.parse(canonical);
  } catch {
    return { ok: false, defect: 'canonical_form_unreadable' };
  }
  if (!isObject(doc)) return { ok: false, defect: 'canonical_form_unreadable' };
  const superseded = { ok: false, defect: 'canonical_form_superseded' } as const;
  if (doc.schema !== ABOM_SCHEMA || !sameKeys(doc, MEMBERS)) return superseded;
  if (!strings(doc, ['asset_id', 'asset_version_id', 'deployment_id', 'generated_at', 'manifest_id', 'signature_alg', 'signing_key_id'])) return superseded;
  if (!AUTHORITIES.includes(doc.authority as Authority) || !(doc.release === null || typeof doc.release === 'string')) return superseded;
  if (!NINE_DIGITS.test(doc.generated_at as string)) return superseded;
  if (!isObject(doc.scope) || !sameKeys(doc.scope, SCOPE_MEMBERS) || !strings(doc.scope, SCOPE_MEMBERS)) return superseded;
  if (!Array.isArray(doc.components)) return superseded;
  for (const c of doc.components) {
    if (!isObject(c) || !sameKeys(c, COMPONENT_MEMBERS) || !strings(c, ['content_sha256', 'declared_by', 'ref', 'version'])) return superseded;
    if (!Number.isInteger(c.kind) || kindName(c.kind as number) === undefined) return superseded;
  }
  const members = doc as unknown as AbomMembers;
  for (let i = 1; i < members.components.length; i++) if (compareComponents(members.components[i - 1], members.components[i]) > 0) return superseded;
  if (canonicalJson(doc) !== canonical) return superseded;
  return { ok: true, members };
}

/** An RFC 3339 timestamp as the contract writes it (nine fractional digits, UTC); undefined when it is not one. */
export function contractTime(t: string): string | undefined {
  try {
    return nanoTimestamp(t);
  } catch {
    return undefined;
  }
}
