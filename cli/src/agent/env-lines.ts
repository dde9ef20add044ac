/** `NAME=value` lines for shells (`export`, for `eval "$(svc agent key env)"`) and for env files. */
import { chmodSync, renameSync, writeFileSync } from 'node:fs';

/** A value as one shell word: unquoted when plain, else single-quoted. */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

export type EnvVars = [name: string, value: string][];

export const exportLines = (vars: EnvVars) => vars.map(([k, v]) => `export ${k}=${shellQuote(v)}\n`).join('');

/** An env file readable by dotenv loaders and by `set -a; . ./.env.svc`. */
export const envFileText = (comment: string, vars: EnvVars) =>
  `# ${comment}\n` + vars.map(([k, v]) => `${k}=${shellQuote(v)}\n`).join('');

/**
 * Writes a file only its owner can read (mode 0600). Without `overwrite` an existing file is an
 * error (EEXIST); with it the file is replaced by a new one rather than rewritten in place.
 */
export function writePrivateFile(path: string, text: string, overwrite: boolean): void {
  if (!overwrite) {
    writeFileSync(path, text, { mode: 0o600, flag: 'wx' });
    chmodSync(path, 0o600);
    return;
  }
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600, flag: 'wx' });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}
