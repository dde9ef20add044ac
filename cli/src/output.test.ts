import { describe, expect, it } from 'vitest';
import { CliError } from './errors.js';
import { formatError, OutputChoice, renderTable, useColor } from './output.js';

describe('output', () => {
  it('defaults to a table on a terminal and JSON when piped; an explicit choice overrides', () => {
    const c = new OutputChoice();
    expect(c.resolve(true)).toBe('table');
    expect(c.resolve(false)).toBe('json');
    expect(c.resolve(undefined)).toBe('json');
    c.set('json');
    c.set('table');
    expect(c.resolve(false)).toBe('table');
    c.set('json');
    expect(c.resolve(true)).toBe('json');
  });

  it('renders simple aligned columns', () => {
    const t = renderTable(['ID', 'NAME', 'RATE'], [
      ['p1', 'web', 1],
      ['project-22', null, 0.25],
    ]);
    expect(t).toBe(['ID          NAME  RATE', 'p1          web   1', 'project-22  -     0.25', ''].join('\n'));
  });

  it('uses colour only on a terminal without --no-color and without NO_COLOR', () => {
    expect(useColor({ isTTY: true, colorFlag: true, env: {} })).toBe(true);
    expect(useColor({ isTTY: true, colorFlag: true, env: { NO_COLOR: '' } })).toBe(true);
    expect(useColor({ isTTY: true, colorFlag: true, env: { NO_COLOR: '1' } })).toBe(false);
    expect(useColor({ isTTY: true, colorFlag: false, env: {} })).toBe(false);
    expect(useColor({ isTTY: false, colorFlag: true, env: {} })).toBe(false);
    expect(renderTable(['A'], [['x']], { color: true })).toContain('\x1b[1mA');
    expect(renderTable(['A'], [['x']], { color: false })).not.toContain('\x1b');
  });

  it('formats errors as one JSON line when not interactive and one readable line on a terminal', () => {
    const err = new CliError('unavailable', 'try later', 1, { status: 503, retryAfter: 7 });
    const json = formatError(err, { interactive: false });
    expect(json.endsWith('\n')).toBe(true);
    expect(json.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(json)).toEqual({ error: 'unavailable', message: 'try later', exit_code: 1, status: 503, retry_after: 7 });
    const line = formatError(err, { interactive: true });
    expect(line).toBe('svc: error: try later (HTTP 503, unavailable, retry after 7s)\n');
    expect(formatError(new CliError('usage_error', 'bad\nflag', 2), { interactive: true })).toBe('svc: error: bad flag\n');
  });
});
