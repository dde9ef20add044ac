/**
 * `svc login` (sign in through the browser: OAuth device flow) and `svc logout` (revoke the
 * profile's session on the server, then remove it). Spec 3 CLI groups "login, logout"; spec 1
 * "Authentication" 2. The protocol is in session.ts; this file asks, shows and stores.
 */
import type { Command } from 'commander';
import { loadConfig } from '../config.js';
import type { Context } from '../context.js';
import { ApiClient } from '../http.js';
import {
  loginScopes,
  pollForTokens,
  revokeSession,
  saveSession,
  SessionAuth,
  sessionFromTokens,
  startDeviceAuthorization,
  withSessionLock,
  type DeviceAuthorization,
} from '../session.js';

/** GET /api/v1/users/me */
interface Me {
  id: string;
  email: string;
  name: string;
  organization: { id: string; role: string };
  scopes: string[];
}

const LOGIN_HELP = `
A browser where you are signed in to svc approves the code this command shows; the session (a
10-minute access token and a rotating refresh token) is then stored in the active profile of the
config file (mode 0600) and refreshed automatically. Off a terminal, the URL and code are one JSON
object on stderr.

Credentials of every command, first found wins: --api-key, SVC_API_KEY, the profile's signed-in
session (only for the API URL it was made for), the profile's api_key.
`;

export function registerLogin(program: Command, ctx: Context): void {
  program
    .command('login')
    .description('sign in through your browser (device flow) and keep the session in the profile')
    .option('--no-browser', 'do not open a browser; only print the URL and the code')
    .option('--scope <scopes...>', 'scopes to ask for (default: all; the approval grants those your role holds); offline_access is always added')
    .addHelpText('after', LOGIN_HELP)
    .action((opts: { browser: boolean; scope?: string[] }) => login(ctx, opts));

  program
    .command('logout')
    .description("revoke the profile's signed-in session on the server, then remove it")
    .option('--forget', 'remove the session from this computer only, without contacting the server')
    .action((opts: { forget?: boolean }) => logout(ctx, opts));
}

function showCode(ctx: Context, d: DeviceAuthorization): void {
  const { stderr } = ctx.io;
  if (!stderr.isTTY) {
    const { verification_uri, verification_uri_complete, user_code, expires_in } = d;
    stderr.write(JSON.stringify({ verification_uri, verification_uri_complete: verification_uri_complete ?? null, user_code, expires_in }) + '\n');
    return;
  }
  const minutes = Math.max(1, Math.round(d.expires_in / 60));
  const page = d.verification_uri_complete ?? d.verification_uri;
  stderr.write(
    [
      'To sign in, open this page in a browser where you are signed in to svc:',
      '',
      `  ${page}`,
      '',
      `and approve the code ${d.user_code}${d.verification_uri_complete ? ` (or enter it at ${d.verification_uri})` : ''}.`,
      `Waiting for the approval; the code expires in ${minutes} minute${minutes === 1 ? '' : 's'} (Ctrl-C to cancel)...`,
      '',
    ].join('\n'),
  );
}

async function login(ctx: Context, opts: { browser: boolean; scope?: string[] }): Promise<void> {
  const scopes = loginScopes(opts.scope);
  // Signing in to a profile that does not exist yet creates it (as `svc config set` does).
  const apiUrl = ctx.settings({ mayCreate: true }).apiUrl.value;
  const { name, values } = ctx.profile({ mayCreate: true });
  const profile = name.value;
  const previous = values.session;
  const deps = ctx.oauthDeps();

  const d = await startDeviceAuthorization(deps, apiUrl, scopes);
  showCode(ctx, d);
  if (opts.browser) {
    const opened = await ctx.openUrl(d.verification_uri_complete ?? d.verification_uri).catch(() => false);
    ctx.note(opened ? 'Opened the page in your browser (if nothing appeared, open the URL above).' : 'Could not open a browser: open the URL above yourself.');
  }

  const session = sessionFromTokens(await pollForTokens(deps, apiUrl, d), apiUrl, deps.now());
  await withSessionLock(ctx.configPath, deps.sleep, async () => saveSession(ctx.configPath, profile, session));

  // The session this one replaces would otherwise stay valid on its server: end it, best effort.
  if (previous && previous.refresh_token !== session.refresh_token) {
    await revokeSession(deps, previous).catch(() =>
      ctx.note(`The previous session (${previous.api_url}) could not be revoked; revoke it among your agent connections.`),
    );
  }

  const auth = new SessionAuth({ configPath: ctx.configPath, profile, session, deps });
  const me = await new ApiClient(apiUrl, auth, ctx.io.fetch).get<Me>('/users/me');
  const out = {
    profile,
    api_url: apiUrl,
    user: { id: me.id, email: me.email, name: me.name },
    organization: me.organization,
    scopes: me.scopes,
    expires_at: auth.session.expires_at,
  };
  ctx.print(out, () => {
    const rows: [string, string][] = [
      ['USER', `${me.name} <${me.email}>`],
      ['ORGANIZATION', `${me.organization.id} (${me.organization.role})`],
      ['API_URL', apiUrl],
      ['PROFILE', profile],
      ['SCOPES', me.scopes.join(', ')],
    ];
    return `Signed in.\n${rows.map(([k, v]) => `${k.padEnd(14)}${v}`).join('\n')}\n`;
  });
}

async function logout(ctx: Context, opts: { forget?: boolean }): Promise<void> {
  const profile = ctx.profile().name.value;
  const deps = ctx.oauthDeps();
  const removed = ctx.profile().values.session
    ? await withSessionLock(ctx.configPath, deps.sleep, async () => {
        // Read again under the lock: another svc process may have refreshed it.
        const session = loadConfig(ctx.configPath).profiles[profile]?.session;
        if (!session) return undefined;
        // A failure here keeps the stored session, so the user can retry (or pass --forget).
        if (!opts.forget) await revokeSession(deps, session);
        saveSession(ctx.configPath, profile, undefined);
        return session;
      })
    : undefined;

  const out = { profile, signed_out: removed !== undefined, revoked: removed !== undefined && !opts.forget, api_url: removed?.api_url ?? null };
  if (!removed) {
    ctx.print({ ...out, note: 'not signed in' }, () => `Not signed in (profile "${profile}"): nothing to do.\n`);
    return;
  }
  ctx.print(out, () =>
    opts.forget
      ? `Removed the session of ${removed.api_url} from profile "${profile}" (not revoked on the server).\n`
      : `Signed out of ${removed.api_url} (profile "${profile}"); the session was revoked on the server.\n`,
  );
  if (opts.forget && ctx.format === 'table')
    ctx.note('The session stays valid on the server until it expires; revoke it among your agent connections to end it now.');
}
