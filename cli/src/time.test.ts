import { describe, expect, it } from 'vitest';
import { CliError } from './errors.js';
import { parseDuration, parseRfc3339, parseTimeFlag, resolveTimeRange } from './time.js';

const NOW = new Date('2024-06-01T12:00:00.000Z');

describe('time flags', () => {
  it('parses positive durations with units s, m, h, d, w', () => {
    expect(parseDuration('45s')).toBe(45_000);
    expect(parseDuration('30m')).toBe(1_800_000);
    expect(parseDuration('6h')).toBe(21_600_000);
    expect(parseDuration('7d')).toBe(604_800_000);
    expect(parseDuration('2w')).toBe(1_209_600_000);
  });

  it('rejects zero, signs, fractions, bare numbers, unknown units and padding', () => {
    for (const bad of ['0m', '-5m', '+5m', '1.5h', '30', 'm', '30M', '5y', ' 30m', '30m ', '1h30m', ''])
      expect(parseDuration(bad), bad).toBeUndefined();
  });

  it('a duration means that long before now', () => {
    expect(parseTimeFlag('30m', NOW).rfc3339).toBe('2024-06-01T11:30:00.000Z');
    expect(parseTimeFlag('7d', NOW).date.toISOString()).toBe('2024-05-25T12:00:00.000Z');
  });

  it('accepts exact RFC 3339 timestamps and forwards them as written', () => {
    for (const ok of ['2024-05-01T10:00:00Z', '2024-05-01t10:00:00z', '2024-05-01T10:00:00.123456789Z', '2024-05-01T12:00:00+02:00', '2024-02-29T00:00:00-05:30']) {
      const t = parseTimeFlag(ok, NOW);
      expect(t.rfc3339).toBe(ok);
      expect(Number.isNaN(t.date.getTime())).toBe(false);
    }
    expect(parseTimeFlag('2024-05-01T12:00:00+02:00', NOW).date.toISOString()).toBe('2024-05-01T10:00:00.000Z');
  });

  it('rejects anything else as a usage error (exit 2)', () => {
    for (const bad of ['yesterday', '2024-05-01', '2024-05-01T10:00:00', '2024-05-01 10:00:00Z', '2023-02-29T00:00:00Z', '2024-13-01T00:00:00Z', '2024-05-01T24:00:00Z', '2024-05-01T10:00:00+25:00', '1714557600', 'now']) {
      expect(parseRfc3339(bad), bad).toBeUndefined();
      let err: unknown;
      try {
        parseTimeFlag(bad, NOW, '--since');
      } catch (e) {
        err = e;
      }
      expect(err, bad).toBeInstanceOf(CliError);
      expect((err as CliError).exitCode).toBe(2);
      expect((err as CliError).code).toBe('usage_error');
      expect((err as CliError).message).toContain('--since');
    }
  });

  it('resolves ranges with defaults and refuses a start that is not before the end', () => {
    expect(resolveTimeRange({}, NOW)).toEqual({ start: undefined, end: undefined });
    const r = resolveTimeRange({}, NOW, { since: '24h', endDefaultsToNow: true });
    expect(r.start?.rfc3339).toBe('2024-05-31T12:00:00.000Z');
    expect(r.end?.rfc3339).toBe('2024-06-01T12:00:00.000Z');
    expect(resolveTimeRange({ since: '2h', until: '1h' }, NOW).end?.rfc3339).toBe('2024-06-01T11:00:00.000Z');
    expect(() => resolveTimeRange({ since: '1h', until: '2h' }, NOW)).toThrow(/must be before/);
    expect(() => resolveTimeRange({ since: '2024-06-01T12:00:00Z' }, NOW, { endDefaultsToNow: true })).toThrow(/must be before/);
  });
});
