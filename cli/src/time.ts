/**
 * Time flags (--since, --until): a positive duration meaning "that long before now"
 * (30m, 6h, 7d; units s, m, h, d, w) or an exact RFC 3339 timestamp. Anything else is a usage error.
 */
import { usageError } from './errors.js';

const UNIT_MS: Record<string, number> = {
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/** A resolved point in time, with the text sent to the server (RFC 3339). */
export interface TimePoint {
  date: Date;
  rfc3339: string;
}

/** Milliseconds of a duration like `30m`, or undefined when `text` is not a positive duration. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+)([smhdw])$/.exec(text);
  if (!m) return undefined;
  const n = Number(m[1]);
  if (!Number.isSafeInteger(n) || n <= 0) return undefined;
  const ms = n * UNIT_MS[m[2]];
  return Number.isSafeInteger(ms) ? ms : undefined;
}

const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The Date of an RFC 3339 timestamp (RFC 3339 section 5.6, with calendar checks), or undefined. */
export function parseRfc3339(text: string): Date | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  if (m[9] !== undefined && (Number(m[10]) > 23 || Number(m[11]) > 59)) return undefined;
  const date = new Date(text.toUpperCase());
  return Number.isNaN(date.getTime()) ? undefined : date;
}

/** Parses a time flag value against `now`. Throws a usage error naming the flag. */
export function parseTimeFlag(text: string, now: Date, flag = 'time'): TimePoint {
  const ms = parseDuration(text);
  if (ms !== undefined) {
    const date = new Date(now.getTime() - ms);
    return { date, rfc3339: date.toISOString() };
  }
  const date = parseRfc3339(text);
  // An exact timestamp is forwarded as written (it may carry more precision than a Date).
  if (date) return { date, rfc3339: text };
  throw usageError(
    `${flag} must be a positive duration (e.g. 30m, 6h, 7d; units s, m, h, d, w) or an RFC 3339 timestamp (e.g. 2024-05-01T12:00:00Z), got "${text}"`,
  );
}

export interface TimeRange {
  start?: TimePoint;
  end?: TimePoint;
}

/**
 * Resolves --since/--until. `defaultSince` applies when --since is absent; `endDefaultsToNow`
 * fills `end` with now. A start that is not before the end is a usage error.
 */
export function resolveTimeRange(
  opts: { since?: string; until?: string },
  now: Date,
  defaults: { since?: string; endDefaultsToNow?: boolean } = {},
): TimeRange {
  const sinceText = opts.since ?? defaults.since;
  const start = sinceText !== undefined ? parseTimeFlag(sinceText, now, '--since') : undefined;
  let end = opts.until !== undefined ? parseTimeFlag(opts.until, now, '--until') : undefined;
  if (!end && defaults.endDefaultsToNow) end = { date: now, rfc3339: now.toISOString() };
  if (start && end && start.date.getTime() >= end.date.getTime())
    throw usageError(`--since (${start.rfc3339}) must be before --until (${end.rfc3339})`);
  return { start, end };
}

/** --since/--until as the `since`/`until` query parameters of a read, RFC 3339 (durations resolved against `now`). */
export function windowQuery(opts: { since?: string; until?: string }, now: Date): { since?: string; until?: string } {
  const range = resolveTimeRange(opts, now);
  return { since: range.start?.rfc3339, until: range.end?.rfc3339 };
}
