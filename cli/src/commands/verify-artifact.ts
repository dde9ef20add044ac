/**
 * `svc verify-artifact <file> --keys <jwks file>`: checks a signed artifact (a bill of materials or a
 * receipt-chain checkpoint, as JSON) with no server. Exit 0 valid, 1 invalid (the fault is printed), 2
 * usage (unreadable files, no --keys).
 */
import fs from 'node:fs/promises';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { CliError, ExitCode, usageError } from '../errors.js';
import { renderTable } from '../output.js';
import { readJwks, verifyArtifact } from '../verify/artifact.js';

async function readJson(file: string, what: string): Promise<unknown> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (e) {
    throw usageError(`cannot read ${what} ${file}: ${(e as NodeJS.ErrnoException).code ?? String(e)}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw usageError(`${what} ${file} is not JSON`);
  }
}

export function registerVerifyArtifact(program: Command, ctx: Context): void {
  program
    .command('verify-artifact')
    .description('verify a signed artifact (bill of materials or receipt-chain checkpoint) offline against a JWK Set file; exit 0 valid, 1 invalid')
    .argument('<file>', 'the artifact JSON, as the service returned it (it carries canonical_form, the digest and signature)')
    .requiredOption('--keys <file>', 'the JWK Set (GET /.well-known/svc-signing-keys.json, saved)')
    .action(async (file: string, opts: { keys: string }) => {
      const jwks = readJwks(await readJson(opts.keys, 'key set'));
      if (!jwks) throw usageError(`key set ${opts.keys} is not a JWK Set ({"keys": [...]})`);
      const verdict = verifyArtifact(await readJson(file, 'artifact'), jwks);
      if (!verdict.valid) throw new CliError('artifact_invalid', `the artifact does not verify: ${verdict.fault}`, ExitCode.general, { details: verdict });
      ctx.print(verdict, () =>
        renderTable(['FIELD', 'VALUE'], [['valid', 'true'], ['kind', verdict.kind], ['schema', verdict.schema], ['signing_key_id', verdict.signing_key_id]], { color: ctx.color }),
      );
    });
}
