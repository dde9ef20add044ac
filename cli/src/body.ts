/** Structured request bodies of the CLI: `--body '<json>'`, `--file <path>` or `--file -` (standard input). */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { usageError } from './errors.js';

/** Adds the two body flags to a command. */
export function bodyOptions(cmd: Command): Command {
  return cmd.option('--body <json>', 'the JSON body').option('--file <path>', 'read the JSON body from a file (- for standard input)');
}

/** The body given with exactly one of `--body` and `--file`; a usage error (exit 2) otherwise or when it is not JSON. */
export function readBody(opts: { body?: string; file?: string }): unknown {
  if ((opts.body === undefined) === (opts.file === undefined)) throw usageError('give the JSON body with exactly one of --body or --file (--file - reads standard input)');
  let text: string;
  try {
    text = opts.body ?? readFileSync(opts.file === '-' ? 0 : opts.file!, 'utf8');
  } catch (e) {
    throw usageError(`cannot read ${opts.file}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw usageError('the body is not valid JSON');
  }
}
