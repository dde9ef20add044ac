/**
 * `svc abom declare|get|keys`: signed bills of materials (`/api/v1/abom-manifests`; docs/signatures.md).
 * `declare` sends a manifest body from a file (the service signs it; owner or admin only), `get` shows one
 * with the service's verdict, `keys` prints the JWK Set to verify artifacts offline with
 * `svc verify-artifact`.
 */
import fs from 'node:fs/promises';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { projectRequired, usageError } from '../errors.js';
import { renderTable, type Cell } from '../output.js';

export interface ManifestEntry {
  manifest_id: string;
  asset_id?: string;
  release?: string | null;
  authority?: string;
  generated_at?: string;
  signing_key_id: string;
  components?: { kind: string; ref: string; version: string; content_sha256: string; declared_by: string }[];
  canonical_form: string;
  manifest_sha256: string;
  signature: string;
  valid: boolean;
  defect: string;
}

/** The members the service derives: a body file carrying one is refused here already, as the server would. */
const DERIVED = ['canonical_form', 'manifest_sha256', 'signature', 'signing_key_id', 'authority'];

function render(m: ManifestEntry, color: boolean): string {
  const rows: Cell[][] = [
    ['manifest_id', m.manifest_id],
    ['valid', String(m.valid)],
    ['defect', m.defect || null],
    ['asset_id', m.asset_id ?? null],
    ['release', m.release === undefined ? null : m.release === null ? '(none)' : JSON.stringify(m.release)],
    ['authority', m.authority ?? null],
    ['generated_at', m.generated_at ?? null],
    ['signing_key_id', m.signing_key_id],
    ['manifest_sha256', m.manifest_sha256],
  ];
  let out = renderTable(['FIELD', 'VALUE'], rows, { color });
  if (m.components?.length)
    out += renderTable(['KIND', 'REF', 'VERSION', 'CONTENT_SHA256', 'DECLARED_BY'], m.components.map((c) => [c.kind, c.ref, c.version, c.content_sha256, c.declared_by]), { color });
  return out;
}

export function registerAbom(program: Command, ctx: Context): void {
  const a = program.command('abom').description('signed bills of materials: declare, get, keys (verify offline with `svc verify-artifact`)');
  const show = (m: ManifestEntry) => ctx.print(m, () => render(m, ctx.color));

  a.command('declare')
    .description('declare a bill of materials from a JSON file (asset_id, generated_at, components, optional release...); the service signs it')
    .requiredOption('--file <path>', 'the manifest body (JSON); scope.project_id defaults to the active project')
    .action(async (opts: { file: string }) => {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(await fs.readFile(opts.file, 'utf8'));
      } catch (e) {
        throw usageError(`cannot read a JSON object from ${opts.file}: ${(e as Error).message}`);
      }
      if (typeof body !== 'object' || body === null || Array.isArray(body)) throw usageError(`${opts.file} must hold a JSON object`);
      const derived = DERIVED.filter((f) => Object.hasOwn(body, f));
      if (derived.length) throw usageError(`${derived.join(', ')} ${derived.length === 1 ? 'is' : 'are'} derived by the service: remove from ${opts.file}`);
      const scope = (typeof body.scope === 'object' && body.scope !== null ? body.scope : {}) as Record<string, unknown>;
      if (scope.project_id === undefined) {
        const project = ctx.activeProject();
        if (!project) throw projectRequired('a bill of materials belongs to a project');
        scope.project_id = project.value;
      }
      show(await ctx.client().post<ManifestEntry>('/abom-manifests', { body: { ...body, scope } }));
    });

  a.command('get')
    .description("one bill of materials with the service's verdict (valid, defect)")
    .argument('<id>', 'manifest id')
    .action(async (id: string) => {
      const project = ctx.activeProject();
      if (!project) throw projectRequired('a bill of materials belongs to a project');
      show(await ctx.client().get<ManifestEntry>(`/abom-manifests/${encodeURIComponent(id)}`, { query: { project_id: project.value } }));
    });

  a.command('keys')
    .description('print the JWK Set of the signing keys (save it for `svc verify-artifact --keys`)')
    .action(async () => {
      const { signing_keys } = await ctx.client().get<{ signing_keys: { kid: string; x: string; status: string }[] }>('/signing-keys');
      const jwks = { keys: signing_keys.map((k) => ({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: k.kid, x: k.x })) };
      ctx.print(jwks, () => renderTable(['KID', 'STATUS'], signing_keys.map((k) => [k.kid, k.status]), { color: ctx.color }));
    });
}
