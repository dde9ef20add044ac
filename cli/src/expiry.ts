/**
 * The lifetime of a new API key (spec: "Keys should carry an expiry (CLI default 30 days; maximum
 * 365 days)"). The server takes whole days (`expires_in_days`, 1 to 365), so both flags become days:
 * `--expires-in` (30d, 4w, 90) and `--expires-at` (RFC 3339, rounded down to whole days from now, so
 * the key never outlives the time asked for). Anything else is a usage error, before anything is sent.
 */
import { usageError } from './errors.js';
import { parseDuration, parseRfc3339 } from './time.js';

export const DEFAULT_EXPIRY = '30d';
export const MAX_EXPIRY_DAYS = 365;
const DAY_MS = 86_400_000;

/** `--expires-in`: whole days, as `30d`, `4w`, `90` (days) or any duration that is whole days; 1 to 365. */
export function parseExpiresIn(text: string): number {
  const t = text.trim();
  const ms = /^\d+$/.test(t) ? Number(t) * DAY_MS : parseDuration(t);
  if (ms === undefined || !Number.isSafeInteger(ms) || ms <= 0)
    throw usageError(`--expires-in must be a positive number of days such as 30d, 4w or 90, got "${text}"`);
  if (ms % DAY_MS !== 0) throw usageError(`--expires-in must be whole days (e.g. 1d, 30d, 4w), got "${text}"`);
  const days = ms / DAY_MS;
  if (days > MAX_EXPIRY_DAYS) throw usageError(`--expires-in must be at most ${MAX_EXPIRY_DAYS} days (365d), got "${text}" (${days} days)`);
  return days;
}

/** `--expires-at`: an RFC 3339 timestamp 1 to 365 days after `now`, as the whole days before it. */
export function parseExpiresAt(text: string, now: Date): number {
  const at = parseRfc3339(text);
  if (!at) throw usageError(`--expires-at must be an RFC 3339 timestamp such as 2025-01-31T00:00:00Z, got "${text}"`);
  const ms = at.getTime() - now.getTime();
  if (ms > MAX_EXPIRY_DAYS * DAY_MS) throw usageError(`--expires-at must be at most ${MAX_EXPIRY_DAYS} days from now, got "${text}"`);
  const days = Math.floor(ms / DAY_MS);
  if (days < 1) throw usageError(`--expires-at must be at least one day from now (keys expire in whole days), got "${text}"`);
  return days;
}

/** The days of `--expires-in` or `--expires-at` (at most one of them), default 30. */
export function expiryDays(opts: { expiresIn?: string; expiresAt?: string }, now: Date): number {
  if (opts.expiresIn !== undefined && opts.expiresAt !== undefined) throw usageError('give --expires-in or --expires-at, not both');
  if (opts.expiresAt !== undefined) return parseExpiresAt(opts.expiresAt, now);
  return parseExpiresIn(opts.expiresIn ?? DEFAULT_EXPIRY);
}
