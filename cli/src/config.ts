/**
 * Profiles: `$XDG_CONFIG_HOME/svc/config.json` (default `~/.config/svc/config.json`), mode 0600,
 * shaped `{ "active_profile"?, "profiles": { "<name>": { "api_url"?, "api_key"?, "ingest_url"?, "project"?, "session"? } } }`.
 * `active_profile` is written by `svc config use`; `--profile` and `SVC_PROFILE` take precedence over it.
 * `session` is the stored sign-in of `svc login` (see session.ts); it is written by login, refresh
 * and logout only, never by `svc config set`.
 * Also the precedence rules for the connection settings and the active project.
 */
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { CliError, ExitCode, usageError } from './errors.js';

export type Env = Record<string, string | undefined>;

export const PROFILE_KEYS = ['api_url', 'api_key', 'ingest_url', 'project'] as const;
export type ProfileKey = (typeof PROFILE_KEYS)[number];

/** The fields of a stored sign-in; all strings (expires_at is ISO 8601, scope space-separated). */
export const SESSION_KEYS = ['access_token', 'refresh_token', 'expires_at', 'scope', 'api_url'] as const;
export type StoredSession = Record<(typeof SESSION_KEYS)[number], string>;

export type Profile = Partial<Record<ProfileKey, string>> & { session?: StoredSession };

export interface ConfigFile {
  /** The profile chosen by `svc config use` (before the implicit `default`). */
  active_profile?: string;
  profiles: Record<string, Profile>;
  [other: string]: unknown;
}

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';
export const DEFAULT_PROFILE = 'default';

/** Where the config file lives for this environment. */
export function configPath(env: Env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(base, 'svc', 'config.json');
}

const configError = (path: string, why: string) =>
  new CliError('config_error', `invalid config file ${path}: ${why}`, ExitCode.general);

/** Reads the config file; a missing file is an empty config. */
export function loadConfig(path: string): ConfigFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: Object.create(null) as Record<string, Profile> };
    throw new CliError('config_error', `cannot read config file ${path}: ${(e as Error).message}`, ExitCode.general);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw configError(path, (e as Error).message);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw configError(path, 'expected a JSON object');
  const cfg = raw as ConfigFile;
  if (cfg.profiles === undefined) cfg.profiles = {};
  if (typeof cfg.profiles !== 'object' || cfg.profiles === null || Array.isArray(cfg.profiles))
    throw configError(path, '"profiles" must be an object');
  // Profile names are keys: without a prototype, "__proto__" or "constructor" is a profile like any other.
  cfg.profiles = Object.assign(Object.create(null) as Record<string, Profile>, cfg.profiles);
  if (cfg.active_profile !== undefined && (typeof cfg.active_profile !== 'string' || cfg.active_profile === ''))
    throw configError(path, '"active_profile" must be a non-empty string');
  for (const [name, p] of Object.entries(cfg.profiles)) {
    if (typeof p !== 'object' || p === null || Array.isArray(p)) throw configError(path, `profile "${name}" must be an object`);
    for (const k of PROFILE_KEYS) {
      const v = (p as Record<string, unknown>)[k];
      if (v !== undefined && typeof v !== 'string') throw configError(path, `profiles.${name}.${k} must be a string`);
    }
    const session = (p as Record<string, unknown>).session;
    if (session !== undefined) {
      if (typeof session !== 'object' || session === null || Array.isArray(session))
        throw configError(path, `profiles.${name}.session must be an object`);
      for (const k of SESSION_KEYS)
        if (typeof (session as Record<string, unknown>)[k] !== 'string') throw configError(path, `profiles.${name}.session.${k} must be a string`);
    }
  }
  return cfg;
}

/** Writes the config file atomically with mode 0600 (its directory 0700 when created). */
export function saveConfig(path: string, cfg: ConfigFile): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(cfg, null, 2) + '\n', { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** Sets (or, with `undefined`, removes) one key of one profile, creating the file and profile as needed. */
export function updateProfile(path: string, profile: string, key: ProfileKey, value: string | undefined): ConfigFile {
  const cfg = loadConfig(path);
  const p: Profile = { ...(cfg.profiles[profile] ?? {}) };
  if (value === undefined) delete p[key];
  else p[key] = value;
  cfg.profiles[profile] = p;
  saveConfig(path, cfg);
  return cfg;
}

/** Stores (or, with `undefined`, removes) the sign-in of one profile, atomically like every write. */
export function updateSession(path: string, profile: string, session: StoredSession | undefined): ConfigFile {
  const cfg = loadConfig(path);
  const p: Profile = { ...(cfg.profiles[profile] ?? {}) };
  if (session === undefined) delete p.session;
  else p.session = { ...session };
  cfg.profiles[profile] = p;
  saveConfig(path, cfg);
  return cfg;
}

/** Where a value came from; `config` is the config file's `active_profile` (`svc config use`). */
export type Source = 'flag' | 'env' | 'profile' | 'config' | 'default';

export interface Sourced<T> {
  value: T;
  source: Source;
}

const nonEmpty = (v: string | undefined) => (v === undefined || v === '' ? undefined : v);

/** The first of flag, env, profile that is set (an empty env value counts as unset). */
export function pick(flag: string | undefined, env: string | undefined, profile: string | undefined): Sourced<string> | undefined {
  if (flag !== undefined) return { value: flag, source: 'flag' };
  const e = nonEmpty(env);
  if (e !== undefined) return { value: e, source: 'env' };
  const p = nonEmpty(profile);
  if (p !== undefined) return { value: p, source: 'profile' };
  return undefined;
}

/** The profile used: `--profile`, then `SVC_PROFILE`, then the file's `active_profile` (`svc config use`), then `default`. */
export function resolveProfileName(flag: string | undefined, env: Env, active?: string): Sourced<string> {
  const chosen = pick(flag, env.SVC_PROFILE, undefined);
  if (chosen) return chosen;
  if (active !== undefined && active !== '') return { value: active, source: 'config' };
  return { value: DEFAULT_PROFILE, source: 'default' };
}

export const PROFILE_SOURCE_LABEL: Record<Source, string> = {
  flag: '--profile',
  env: 'SVC_PROFILE',
  config: 'the active_profile of the config file (`svc config use`)',
  profile: 'the profile',
  default: 'the default',
};

/**
 * Refuses a selected profile that the config file does not hold (an unknown profile is an error, never
 * an empty one): a usage error naming where the name came from and the known profiles. The implicit
 * `default` profile always exists (empty until something is stored in it).
 */
export function checkProfileKnown(name: string, from: string, cfg: ConfigFile): void {
  if (name === DEFAULT_PROFILE || Object.hasOwn(cfg.profiles, name)) return;
  const known = Object.keys(cfg.profiles).sort();
  throw usageError(
    `unknown profile "${name}" (from ${from}); known profiles: ${known.length ? known.join(', ') : 'none'}` +
      `. Create it with \`svc config set <key> <value> --profile ${name}\`; list them with \`svc config profiles\``,
  );
}

/** Makes `profile` the active one of the config file (`svc config use`); it must exist (or be `default`). */
export function useProfile(path: string, profile: string): ConfigFile {
  const cfg = loadConfig(path);
  checkProfileKnown(profile, '`svc config use`', cfg);
  cfg.active_profile = profile;
  saveConfig(path, cfg);
  return cfg;
}

export interface GlobalFlags {
  apiKey?: string;
  apiUrl?: string;
  ingestUrl?: string;
  project?: string;
}

export interface Settings {
  apiUrl: Sourced<string>;
  ingestUrl: Sourced<string>;
  apiKey?: Sourced<string>;
  project?: Sourced<string>;
}

/** Normalises an origin (`http(s)://host[:port]`, optional trailing slash); anything else is a usage error. */
export function normalizeOrigin(text: string, what: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`${what} must be an http(s) origin such as ${DEFAULT_API_URL}, got "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw usageError(`${what} must use http or https, got "${text}"`);
  if (url.pathname !== '/' || url.search !== '' || url.hash !== '' || url.username !== '' || url.password !== '')
    throw usageError(`${what} must be an origin without a path, query or credentials, got "${text}"`);
  return url.origin;
}

/**
 * Connection settings and the active project. For api-key, api-url and ingest-url:
 * flag, then env, then profile; api-url defaults to http://127.0.0.1:8080, ingest-url to api-url.
 * Active project: `--project`, then `SVC_PROJECT`, then the profile.
 */
export function resolveSettings(flags: GlobalFlags, env: Env, profile: Profile): Settings {
  const apiUrlRaw = pick(flags.apiUrl, env.SVC_API_URL, profile.api_url) ?? { value: DEFAULT_API_URL, source: 'default' as const };
  const apiUrl = { ...apiUrlRaw, value: normalizeOrigin(apiUrlRaw.value, sourceLabel('api-url', apiUrlRaw.source)) };
  const ingestRaw = pick(flags.ingestUrl, env.SVC_INGEST_URL, profile.ingest_url);
  const ingestUrl = ingestRaw
    ? { ...ingestRaw, value: normalizeOrigin(ingestRaw.value, sourceLabel('ingest-url', ingestRaw.source)) }
    : { value: apiUrl.value, source: 'default' as const };
  return {
    apiUrl,
    ingestUrl,
    apiKey: pick(flags.apiKey, env.SVC_API_KEY, profile.api_key),
    project: pick(flags.project, env.SVC_PROJECT, profile.project),
  };
}

function sourceLabel(name: string, source: Source): string {
  if (source === 'flag') return `--${name}`;
  if (source === 'env') return `SVC_${name.toUpperCase().replace('-', '_')}`;
  return `profile setting ${name.replace('-', '_')}`;
}

/** An API key for display: never in full (first 8 characters, at most half of it, then "…"). */
export function maskSecret(secret: string): string {
  const shown = Math.min(8, Math.floor(secret.length / 2));
  return `${secret.slice(0, shown)}…`;
}
