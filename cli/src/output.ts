/** Output: tables on a terminal, JSON when piped; errors as one JSON object or one readable line. */
import { CliError } from './errors.js';

export type OutputFormat = 'json' | 'table';
export const OUTPUT_FORMATS: readonly OutputFormat[] = ['json', 'table'];

export interface OutStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
}

/**
 * Records --json / -o / --output in argv order so that the last one wins
 * (`--json -o table` gives table; `-o table --json` gives json).
 */
export class OutputChoice {
  private last: OutputFormat | undefined;

  set(format: OutputFormat): void {
    this.last = format;
  }

  /** The format chosen by a flag, if any. */
  get explicit(): OutputFormat | undefined {
    return this.last;
  }

  /** The explicit choice, else table on a terminal and JSON when piped. */
  resolve(stdoutIsTTY: boolean | undefined): OutputFormat {
    return this.last ?? (stdoutIsTTY ? 'table' : 'json');
  }
}

/** Colour only on a terminal, and never with --no-color or a non-empty NO_COLOR. */
export function useColor(opts: { isTTY: boolean | undefined; colorFlag: boolean; env: Record<string, string | undefined> }): boolean {
  if (!opts.isTTY || !opts.colorFlag) return false;
  const noColor = opts.env.NO_COLOR;
  return noColor === undefined || noColor === '';
}

const BOLD = (s: string) => `\x1b[1m${s}\x1b[22m`;
const RED = (s: string) => `\x1b[31m${s}\x1b[39m`;

export type Cell = string | number | boolean | null | undefined;

export function cellText(v: unknown): string {
  if (v === null || v === undefined) return '-';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

const width = (s: string) => [...s].length;

/** Simple aligned columns separated by two spaces; the header is bold when colour is on. */
export function renderTable(headers: string[], rows: Cell[][], opts: { color?: boolean } = {}): string {
  const text = rows.map((r) => headers.map((_, i) => cellText(r[i])));
  const widths = headers.map((h, i) => Math.max(width(h), ...text.map((r) => width(r[i]))));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c + ' '.repeat(widths[i] - width(c))))
      .join('  ')
      .trimEnd();
  const header = line(headers);
  return [opts.color ? BOLD(header) : header, ...text.map(line)].join('\n') + '\n';
}

/** Renders a list of objects as a table, with columns taken from their keys in first-seen order. */
export function renderObjects(rows: Record<string, unknown>[], opts: { color?: boolean } = {}): string {
  const keys: string[] = [];
  for (const r of rows) for (const k of Object.keys(r)) if (!keys.includes(k)) keys.push(k);
  return renderTable(
    keys.map((k) => k.toUpperCase()),
    rows.map((r) => keys.map((k) => r[k] as Cell)),
    opts,
  );
}

export function renderJson(value: unknown): string {
  return JSON.stringify(value, null, 2) + '\n';
}

/**
 * An error for standard error: one JSON object (one line) when stderr is not a terminal,
 * a readable one-line message on a terminal.
 */
export function formatError(err: CliError, opts: { interactive: boolean; color?: boolean }): string {
  if (!opts.interactive) return JSON.stringify(err.toJSON()) + '\n';
  const parts: string[] = [];
  if (err.extra.status !== undefined) parts.push(`HTTP ${err.extra.status}`);
  if (err.code !== 'usage_error') parts.push(err.code);
  if (err.extra.retryAfter !== undefined) parts.push(`retry after ${err.extra.retryAfter}s`);
  const suffix = parts.length ? ` (${parts.join(', ')})` : '';
  const prefix = opts.color ? RED('error:') : 'error:';
  return `svc: ${prefix} ${err.message.replace(/\s*\n\s*/g, ' ')}${suffix}\n`;
}
