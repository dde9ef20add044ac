/**
 * The one time vocabulary of the API (docs/api-conventions.md "Time"): every time bound of every route
 * (`since`/`until`, `start_time`/`end_time`, `time_range.start`/`.end`) is read here.
 *
 * - An RFC 3339 timestamp (`2024-06-01T12:00:00Z`, any offset, `T`, `t` or a space between date and time,
 *   fractions up to nanoseconds read to the microsecond, a leap second :60 read as the next second), or
 * - a positive duration before now: a whole number then `s`, `m`, `h`, `d` or `w` (`30m`, `6h`, `7d`).
 * - The instant must lie between 1970-01-01T00:00:00Z and 9999-12-31T23:59:59.999999Z; anything else
 *   (`0s`, `-1h`, `1x`, a bare number, a year 0001 or 10000, a duration reaching before 1970) is 400
 *   naming the field and these forms. A window's start after its end is 400 `<start> must not be after <end>`.
 */
import { invalidRequest } from './errors.js';

const US_PER_MS = 1000;
const UNIT_MS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION = /^(\d{1,20})([smhdw])$/;
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The earliest and latest instants a time bound may name, in microseconds since the epoch. */
export const MIN_TIME_US = 0;
export const MAX_TIME_US = Date.UTC(9999, 11, 31, 23, 59, 59, 999) * US_PER_MS + 999;

export const TIME_FORMS =
  'an RFC 3339 timestamp from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z (e.g. 2024-06-01T12:00:00Z) or a positive duration before now (a whole number then s, m, h, d or w, e.g. 30m, 6h, 7d)';

const refused = (field: string) => invalidRequest(`${field} must be ${TIME_FORMS}`);

/** A time bound as read: microseconds since the epoch, and whether it was relative to now. */
export interface TimeBound {
  us: number;
  relative: boolean;
}

function rfc3339Us(m: RegExpExecArray): number | undefined {
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number);
  if (year < 1970) return undefined; // also keeps Date.UTC from reading years 0-99 as 1900-1999
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth || hour > 23 || minute > 59 || second > 60) return undefined;
  let offsetMin = 0;
  if (m[9] !== undefined) {
    const [oh, om] = [Number(m[10]), Number(m[11])];
    if (oh > 23 || om > 59) return undefined;
    offsetMin = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  // A leap second (:60) is the next second.
  const ms = Date.UTC(year, month - 1, day, hour, minute, second) - offsetMin * 60_000;
  return ms * US_PER_MS + Number((m[7] ?? '').padEnd(6, '0').slice(0, 6));
}

/** One time bound (`field` names it in errors), relative to `nowMs`. */
export function parseTimeBound(field: string, value: string, nowMs: number): TimeBound {
  let us: number | undefined;
  let relative = false;
  const d = DURATION.exec(value);
  if (d) {
    const ms = Number(d[1]) * UNIT_MS[d[2]];
    if (Number.isSafeInteger(ms) && ms > 0) us = (nowMs - ms) * US_PER_MS;
    relative = true;
  } else {
    const m = RFC3339.exec(value);
    if (m) us = rfc3339Us(m);
  }
  if (us === undefined || !Number.isFinite(us) || us < MIN_TIME_US || us > MAX_TIME_US) throw refused(field);
  return { us, relative };
}

/** One time bound in microseconds since the epoch. */
export const parseTimeUs = (field: string, value: string, nowMs: number): number => parseTimeBound(field, value, nowMs).us;

/** One time bound in milliseconds since the epoch (sub-millisecond digits dropped). */
export const parseTimeMs = (field: string, value: string, nowMs: number): number => Math.floor(parseTimeUs(field, value, nowMs) / US_PER_MS);

/** The one answer to a window whose start is after its end. */
export function checkOrder(startField: string, endField: string, start: number | undefined, end: number | undefined): void {
  if (start !== undefined && end !== undefined && start > end) throw invalidRequest(`${startField} must not be after ${endField}`);
}

/**
 * What a cursor's fingerprint keeps of a bound: the instant of a timestamp, the text of a duration (a
 * cursor of `since=1h` continues the same query although "1 hour ago" moves).
 */
export function boundKey(value: string | undefined, bound: TimeBound | undefined): string | number | null {
  if (value === undefined || bound === undefined) return null;
  return bound.relative ? value : bound.us;
}

/** Description of a time bound field in the OpenAPI document. */
export const TIME_DESCRIPTION = `RFC 3339 timestamp (e.g. 2024-06-01T12:00:00Z) or a positive duration before now (30m, 6h, 7d; units s, m, h, d, w)`;
