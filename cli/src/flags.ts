/** Commander argument parsers for flag values; a bad value becomes a usage error (exit 2). */
import { InvalidArgumentError } from 'commander';
import { usageError } from './errors.js';

export function positiveInt(what: string, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max)
      throw new InvalidArgumentError(`${what} must be a positive integer${max < Number.MAX_SAFE_INTEGER ? ` of at most ${max}` : ''}.`);
    return Number(value);
  };
}

export function integerInRange(what: string, min: number, max: number) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(`${what} must be an integer between ${min} and ${max}.`);
    return Number(value);
  };
}

export function finiteNumber(what: string, range: { min?: number; max?: number } = {}) {
  return (value: string): number => {
    const n = value.trim() === '' ? NaN : Number(value);
    const { min, max } = range;
    if (!Number.isFinite(n) || (min !== undefined && n < min) || (max !== undefined && n > max)) {
      const bounds =
        min !== undefined && max !== undefined ? ` between ${min} and ${max}` : min !== undefined ? ` of at least ${min}` : '';
      throw new InvalidArgumentError(`${what} must be a number${bounds}.`);
    }
    return n;
  };
}

export function nonEmpty(what: string) {
  return (value: string): string => {
    if (value.trim() === '') throw new InvalidArgumentError(`${what} must not be empty.`);
    return value;
  };
}

/** Collects a repeatable flag into an array. */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** `--attr key=value` (split at the first "="), repeatable; the key must not be empty. */
export function attrFlag(value: string, previous: string[] | undefined): string[] {
  const eq = value.indexOf('=');
  if (eq <= 0 || value.slice(0, eq).trim() === '') throw new InvalidArgumentError(`--attr must look like key=value, got "${value}".`);
  return collect(value, previous);
}

/** A trace id (32 hexadecimal characters), as a flag or an argument named `what`. */
export function traceIdFlag(what: string) {
  return (value: string): string => {
    if (!/^[0-9a-fA-F]{32}$/.test(value)) throw new InvalidArgumentError(`${what} must be 32 hexadecimal characters, got "${value}".`);
    return value;
  };
}

/** `key=value` filters; a key given again ORs its values. Order of first appearance is kept. */
export function parseFilters(items: string[]): { key: string; values: string[] }[] {
  const out: { key: string; values: string[] }[] = [];
  for (const item of items) {
    const eq = item.indexOf('=');
    if (eq <= 0) throw usageError(`--filter must look like key=value, got "${item}"`);
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1);
    if (key === '' || value === '') throw usageError(`--filter must look like key=value with a non-empty value, got "${item}"`);
    const existing = out.find((f) => f.key === key);
    if (existing) {
      if (!existing.values.includes(value)) existing.values.push(value);
    } else out.push({ key, values: [value] });
  }
  return out;
}

/** Refuses a destructive command without --yes: a usage error, and nothing is sent. */
export function requireYes(yes: boolean | undefined, what: string): void {
  if (!yes) throw usageError(`${what} is destructive and never prompts: pass --yes to confirm`);
}

/**
 * The NAME of a create command: the argument (the documented way) or the older `--name` flag; one
 * of them, not empty, and not two different names.
 */
export function nameArgument(arg: string | undefined, flag: string | undefined): string {
  if (arg !== undefined && flag !== undefined && arg !== flag)
    throw usageError(`the name is given twice ("${arg}" and --name "${flag}"): give it once, as the argument`);
  const name = arg ?? flag;
  if (name === undefined) throw usageError("missing required argument 'name'");
  if (name.trim() === '') throw usageError('the name must not be empty');
  return name;
}
