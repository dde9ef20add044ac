/**
 * Log severities. A record's severity is read from its OTLP `severity_number` (1-4 trace, 5-8 debug,
 * 9-12 info, 13-16 warn, 17-20 error, 21-24 fatal); when that is unspecified (0 or absent), from its
 * `severity_text`, case-insensitively, trailing digits ignored (`INFO2`), with the common aliases below.
 * Otherwise the record has no severity: it is returned without `severity` and a severity filter
 * (a minimum) never matches it.
 */
export const SEVERITIES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type Severity = (typeof SEVERITIES)[number];

/** 1..6 by name. */
export const severityRank = (s: Severity) => SEVERITIES.indexOf(s) + 1;

export function severityName(rank: number | null): Severity | undefined {
  return rank !== null && rank >= 1 && rank <= 6 ? SEVERITIES[rank - 1] : undefined;
}

/** Severity texts read when the number is unspecified, lower-cased, trailing digits removed. */
export const SEVERITY_TEXT_RANKS: Readonly<Record<string, number>> = {
  trace: 1,
  finest: 1,
  finer: 1,
  debug: 2,
  fine: 2,
  verbose: 2,
  info: 3,
  information: 3,
  informational: 3,
  notice: 3,
  warn: 4,
  warning: 4,
  error: 5,
  err: 5,
  severe: 5,
  fatal: 6,
  critical: 6,
  crit: 6,
  alert: 6,
  emerg: 6,
  emergency: 6,
  panic: 6,
};
