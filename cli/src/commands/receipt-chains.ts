/**
 * `svc receipt-chains checkpoint|tree-head|export|prove|verify`: signed checkpoints and RFC 6962 tree
 * heads of a project's receipt chain (`/api/v1/receipt-chains/{chainId}/...`), and their checks.
 *
 * `verify --file` and the checks of `prove` run offline (cli/src/verify, no server code): an exported
 * chain's digests and links, kept checkpoints and tree heads against it (a chain shorter than a kept one
 * was cut; another digest or root means it was rewritten), and proofs against kept tree heads. Without
 * `--file`, `verify` asks the server's own chain check. Exit 0 when every check holds, 1 when one fails,
 * 2 for usage (an unreadable file among them).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { CliError, ExitCode, projectRequired, usageError } from '../errors.js';
import { collect, integerInRange, nonEmpty, positiveInt } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import {
  asChainExport,
  checkCheckpoint,
  checkConsistency,
  checkInclusion,
  checkTreeHead,
  EXPORT_SCHEMA,
  verifyChainEntries,
  type ChainExport,
  type ExportedEntry,
  type Finding,
} from '../verify/chain.js';
import { asJwks, type Jwks } from '../verify/ed25519.js';

const ACTIONS = 'actions';
/** Entries per export request (the server's maximum page). */
const EXPORT_PAGE = 1000;

const chainPath = (id: string, suffix: string) => `/receipt-chains/${encodeURIComponent(id)}${suffix}`;

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw usageError(`cannot read the ${what} file ${path}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw usageError(`the ${what} file ${path} is not JSON`);
  }
}

function readKeys(path: string | undefined): Jwks | undefined {
  if (path === undefined) return undefined;
  const jwks = asJwks(readJson(path, 'key set'));
  if (!jwks) throw usageError(`the key set file ${path} is not a JWK Set ({"keys": [...]})`);
  return jwks;
}

function readChain(path: string): ChainExport {
  const c = asChainExport(readJson(path, 'chain'));
  if (typeof c === 'string') throw usageError(`${path}: ${c}`);
  return c;
}

const findingRows = (fs: Finding[]): Cell[][] => fs.map((f) => [f.check, f.ok ? 'ok' : 'FAIL', f.fault ?? null, f.message]);

/** Prints the report; a failed check ends the command with exit 1 after it. */
function report(ctx: Context, findings: Finding[], extra: Record<string, unknown> = {}): void {
  const valid = findings.every((f) => f.ok);
  ctx.print({ valid, ...extra, findings }, () => renderTable(['CHECK', 'RESULT', 'FAULT', 'DETAIL'], findingRows(findings), { color: ctx.color }));
  if (!valid) {
    const first = findings.find((f) => !f.ok)!;
    throw new CliError('verification_failed', `${first.check}: ${first.message}`, ExitCode.general, { details: { fault: first.fault } });
  }
}

function project(ctx: Context): string {
  const p = ctx.activeProject();
  if (!p) throw projectRequired('a receipt chain belongs to a project');
  return p.value;
}

interface EntriesPage {
  chain_id: string;
  entry_count: number;
  entries: ExportedEntry[];
  next_from_seq: number | null;
}

export function registerReceiptChains(program: Command, ctx: Context): void {
  const rc = program
    .command('receipt-chains')
    .description("a project's receipt chain: signed checkpoints and Merkle tree heads, proofs, export, and offline verification");
  const post = async (chainId: string, suffix: string) => ctx.client().post<Record<string, unknown>>(chainPath(chainId, suffix), { query: { project_id: project(ctx) } });
  const printArtifact = (a: Record<string, unknown>, out: string | undefined) => {
    if (out !== undefined) writeFileSync(out, `${JSON.stringify(a, null, 2)}\n`);
    ctx.print(a, () =>
      renderTable(
        ['FIELD', 'VALUE'],
        Object.entries(a)
          .filter(([k]) => k !== 'canonical_form' && k !== 'scope')
          .map(([k, v]) => [k, String(v)]),
        { color: ctx.color },
      ),
    );
  };

  rc.command('checkpoint')
    .description('sign a checkpoint at the last entry of the chain (the server verifies the chain first); keep the JSON to detect a later cut')
    .argument('[chain-id]', 'chain id', ACTIONS)
    .option('--out <file>', 'also write the signed checkpoint to this file', nonEmpty('--out'))
    .action(async (chainId: string, opts: { out?: string }) => printArtifact(await post(chainId, '/checkpoints'), opts.out));

  rc.command('tree-head')
    .description('sign the RFC 6962 Merkle tree head (size, root) of the chain; keep the JSON to check later trees extend it')
    .argument('[chain-id]', 'chain id', ACTIONS)
    .option('--out <file>', 'also write the signed tree head to this file', nonEmpty('--out'))
    .action(async (chainId: string, opts: { out?: string }) => printArtifact(await post(chainId, '/tree-heads'), opts.out));

  rc.command('export')
    .description('every entry of the chain with its canonical bytes, as one JSON document for `verify --file`')
    .argument('[chain-id]', 'chain id', ACTIONS)
    .option('--out <file>', 'write the export to this file instead of standard output', nonEmpty('--out'))
    .action(async (chainId: string, opts: { out?: string }) => {
      const projectId = project(ctx);
      const client = ctx.client();
      const entries: ExportedEntry[] = [];
      let from: number | null = 0;
      while (from !== null) {
        const page: EntriesPage = await client.get<EntriesPage>(chainPath(chainId, '/entries'), { query: { project_id: projectId, from_seq: String(from), limit: String(EXPORT_PAGE) } });
        entries.push(...page.entries);
        if (page.next_from_seq !== null && page.next_from_seq <= from) throw new CliError('invalid_response', 'the server did not advance next_from_seq', ExitCode.general);
        from = page.next_from_seq;
      }
      const doc: ChainExport = { schema: EXPORT_SCHEMA, chain_id: chainId, project_id: projectId, entries };
      if (opts.out !== undefined) {
        writeFileSync(opts.out, `${JSON.stringify(doc)}\n`);
        ctx.print({ chain_id: chainId, project_id: projectId, entry_count: entries.length, file: opts.out }, () => `${entries.length} entries written to ${opts.out}\n`);
      } else {
        ctx.io.stdout.write(`${JSON.stringify(doc)}\n`);
      }
    });

  const prove = rc.command('prove').description('Merkle proofs from the server, checked here against kept tree heads');

  prove
    .command('inclusion')
    .description('the audit path of one entry in the tree of the first --tree-size entries; with --tree-head, checked against its signed root')
    .argument('[chain-id]', 'chain id', ACTIONS)
    .requiredOption('--seq <n>', 'the entry', integerInRange('--seq', 0, Number.MAX_SAFE_INTEGER))
    .option('--tree-size <n>', 'the tree size (default: the --tree-head size)', positiveInt('--tree-size'))
    .option('--tree-head <file>', 'a kept signed tree head', nonEmpty('--tree-head'))
    .option('--keys <file>', 'JWK Set (/.well-known/svc-signing-keys.json) to check the tree head signature', nonEmpty('--keys'))
    .action(async (chainId: string, opts: { seq: number; treeSize?: number; treeHead?: string; keys?: string }) => {
      const jwks = readKeys(opts.keys);
      const head = opts.treeHead !== undefined ? readJson(opts.treeHead, 'tree head') : undefined;
      const size = opts.treeSize ?? treeSizeOf(head);
      if (size === undefined) throw usageError('give --tree-size, or --tree-head to prove against');
      const proof = await ctx.client().get<Record<string, unknown>>(chainPath(chainId, '/proofs/inclusion'), {
        query: { project_id: project(ctx), seq: String(opts.seq), tree_size: String(size) },
      });
      report(ctx, checkInclusion(proof, head, jwks), { proof });
    });

  prove
    .command('consistency')
    .description('proves a kept (older) tree head is a prefix of a newer one (default: a tree head signed now); fails when entries were removed or rewritten')
    .argument('[chain-id]', 'chain id', ACTIONS)
    .requiredOption('--older <file>', 'the kept signed tree head', nonEmpty('--older'))
    .option('--newer <file>', 'a later signed tree head (default: sign one now)', nonEmpty('--newer'))
    .option('--keys <file>', 'JWK Set to check both signatures', nonEmpty('--keys'))
    .action(async (chainId: string, opts: { older: string; newer?: string; keys?: string }) => {
      const jwks = readKeys(opts.keys);
      const older = readJson(opts.older, 'tree head');
      const newer = opts.newer !== undefined ? readJson(opts.newer, 'tree head') : await post(chainId, '/tree-heads');
      const [first, second] = [treeSizeOf(older), treeSizeOf(newer)];
      if (first === undefined || second === undefined) throw usageError('a tree head file has no readable tree_size in its canonical_form');
      if (first < 1 || first > second) return report(ctx, [{ check: 'consistency', ok: false, fault: 'chain_truncated', message: `the newer tree (${second}) is smaller than the kept one (${first})` }]);
      const proof = await ctx.client().get<Record<string, unknown>>(chainPath(chainId, '/proofs/consistency'), {
        query: { project_id: project(ctx), first: String(first), second: String(second) },
      });
      report(ctx, checkConsistency(older, newer, proof, jwks), { proof });
    });

  rc.command('verify')
    .description('check a chain: offline with --file (digests, links, kept checkpoints and tree heads), else the server check')
    .argument('[chain-id]', 'chain id', ACTIONS)
    .option('--file <file>', 'an exported chain (`svc receipt-chains export`): verify with no server', nonEmpty('--file'))
    .option('--keys <file>', 'JWK Set (/.well-known/svc-signing-keys.json) to check signatures', nonEmpty('--keys'))
    .option('--checkpoint <file>', 'a kept checkpoint (repeatable)', collect)
    .option('--tree-head <file>', 'a kept signed tree head (repeatable)', collect)
    .action(async (chainId: string, opts: { file?: string; keys?: string; checkpoint?: string[]; treeHead?: string[] }) => {
      if (opts.file === undefined) {
        if (opts.checkpoint || opts.treeHead || opts.keys) throw usageError('--checkpoint, --tree-head and --keys are checked against an exported chain: add --file');
        const v = await ctx.client().get<{ valid: boolean; detail: string; first_invalid_seq: number | null }>(chainPath(chainId, '/verify'), {
          query: { project_id: project(ctx) },
        });
        ctx.print(v, () => renderTable(['FIELD', 'VALUE'], Object.entries(v).map(([k, x]) => [k, String(x)]), { color: ctx.color }));
        if (!v.valid) throw new CliError('verification_failed', `the chain does not verify (${v.detail} at seq ${v.first_invalid_seq})`, ExitCode.general, { details: { fault: v.detail } });
        return;
      }
      const jwks = readKeys(opts.keys);
      const chain = readChain(opts.file);
      if (chain.chain_id !== chainId && chainId !== ACTIONS) throw usageError(`the file holds chain "${chain.chain_id}", not "${chainId}"`);
      const result = verifyChainEntries(chain.entries);
      const findings: Finding[] = [
        result.valid
          ? { check: 'chain', ok: true, message: `${result.entry_count} entries; every digest and link holds` }
          : { check: 'chain', ok: false, fault: result.detail, message: `${result.detail} at seq ${result.first_invalid_seq}` },
      ];
      for (const f of opts.checkpoint ?? []) findings.push(...checkCheckpoint(readJson(f, 'checkpoint'), chain, jwks, `checkpoint ${f}`));
      for (const f of opts.treeHead ?? []) findings.push(...checkTreeHead(readJson(f, 'tree head'), chain, jwks, `tree head ${f}`));
      report(ctx, findings, { chain: result });
    });
}

/** `tree_size` from inside a tree head's signed bytes. */
function treeSizeOf(head: unknown): number | undefined {
  const canonical = (head as { canonical_form?: unknown } | undefined)?.canonical_form;
  if (typeof canonical !== 'string') return undefined;
  try {
    const n = (JSON.parse(canonical) as { tree_size?: unknown }).tree_size;
    return Number.isSafeInteger(n) ? (n as number) : undefined;
  } catch {
    return undefined;
  }
}
