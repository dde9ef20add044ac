/**
 * Telemetry retention windows (docs/retention.md): per project and per signal, how many days telemetry is
 * kept. No HTTP, no SQL.
 *
 * - A closed enumeration, spelled as the API's other closed enumerations: `SIGNAL_METRICS`, `SIGNAL_SPANS`,
 *   `SIGNAL_LOGS`; `SIGNAL_UNSPECIFIED` exists (it is what a reader sees of a value it does not know) and is
 *   refused on write, as is any other value. Events and errors are signals of later issues.
 * - A window is whole days, 1 to 3650. A signal without one is kept (no default is synthesized); 0 or more
 *   than the ceiling is refused.
 * - The cut-off of a window is `now - days`: rows that started (spans), were stamped (logs, metric points)
 *   or happened (span events) before it are hidden from every read at once and deleted by the sweep.
 */
import { invalidRequest } from '../../http/errors.js';

export const SIGNALS = ['SIGNAL_UNSPECIFIED', 'SIGNAL_METRICS', 'SIGNAL_SPANS', 'SIGNAL_LOGS'] as const;
export type Signal = (typeof SIGNALS)[number];
/** What a window may be set for (`SIGNAL_UNSPECIFIED` is refused). */
export const RETAINED_SIGNALS = ['SIGNAL_METRICS', 'SIGNAL_SPANS', 'SIGNAL_LOGS'] as const;
export type RetainedSignal = (typeof RETAINED_SIGNALS)[number];

export const RETENTION_MIN_DAYS = 1;
export const RETENTION_MAX_DAYS = 3650;

export const US_PER_DAY = 86_400_000_000;

/** The delete scope a window of the signal needs when it brings deletion forward (it deletes that signal's data). */
export const DELETE_SCOPE: Record<RetainedSignal, string> = {
  SIGNAL_METRICS: 'metrics:delete',
  SIGNAL_SPANS: 'traces:delete',
  SIGNAL_LOGS: 'logs:delete',
};

export const isRetainedSignal = (v: unknown): v is RetainedSignal => typeof v === 'string' && (RETAINED_SIGNALS as readonly string[]).includes(v);

export function checkRetentionDays(field: string, days: unknown): number {
  if (typeof days !== 'number' || !Number.isInteger(days) || days < RETENTION_MIN_DAYS || days > RETENTION_MAX_DAYS)
    throw invalidRequest(`${field} must be a whole number of days from ${RETENTION_MIN_DAYS} to ${RETENTION_MAX_DAYS} (0 and longer windows are refused)`, {
      minimum: RETENTION_MIN_DAYS,
      maximum: RETENTION_MAX_DAYS,
    });
  return days;
}

/**
 * The windows of a PUT, checked: a known signal other than `SIGNAL_UNSPECIFIED`, listed once, with whole days
 * from 1 to 3650. The schema refuses most of this already; the service checks again (a caller that is not the
 * HTTP route gets the same rules).
 */
export function parseWindows(windows: readonly { signal: unknown; retention_days: unknown }[]): { signal: RetainedSignal; retentionDays: number }[] {
  const seen = new Set<string>();
  return windows.map((w, i) => {
    if (w.signal === 'SIGNAL_UNSPECIFIED') throw invalidRequest(`windows[${i}].signal is SIGNAL_UNSPECIFIED; name a signal: one of ${RETAINED_SIGNALS.join(', ')}`, { accepted: [...RETAINED_SIGNALS] });
    if (!isRetainedSignal(w.signal))
      throw invalidRequest(`windows[${i}].signal "${String(w.signal).slice(0, 64)}" is not recognized; one of: ${RETAINED_SIGNALS.join(', ')}`, { accepted: [...RETAINED_SIGNALS] });
    if (seen.has(w.signal)) throw invalidRequest(`windows[${i}]: signal ${w.signal} is listed twice; send one window per signal`);
    seen.add(w.signal);
    return { signal: w.signal, retentionDays: checkRetentionDays(`windows[${i}].retention_days`, w.retention_days) };
  });
}

/** Signals in the enumeration's order (the order windows are answered in). */
export const bySignal = (a: { signal: RetainedSignal }, b: { signal: RetainedSignal }) => RETAINED_SIGNALS.indexOf(a.signal) - RETAINED_SIGNALS.indexOf(b.signal);

/** The cut-off (µs) of a window at `nowUs`: what started before it is older than the window. */
export const cutoffUs = (nowUs: number, days: number) => nowUs - days * US_PER_DAY;

/** A cut-off in microseconds as the metrics' milliseconds: the first millisecond not before it. */
export const cutoffMs = (cutUs: number) => Math.ceil(cutUs / 1000);
