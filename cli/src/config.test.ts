import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  configPath,
  DEFAULT_API_URL,
  loadConfig,
  maskSecret,
  normalizeOrigin,
  resolveProfileName,
  resolveSettings,
  updateProfile,
} from './config.js';
import { CliError } from './errors.js';
import { tempConfigHome } from './testing/fake-api.js';

let tmp: ReturnType<typeof tempConfigHome>;
beforeEach(() => {
  tmp = tempConfigHome();
});
afterEach(() => tmp.cleanup());

describe('config file', () => {
  it('lives at $XDG_CONFIG_HOME/svc/config.json, else ~/.config/svc/config.json', () => {
    expect(configPath({ XDG_CONFIG_HOME: '/x/cfg', HOME: '/home/u' })).toBe('/x/cfg/svc/config.json');
    expect(configPath({ HOME: '/home/u' })).toBe('/home/u/.config/svc/config.json');
    expect(configPath({ XDG_CONFIG_HOME: '', HOME: '/home/u' })).toBe('/home/u/.config/svc/config.json');
    expect(configPath({ XDG_CONFIG_HOME: 'relative', HOME: '/home/u' })).toBe('/home/u/.config/svc/config.json');
  });

  it('is created with mode 0600 and keeps other profiles and unknown fields', () => {
    const path = configPath(tmp.env);
    expect(loadConfig(path)).toEqual({ profiles: {} });
    updateProfile(path, 'default', 'api_key', 'k1');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(tmp.env.XDG_CONFIG_HOME, 'svc')).mode & 0o777).toBe(0o700);
    writeFileSync(path, JSON.stringify({ extra: 1, profiles: { default: { api_key: 'k1', custom: 'x' }, other: { project: 'p' } } }), { mode: 0o644 });
    updateProfile(path, 'default', 'project', 'p9');
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual({
      extra: 1,
      profiles: { default: { api_key: 'k1', custom: 'x', project: 'p9' }, other: { project: 'p' } },
    });
    updateProfile(path, 'default', 'project', undefined);
    expect(loadConfig(path).profiles.default).toEqual({ api_key: 'k1', custom: 'x' });
    expect(existsSync(`${path}.${process.pid}.tmp`)).toBe(false);
  });

  it('reports a broken file as a config error (exit 1)', () => {
    const path = configPath(tmp.env);
    mkdirSync(join(tmp.env.XDG_CONFIG_HOME, 'svc'), { recursive: true });
    for (const text of ['{nope', '[]', '{"profiles": []}', '{"profiles": {"a": {"api_key": 5}}}']) {
      writeFileSync(path, text);
      expect(() => loadConfig(path), text).toThrowError(CliError);
      try {
        loadConfig(path);
      } catch (e) {
        expect((e as CliError).code).toBe('config_error');
        expect((e as CliError).exitCode).toBe(1);
      }
    }
  });
});

describe('settings precedence', () => {
  it('picks the profile from --profile, then SVC_PROFILE, then default', () => {
    expect(resolveProfileName('a', { SVC_PROFILE: 'b' })).toEqual({ value: 'a', source: 'flag' });
    expect(resolveProfileName(undefined, { SVC_PROFILE: 'b' })).toEqual({ value: 'b', source: 'env' });
    expect(resolveProfileName(undefined, {})).toEqual({ value: 'default', source: 'default' });
    // `svc config use` stores active_profile: after --profile and SVC_PROFILE, before the default
    expect(resolveProfileName(undefined, {}, 'prod')).toEqual({ value: 'prod', source: 'config' });
    expect(resolveProfileName(undefined, { SVC_PROFILE: 'b' }, 'prod')).toEqual({ value: 'b', source: 'env' });
    expect(resolveProfileName('a', {}, 'prod')).toEqual({ value: 'a', source: 'flag' });
  });

  it('api-key, api-url and ingest-url: flag, then env, then profile, then defaults', () => {
    const profile = { api_key: 'pk', api_url: 'http://profile:1', ingest_url: 'http://pingest:2', project: 'pp' };
    const env = { SVC_API_KEY: 'ek', SVC_API_URL: 'http://env:1', SVC_INGEST_URL: 'http://eingest:2', SVC_PROJECT: 'ep' };
    const flags = { apiKey: 'fk', apiUrl: 'http://flag:1/', ingestUrl: 'https://fingest', project: 'fp' };
    expect(resolveSettings(flags, env, profile)).toEqual({
      apiKey: { value: 'fk', source: 'flag' },
      apiUrl: { value: 'http://flag:1', source: 'flag' },
      ingestUrl: { value: 'https://fingest', source: 'flag' },
      project: { value: 'fp', source: 'flag' },
    });
    expect(resolveSettings({}, env, profile)).toEqual({
      apiKey: { value: 'ek', source: 'env' },
      apiUrl: { value: 'http://env:1', source: 'env' },
      ingestUrl: { value: 'http://eingest:2', source: 'env' },
      project: { value: 'ep', source: 'env' },
    });
    expect(resolveSettings({}, { SVC_API_KEY: '', SVC_PROJECT: '' }, profile)).toEqual({
      apiKey: { value: 'pk', source: 'profile' },
      apiUrl: { value: 'http://profile:1', source: 'profile' },
      ingestUrl: { value: 'http://pingest:2', source: 'profile' },
      project: { value: 'pp', source: 'profile' },
    });
    const defaults = resolveSettings({}, {}, {});
    expect(defaults.apiUrl).toEqual({ value: DEFAULT_API_URL, source: 'default' });
    expect(defaults.ingestUrl).toEqual({ value: DEFAULT_API_URL, source: 'default' });
    expect(defaults.apiKey).toBeUndefined();
    expect(defaults.project).toBeUndefined();
    expect(resolveSettings({ apiUrl: 'http://x:9' }, {}, {}).ingestUrl).toEqual({ value: 'http://x:9', source: 'default' });
  });

  it('api-url must be an origin without a path (usage error)', () => {
    expect(normalizeOrigin('https://api.example.com/', 'api-url')).toBe('https://api.example.com');
    for (const bad of ['http://h/api/v1', 'ftp://h', 'not a url', 'http://h?x=1', 'http://u:p@h']) {
      try {
        normalizeOrigin(bad, '--api-url');
        expect.unreachable(bad);
      } catch (e) {
        expect((e as CliError).exitCode).toBe(2);
      }
    }
  });

  it('never shows an API key in full', () => {
    expect(maskSecret('svc_1234567890abcdef')).toBe('svc_1234…');
    expect(maskSecret('short')).toBe('sh…');
  });
});
