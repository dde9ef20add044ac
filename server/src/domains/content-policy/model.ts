/**
 * The content-policy grid (docs/content-policy.md): six content classes by four boundaries, each cell
 * `allow`, `allow_metadata` (existence and size only, never the bytes) or `deny`. No HTTP, no SQL.
 */
import { invalidRequest } from '../../http/errors.js';
import { CONTENT_CLASSES, type ContentClass } from '../content/content-keys.js';

export { CONTENT_CLASSES, type ContentClass };

/** Where recorded content goes: recorded at all, served to a reader, exported, sent to an evaluation model. */
export const BOUNDARIES = ['store', 'read', 'export', 'judge_transfer'] as const;
export type Boundary = (typeof BOUNDARIES)[number];

export const DECISIONS = ['allow', 'allow_metadata', 'deny'] as const;
export type Decision = (typeof DECISIONS)[number];

/** Who decided: the stored policy, the absence of one (privacy by default), or a policy that could not be read. */
export const DECIDERS = ['policy', 'no_policy', 'policy_unreadable'] as const;
export type Decider = (typeof DECIDERS)[number];

/** Every cell of a project's policy. */
export type Grid = Record<ContentClass, Record<Boundary, Decision>>;

/** Retention windows are whole days, 1 to 365 (the platform ceiling). */
export const RETENTION_MIN_DAYS = 1;
export const RETENTION_MAX_DAYS = 365;

/** A policy change applies everywhere within this many seconds (the cache TTL's ceiling and default). */
export const MAX_POLICY_TTL_SECONDS = 30;

/** A rule as sent and answered. */
export interface RuleInput {
  content_class: string;
  sink: string;
  decision: string;
}

export function deniedGrid(): Grid {
  const g = {} as Grid;
  for (const c of CONTENT_CLASSES) g[c] = { store: 'deny', read: 'deny', export: 'deny', judge_transfer: 'deny' };
  return g;
}

const oneOf = <T extends string>(field: string, v: string, allowed: readonly T[]): T => {
  if (!(allowed as readonly string[]).includes(v)) throw invalidRequest(`${field} "${String(v).slice(0, 64)}" is not recognized; one of: ${allowed.join(', ')}`);
  return v as T;
};

/**
 * The rules of a PUT to a full grid: an omitted cell is `deny`; an unknown class, boundary (`sink`) or
 * decision is 400, and so is a second rule for a cell already given (even with the same decision).
 */
export function gridOf(rules: readonly RuleInput[]): Grid {
  const g = deniedGrid();
  const seen = new Set<string>();
  rules.forEach((r, i) => {
    const cls = oneOf(`rules[${i}].content_class`, r.content_class, CONTENT_CLASSES);
    const sink = oneOf(`rules[${i}].sink`, r.sink, BOUNDARIES);
    const decision = oneOf(`rules[${i}].decision`, r.decision, DECISIONS);
    const cell = `${cls}/${sink}`;
    if (seen.has(cell)) throw invalidRequest(`rules[${i}]: the cell ${cell} is listed twice; send one rule per content class and sink`);
    seen.add(cell);
    g[cls][sink] = decision;
  });
  return g;
}

/** Every cell as rules, in the fixed order (class, then boundary). */
export function rulesOf(g: Grid): { content_class: ContentClass; sink: Boundary; decision: Decision }[] {
  return CONTENT_CLASSES.flatMap((c) => BOUNDARIES.map((b) => ({ content_class: c, sink: b, decision: g[c][b] })));
}

/** A stored grid, read defensively: anything missing or unknown is `deny`. */
export function parseGrid(text: string): Grid {
  const g = deniedGrid();
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return g;
  }
  if (!raw || typeof raw !== 'object') return g;
  for (const c of CONTENT_CLASSES) {
    const row = (raw as Record<string, unknown>)[c];
    if (!row || typeof row !== 'object') continue;
    for (const b of BOUNDARIES) {
      const d = (row as Record<string, unknown>)[b];
      if (typeof d === 'string' && (DECISIONS as readonly string[]).includes(d)) g[c][b] = d as Decision;
    }
  }
  return g;
}

export function checkRetentionDays(field: string, days: number): void {
  if (!Number.isInteger(days) || days < RETENTION_MIN_DAYS || days > RETENTION_MAX_DAYS)
    throw invalidRequest(`${field} must be a whole number of days from ${RETENTION_MIN_DAYS} to ${RETENTION_MAX_DAYS} (0 and longer windows are refused)`, {
      minimum: RETENTION_MIN_DAYS,
      maximum: RETENTION_MAX_DAYS,
    });
}

// ---- the stored and answered form of withheld content (allow_metadata)

const MARKER = /^\[content withheld by policy: \d+ bytes\]$/;

/** The size in bytes of an attribute value: a string's UTF-8 bytes, anything else its JSON text's. */
export function byteSize(v: unknown): number {
  return Buffer.byteLength(typeof v === 'string' ? v : (JSON.stringify(v) ?? ''), 'utf8');
}

/**
 * What `allow_metadata` leaves of a value: a marker string naming its size. A value that already is a
 * marker (stored under `allow_metadata`) stays as it is, so its size is the original's.
 */
export function metadataMarker(v: unknown): string {
  if (typeof v === 'string' && MARKER.test(v)) return v;
  return sizeMarker(byteSize(v));
}

/** The marker of a value of `bytes` bytes. */
export const sizeMarker = (bytes: number): string => `[content withheld by policy: ${bytes} bytes]`;

export const isMetadataMarker = (v: unknown): boolean => typeof v === 'string' && MARKER.test(v);
