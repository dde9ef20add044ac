/**
 * `svc config set|unset|get|use|profiles|path` (our addition): edits the profiles file. Only `set`
 * creates a profile; everywhere else a selected profile the file does not hold is a usage error. The signed-in
 * `session` of `svc login` is not a setting: only login, logout and refreshing write it, and `get`
 * shows it with its tokens masked.
 */
import { Argument, type Command } from 'commander';
import {
  maskSecret,
  normalizeOrigin,
  PROFILE_KEYS,
  resolveProfileName,
  updateProfile,
  useProfile,
  type Profile,
  type ProfileKey,
  type StoredSession,
} from '../config.js';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { renderTable } from '../output.js';

const display = (key: ProfileKey, value: string | undefined): string | null =>
  value === undefined ? null : key === 'api_key' ? maskSecret(value) : value;

/** The stored session for display: never a token in full. */
const sessionView = (s: StoredSession) => ({
  api_url: s.api_url,
  expires_at: s.expires_at,
  scope: s.scope,
  access_token: maskSecret(s.access_token),
  refresh_token: s.refresh_token ? maskSecret(s.refresh_token) : null,
});

const keyArgument = () => new Argument('<key>', 'setting name').choices(PROFILE_KEYS);

export function registerConfig(program: Command, ctx: Context): void {
  const config = program.command('config').description('manage profiles in the config file');

  config
    .command('set')
    .description('store a setting in the active profile (creating the profile if needed)')
    .addArgument(keyArgument())
    .argument('<value>', 'the value')
    .action((key: ProfileKey, value: string) => {
      if (value.trim() === '') throw usageError(`the value of ${key} must not be empty (use \`svc config unset ${key}\`)`);
      const stored = key === 'api_url' || key === 'ingest_url' ? normalizeOrigin(value, key) : value;
      const profile = ctx.profile({ mayCreate: true }).name.value;
      updateProfile(ctx.configPath, profile, key, stored);
      ctx.print({ profile, key, value: display(key, stored) }, () => `Set ${key} in profile "${profile}"\n`);
    });

  config
    .command('unset')
    .description('remove a setting from the active profile')
    .addArgument(keyArgument())
    .action((key: ProfileKey) => {
      const profile = ctx.profile().name.value;
      updateProfile(ctx.configPath, profile, key, undefined);
      ctx.print({ profile, key, value: null }, () => `Removed ${key} from profile "${profile}"\n`);
    });

  config
    .command('get')
    .description('show the settings stored in the active profile (api_key and the session tokens are masked)')
    .addArgument(keyArgument().argOptional())
    .action((key: ProfileKey | undefined) => {
      const { name, values } = ctx.profile();
      const profile = name.value;
      if (key !== undefined) {
        const value = display(key, values[key]);
        ctx.print({ profile, key, value }, () => renderTable(['KEY', 'VALUE'], [[key, value]], { color: ctx.color }));
        return;
      }
      const settings: Omit<Profile, 'session'> = {};
      for (const k of PROFILE_KEYS) if (values[k] !== undefined) settings[k] = display(k, values[k])!;
      const session = values.session && sessionView(values.session);
      const rows: [string, string | undefined][] = PROFILE_KEYS.map((k) => [k, settings[k]]);
      if (session) rows.push(['session', `signed in to ${session.api_url} (access token ${session.access_token}, expires ${session.expires_at})`]);
      ctx.print({ profile, settings: session ? { ...settings, session } : settings }, () => renderTable(['KEY', 'VALUE'], rows, { color: ctx.color }));
    });

  config
    .command('use')
    .description('make a profile the active one (stored in the config file; --profile and SVC_PROFILE still take precedence)')
    .argument('<profile>', 'an existing profile (see `svc config profiles`)')
    .action((profile: string) => {
      useProfile(ctx.configPath, profile);
      ctx.print({ active_profile: profile }, () => `Active profile is now "${profile}"\n`);
      const over = resolveProfileName(ctx.opts.profile, ctx.env, profile);
      if (over.source === 'flag' || over.source === 'env')
        ctx.note(`note: ${over.source === 'flag' ? '--profile' : 'SVC_PROFILE'} (${over.value}) still takes precedence`);
    });

  config
    .command('profiles')
    .description('list profile names')
    .action(() => {
      // Listing is how an unknown selection gets fixed: the name is shown, not checked.
      const cfg = ctx.loadConfig();
      const active = resolveProfileName(ctx.opts.profile, ctx.env, cfg.active_profile).value;
      const profiles = Object.keys(cfg.profiles).sort();
      ctx.print({ active, profiles }, () =>
        renderTable(['NAME', 'ACTIVE'], profiles.map((p) => [p, p === active ? '*' : '']), { color: ctx.color }),
      );
    });

  config
    .command('path')
    .description('print the location of the config file')
    .action(() => {
      ctx.print({ path: ctx.configPath }, () => `${ctx.configPath}\n`);
    });
}
