/**
 * Lints the generated OpenAPI description with the installed Redocly CLI, recommended ruleset, no
 * network (telemetry and the update check are off; no rule needs the network). Used by the test
 * suite (openapi.test.ts) and by `npm run lint:openapi`, which runs this file.
 */
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { testApp } from './app.js';

const REDOCLY = fileURLToPath(new URL('../../../node_modules/.bin/redocly', import.meta.url));
const ENV = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };

export interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location?: { pointer?: string }[];
}

export interface LintResult {
  errors: number;
  warnings: number;
  problems: LintProblem[];
}

/** The description as GET /api/v1/openapi.json serves it, from an app on in-memory stores. */
export async function generatedDocument(env: NodeJS.ProcessEnv = {}): Promise<Record<string, unknown>> {
  const t = await testApp({ env });
  try {
    const res = await t.call({ method: 'GET', url: '/api/v1/openapi.json', key: null });
    if (res.statusCode !== 200) throw new Error(`GET /api/v1/openapi.json answered ${res.statusCode}`);
    return res.json();
  } finally {
    await t.close();
  }
}

function writeDocument(doc: unknown): string {
  const file = path.join(mkdtempSync(path.join(tmpdir(), 'svc-openapi-')), 'openapi.json');
  writeFileSync(file, JSON.stringify(doc, null, 2));
  return file;
}

const removeDocument = (file: string) => rmSync(path.dirname(file), { recursive: true, force: true });

const lintArgs = (file: string, format: string) => ['lint', file, '--extends=recommended', `--format=${format}`, '--max-problems=1000', '--lint-config=off'];

/** Runs `redocly lint` on `doc` and reads its JSON report (the exit code is not an error here). */
export function lintDocument(doc: unknown): Promise<LintResult> {
  const file = writeDocument(doc);
  return new Promise((resolve, reject) => {
    execFile(REDOCLY, lintArgs(file, 'json'), { env: ENV, maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => {
      removeDocument(file);
      const start = stdout.indexOf('{');
      if (start < 0) return reject(err ?? new Error('redocly printed no report'));
      try {
        const report = JSON.parse(stdout.slice(start)) as { totals: { errors: number; warnings: number }; problems: LintProblem[] };
        resolve({ errors: report.totals.errors, warnings: report.totals.warnings, problems: report.problems });
      } catch (e) {
        reject(e);
      }
    });
  });
}

/** `npm run lint:openapi`: lints a freshly generated description, prints Redocly's report, exits non-zero on any error. */
async function main() {
  const file = writeDocument(await generatedDocument({ SVC_LOG_LEVEL: 'silent' }));
  const run = spawnSync(REDOCLY, lintArgs(file, 'stylish'), { env: ENV, stdio: 'inherit' });
  removeDocument(file);
  process.exit(run.status ?? 1);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) void main();
