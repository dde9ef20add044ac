/**
 * `svc agent bootstrap` (mint an API key for an AI agent and put its secret somewhere safe) and
 * `svc agent key env` (export lines for the current settings). Spec 3 "Command-line client";
 * spec 1 "Authentication" 13: rotate by bootstrapping a new key, then revoking the old one.
 */
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { envFileText, exportLines, writePrivateFile, type EnvVars } from '../agent/env-lines.js';
import { AGENT_HOSTS, hostSnippet, KEY_ENV_VAR, type AgentHost } from '../agent/hosts.js';
import { findKeychain, KEYCHAIN_SERVICE, type Keychain } from '../agent/keychain.js';
import type { Context } from '../context.js';
import { CliError, ExitCode, PROJECT_HINT, usageError } from '../errors.js';
import type { ApiClient } from '../http.js';
import { collect, nonEmpty } from '../flags.js';
import { renderJson } from '../output.js';
import { DEFAULT_EXPIRY, MAX_EXPIRY_DAYS, parseExpiresIn } from '../expiry.js';
import { ALL_SCOPES, checkScopes } from '../scopes.js';

/**
 * `--scope-profile`: the scopes each bundle grants (`--scope` adds to them). `admin` is every
 * scope the server knows, so only a creator holding all of them can mint it.
 */
const INVESTIGATE = ['metrics:read', 'agents:read', 'governance:read', 'evals:read', 'scores:read', 'docs:read', 'projects:read'];
export const SCOPE_PROFILES: Record<string, readonly string[]> = {
  investigate: INVESTIGATE,
  incident: [...INVESTIGATE, 'alerts:acknowledge', 'errors:write', 'quarantine:request'],
  'agent-observability': [...INVESTIGATE, 'ingest:write', 'agents:write', 'evals:write', 'scores:write'],
  admin: ALL_SCOPES,
};

export const SECRET_DESTS = ['keychain', 'env-file', 'stdout'] as const;
type SecretDest = (typeof SECRET_DESTS)[number];

export const DEFAULT_ENV_FILE = '.env.svc';

interface BootstrapOptions {
  agent?: string;
  name?: string;
  embedSecret?: boolean;
  envFile?: string;
  envPath?: string;
  expiresIn: string;
  force?: boolean;
  host: AgentHost;
  orgWide?: boolean;
  scope?: string[];
  scopeProfile: string;
  secretDest: SecretDest;
}

/** The answer of POST /account/api-keys: the listing fields plus the secret. */
interface CreatedKey {
  id: string;
  name: string;
  project_id: string | null;
  org_wide: boolean;
  scopes: string[];
  expires_at: string;
  key: string;
}

/** The profile's scopes, then each `--scope` not already there; an unknown scope is a usage error. */
export function resolveScopes(profile: string, extra: string[] = []): string[] {
  return [...new Set([...SCOPE_PROFILES[profile], ...checkScopes(extra)])];
}

const HELP = `
Scope profiles (--scope adds to the chosen one):
${Object.entries(SCOPE_PROFILES)
  .map(([name, scopes]) => `  ${name.padEnd(21)}${name === 'admin' ? 'every scope' : scopes.join(', ')}`)
  .join('\n')}

Secret destinations (checked before the key is minted, so nothing is created when the secret cannot be stored):
  keychain  the OS keychain: libsecret's secret-tool (service ${KEYCHAIN_SERVICE}, account <key id>) or macOS security
  env-file  ${KEY_ENV_VAR}, SVC_API_URL and (project keys) SVC_PROJECT in --env-file (default ${DEFAULT_ENV_FILE}), mode 0600
  stdout    printed once (the "key" field in JSON)

--host only chooses the format of the printed MCP configuration snippet (claude-code, cursor, codex, vscode);
nothing is written into another program's files. The snippet reads ${KEY_ENV_VAR} unless --embed-secret is given.
Rotation: bootstrap a new key, then revoke the old one.
`;

export function registerAgent(program: Command, ctx: Context): void {
  const agent = program.command('agent').description('credentials for AI agents');

  agent
    .command('bootstrap')
    .description('mint an API key for an agent and store its secret (keychain, env file or stdout)')
    .option('--agent <name>', "the agent's label; the key is named agent:<name> unless --name is given", nonEmpty('--agent'))
    .option('--name <name>', 'name of the key', nonEmpty('--name'))
    .addOption(new Option('--scope-profile <profile>', 'bundle of scopes').choices(Object.keys(SCOPE_PROFILES)).default('investigate'))
    .option('--scope <scope>', 'add a scope to the profile (repeatable)', collect)
    .option('--org-wide', 'an organization-level key (default: bound to the active project)')
    .option('--expires-in <duration>', `lifetime in whole days: 30d, 4w or 90 (at most ${MAX_EXPIRY_DAYS}d)`, DEFAULT_EXPIRY)
    .addOption(new Option('--secret-dest <dest>', 'where the secret goes').choices(SECRET_DESTS).default('keychain'))
    .option('--env-file <path>', `the file for --secret-dest env-file (default ${DEFAULT_ENV_FILE}; implies env-file)`, nonEmpty('--env-file'))
    .option('--env-path <path>', 'the same as --env-file: Node.js 20 takes --env-file for itself wherever it stands, so use this there', nonEmpty('--env-path'))
    .option('--force', 'replace an existing --env-file')
    .addOption(new Option('--host <host>', 'print a configuration snippet for this agent host').choices(AGENT_HOSTS).default('none'))
    .option('--embed-secret', 'put the secret itself into the snippet instead of a reference to SVC_API_KEY')
    .addHelpText('after', HELP)
    .action((opts: BootstrapOptions, cmd: Command) => bootstrap(ctx, opts, cmd));

  agent
    .command('key')
    .description('the API key of the current settings')
    .command('env')
    .description('print `export` lines for SVC_API_URL, SVC_API_KEY and SVC_PROJECT: eval "$(svc agent key env)"; --json for an object')
    .action(() => {
      const s = ctx.settings();
      if (!s.apiKey)
        throw new CliError('unauthenticated', 'no API key configured: pass --api-key, set SVC_API_KEY, or run `svc config set api_key <key>`', ExitCode.unauthenticated);
      const vars: EnvVars = [
        ['SVC_API_URL', s.apiUrl.value],
        [KEY_ENV_VAR, s.apiKey.value],
      ];
      if (s.project) vars.push(['SVC_PROJECT', s.project.value]);
      // Export lines unless JSON is asked for: `eval "$(...)"` pipes stdout, which must not turn it into JSON.
      ctx.io.stdout.write(ctx.output.explicit === 'json' ? renderJson(Object.fromEntries(vars)) : exportLines(vars));
    });
}

async function bootstrap(ctx: Context, opts: BootstrapOptions, cmd: Command): Promise<void> {
  // 1. Everything that can be refused is refused before the key exists.
  const name = opts.name ?? (opts.agent !== undefined ? `agent:${opts.agent}` : undefined);
  if (name === undefined) throw usageError('give --agent <name> (the key is then named agent:<name>) or --name <name>');
  const scopes = resolveScopes(opts.scopeProfile, opts.scope);
  const expiresInDays = parseExpiresIn(opts.expiresIn);
  if (opts.embedSecret && opts.host === 'none') throw usageError('--embed-secret puts the secret into the --host snippet: choose a --host');

  if (opts.envPath !== undefined) {
    if (opts.envFile !== undefined && opts.envFile !== opts.envPath) throw usageError('--env-file and --env-path name different files; give one');
    opts.envFile = opts.envPath;
  }
  let dest = opts.secretDest;
  if (opts.envFile !== undefined) {
    if (cmd.getOptionValueSource('secretDest') === 'default') dest = 'env-file';
    else if (dest !== 'env-file') throw usageError(`--env-file applies only to --secret-dest env-file, not ${dest}`);
  }

  let target: { project_id: string } | { org_wide: true };
  if (opts.orgWide) {
    if (ctx.opts.project !== undefined) throw usageError('--org-wide and --project contradict each other: an organization-wide key is bound to no project');
    target = { org_wide: true };
  } else {
    const project = ctx.activeProject();
    if (!project)
      throw usageError(`the key needs a project (or --org-wide for an organization-wide key): ${PROJECT_HINT}`);
    target = { project_id: project.value };
  }

  const settings = ctx.settings();
  let keychain: Keychain | undefined;
  let envFile: string | undefined;
  if (dest === 'keychain') {
    keychain = findKeychain(ctx.env);
    if (!keychain)
      throw new CliError(
        'keychain_unavailable',
        'no OS keychain is available here (libsecret secret-tool with a D-Bus session, or macOS security); no key was created. Use --secret-dest env-file (a 0600 file) or --secret-dest stdout',
        ExitCode.general,
      );
  } else if (dest === 'env-file') {
    envFile = resolve(opts.envFile ?? DEFAULT_ENV_FILE);
    if (existsSync(envFile) && !opts.force) throw usageError(`${envFile} exists; no key was created. Pass --force to replace it, or choose another --env-file`);
  }
  const client = ctx.client();

  // 2. Mint the key.
  const created = await client.post<CreatedKey>('/account/api-keys', { body: { name, scopes, ...target, expires_in_days: expiresInDays } });

  // 3. Store the secret; a key whose secret could not be stored is revoked rather than left active.
  try {
    if (keychain) await keychain.store(created.id, `svc API key ${created.name}`, created.key);
    if (envFile) {
      const vars: EnvVars = [
        ['SVC_API_URL', settings.apiUrl.value],
        [KEY_ENV_VAR, created.key],
      ];
      if (created.project_id) vars.push(['SVC_PROJECT', created.project_id]);
      writePrivateFile(envFile, envFileText(`svc API key "${created.name}" (id ${created.id}), expires ${created.expires_at}`, vars), Boolean(opts.force));
    }
  } catch (e) {
    throw await storeFailed(client, created.id, e);
  }

  // 4. Report.
  const snippet = hostSnippet(opts.host, settings.apiUrl.value, opts.embedSecret ? created.key : undefined);
  const out: Record<string, unknown> = {
    key_id: created.id,
    name: created.name,
    scopes: created.scopes,
    project_id: created.project_id,
    org_wide: created.org_wide,
    expires_at: created.expires_at,
    secret_dest: dest,
    ...(envFile !== undefined ? { env_file: envFile } : {}),
    host: opts.host,
    ...(snippet ? { snippet: snippet.text } : {}),
    ...(dest === 'stdout' ? { key: created.key } : {}),
  };
  const secretLine =
    dest === 'stdout' ? created.key : dest === 'env-file' ? `written to ${envFile}` : `stored in the OS keychain (service ${KEYCHAIN_SERVICE}, account ${created.id})`;
  ctx.print(out, () => {
    const rows: [string, string][] = [
      ['KEY_ID', created.id],
      ['NAME', created.name],
      ['SCOPES', created.scopes.join(', ')],
      ['PROJECT', created.project_id ?? '- (organization-wide)'],
      ['EXPIRES_AT', created.expires_at],
      ['SECRET', secretLine],
    ];
    const text = rows.map(([k, v]) => `${k.padEnd(12)}${v}`).join('\n') + '\n';
    return snippet ? `${text}\n# ${snippet.label}: add to ${snippet.file}\n${snippet.text}\n` : text;
  });
  if (ctx.format === 'table') {
    if (dest === 'stdout') ctx.note('the secret is shown only this once');
    if (keychain) ctx.note(`read it back with: ${keychain.lookupCommand(created.id)}`);
    if (snippet && !opts.embedSecret) ctx.note(`the snippet reads the key from ${KEY_ENV_VAR}: set it where the agent host starts`);
    ctx.note('to rotate: bootstrap a new key, then revoke the old one');
  }
}

async function storeFailed(client: ApiClient, keyId: string, cause: unknown): Promise<CliError> {
  const why = cause instanceof Error ? cause.message : String(cause);
  let revoked = false;
  try {
    await client.post(`/account/api-keys/${encodeURIComponent(keyId)}/revoke`);
    revoked = true;
  } catch {
    /* reported below */
  }
  const after = revoked
    ? 'the key was revoked so that no key without a stored secret stays active'
    : `revoking it failed too: revoke it with POST /api/v1/account/api-keys/${keyId}/revoke`;
  return new CliError('secret_store_failed', `key ${keyId} was created but its secret could not be stored (${why}); ${after}`, ExitCode.general, {
    details: { key_id: keyId, revoked },
  });
}
