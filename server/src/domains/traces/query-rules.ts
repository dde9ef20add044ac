/**
 * Request rules shared by the raw-observability reads (`/services`, `/traces`, `/logs`, `/stream/logs`):
 * time windows (`since`/`until`), attribute filters (`attr=key=value`), trace ids, recorded-content
 * attributes and the microsecond timestamps of the answers. No HTTP, no SQL.
 *
 * Decisions (quoted in docs/reference.md):
 * - `since` and `until` follow the API's one time vocabulary (http/time.ts): an RFC 3339 timestamp or a
 *   positive duration before now (`30m`, `6h`, `7d`), the same grammar as the CLI's time flags.
 * - The window is closed at both ends. Default: the 24 hours ending at `until` (default now); with only
 *   `since`, from `since` to now. `since` after `until` is 400.
 * - `attr` is repeatable; each occurrence is one `key=value` condition (split at the first `=`; the value
 *   may be empty and may hold `=` and `,`). Occurrences with the same key OR their values, different keys
 *   AND (spec 1, "General query rules" 5). At most 5 keys and 50 values per key. Keys follow the metric
 *   label key rule: a letter or underscore, then letters, digits, `_`, `.` or `-`, at most 128 characters.
 *   A condition holds when the item's attributes hold the key with that value, or, when its own
 *   attributes lack the key, its resource attributes do. Values compare as text: strings as sent,
 *   numbers and booleans in their JSON form (`500`, `true`), arrays and maps as compact JSON.
 * - Recorded-content attributes (the keys of the one content-key table, e.g. `gen_ai.prompt`,
 *   `gen_ai.input.messages`, `gen_ai.prompt.0.content`) are shown only with `agents:content:read` AND a
 *   read cell of the project's content policy that allows their class (docs/content-policy.md):
 *   `allow_metadata` replaces the value by a marker naming its size; otherwise they are left out of span,
 *   event and log attributes (the item then names them in `withheld_attribute_keys`) and out of
 *   `/logs/fields`. An `attr` filter or `group_by` on one is 403 before querying unless its class is
 *   read in full.
 * - Times in answers are RFC 3339 UTC with microseconds (`2024-06-01T12:00:00.123456Z`); durations are
 *   milliseconds, fractional (microsecond precision).
 */
import { invalidRequest } from '../../http/errors.js';
import { applyToAttributes, refuseContentDimensions, type ContentAccess } from '../content-policy/access.js';
import { checkOrder, MIN_TIME_US, parseTimeUs } from '../../http/time.js';
import { LABEL_KEY_MAX_LENGTH, LABEL_KEY_PATTERN } from '../metrics/request-rules.js';

export const US_PER_MS = 1000;
export const DEFAULT_WINDOW_US = 24 * 3600 * 1_000_000;
export const MAX_ATTR_KEYS = 5;
export const MAX_ATTR_VALUES = 50;
export const ATTR_KEY_PATTERN = LABEL_KEY_PATTERN;
export const ATTR_KEY_MAX_LENGTH = LABEL_KEY_MAX_LENGTH;
const ATTR_KEY = new RegExp(ATTR_KEY_PATTERN);

export const TRACE_ID_PATTERN = '^[0-9a-fA-F]{32}$';
export const SPAN_ID_PATTERN = '^[0-9a-fA-F]{16}$';

/** A closed window in microseconds since the epoch. */
export interface WindowUs {
  fromUs: number;
  toUs: number;
}

export interface WindowQuery {
  since?: string;
  until?: string;
}

/** `since`/`until` to a closed window; default the `defaultUs` ending at `until` (or now). */
export function resolveWindow(q: WindowQuery, nowMs: number, defaultUs = DEFAULT_WINDOW_US): WindowUs {
  const nowUs = nowMs * US_PER_MS;
  const until = q.until !== undefined ? parseTimeUs('until', q.until, nowMs) : undefined;
  const since = q.since !== undefined ? parseTimeUs('since', q.since, nowMs) : undefined;
  checkOrder('since', 'until', since, until);
  const toUs = until ?? (since !== undefined ? Math.max(nowUs, since) : nowUs);
  const fromUs = since ?? Math.max(MIN_TIME_US, toUs - defaultUs);
  return { fromUs, toUs };
}

/** One attribute condition: the key holds one of the values (OR); conditions AND. */
export interface AttrFilter {
  key: string;
  values: string[];
}

export function checkAttrKey(where: string, key: string): void {
  if (key.length > ATTR_KEY_MAX_LENGTH) throw invalidRequest(`${where} "${key.slice(0, 40)}..." is longer than ${ATTR_KEY_MAX_LENGTH} characters`);
  if (!ATTR_KEY.test(key)) throw invalidRequest(`${where} "${key}" must start with a letter or underscore, then letters, digits, _, . or -`);
}

/** `attr` occurrences (`key=value`) to conditions grouped by key, in first-seen key order. */
export function parseAttrFilters(raw: string | string[] | undefined): AttrFilter[] {
  if (raw === undefined) return [];
  const byKey = new Map<string, Set<string>>();
  for (const item of Array.isArray(raw) ? raw : [raw]) {
    const eq = item.indexOf('=');
    if (eq < 0) throw invalidRequest(`attr "${item.slice(0, 60)}" must be key=value`);
    const key = item.slice(0, eq);
    checkAttrKey('attr key', key);
    const values = byKey.get(key) ?? new Set<string>();
    values.add(item.slice(eq + 1));
    byKey.set(key, values);
  }
  if (byKey.size > MAX_ATTR_KEYS) throw invalidRequest(`at most ${MAX_ATTR_KEYS} attr keys are allowed`, { limit: MAX_ATTR_KEYS });
  const out: AttrFilter[] = [];
  for (const [key, values] of byKey) {
    if (values.size > MAX_ATTR_VALUES) throw invalidRequest(`attr "${key}" has more than ${MAX_ATTR_VALUES} values`, { limit: MAX_ATTR_VALUES });
    out.push({ key, values: [...values] });
  }
  return out;
}

/** A filter or group on a recorded-content attribute needs its class read in full (403 before querying). */
export function refuseContentKeys(access: ContentAccess, keys: string[]): void {
  refuseContentDimensions(access, keys, 'attribute');
}

/** Parses a stored JSON object; anything that is not an object reads as empty. */
export function parseAttributes(text: string | null): Record<string, unknown> {
  if (text === null || text === '') return {};
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** Recorded-content keys as the reader's access lets them through, collecting the removed keys into `withheld`. */
export function visibleAttributes(attrs: Record<string, unknown>, access: ContentAccess, withheld: Set<string>): Record<string, unknown> {
  return applyToAttributes(attrs, access, withheld);
}

/** Lower-case trace id of a validated path or query value. */
export const normalizeId = (id: string) => id.toLowerCase();

/** RFC 3339 UTC with microseconds. */
export function isoMicros(us: number): string {
  const ms = Math.floor(us / US_PER_MS);
  const rest = us - ms * US_PER_MS;
  return `${new Date(ms).toISOString().slice(0, -1)}${String(rest).padStart(3, '0')}Z`;
}

/** Milliseconds, fractional, of a microsecond span. */
export const durationMs = (us: number) => us / US_PER_MS;
