import { readFileSync, statSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { configPath } from '../config.js';
import { runInProcess, stderrJson, tempConfigHome } from '../testing/fake-api.js';

let tmp: ReturnType<typeof tempConfigHome>;
beforeEach(() => {
  tmp = tempConfigHome();
});
afterEach(() => tmp.cleanup());

const svc = (args: string[], env: Record<string, string> = {}, stdoutTTY = false) =>
  runInProcess(args, { env: { ...tmp.env, ...env }, stdoutTTY });
const file = () => JSON.parse(readFileSync(configPath(tmp.env), 'utf8'));

describe('svc config', () => {
  it('set writes the active profile (created with mode 0600) and normalises URLs', async () => {
    expect((await svc(['config', 'set', 'api_key', 'svc_abcdefghijklmnop'])).code).toBe(0);
    expect(statSync(configPath(tmp.env)).mode & 0o777).toBe(0o600);
    const r = await svc(['config', 'set', 'api_url', 'https://api.example.com/', '--profile', 'prod']);
    expect(JSON.parse(r.stdout)).toEqual({ profile: 'prod', key: 'api_url', value: 'https://api.example.com' });
    await svc(['config', 'set', 'project', 'p7'], { SVC_PROFILE: 'prod' });
    await svc(['config', 'set', 'ingest_url', 'http://ingest:4318']);
    expect(file()).toEqual({
      profiles: {
        default: { api_key: 'svc_abcdefghijklmnop', ingest_url: 'http://ingest:4318' },
        prod: { api_url: 'https://api.example.com', project: 'p7' },
      },
    });
  });

  it('set refuses unknown keys, empty values and URLs with a path (exit 2)', async () => {
    for (const args of [
      ['config', 'set', 'apikey', 'x'],
      ['config', 'set', 'api_key', ''],
      ['config', 'set', 'api_url', 'http://h/api'],
      ['config', 'set', 'project'],
    ]) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(stderrJson(r).error).toBe('usage_error');
    }
    expect(stderrJson(await svc(['config', 'set', 'apikey', 'x'])).message).toContain('api_url, api_key, ingest_url, project');
  });

  it('get never prints api_key in full', async () => {
    await svc(['config', 'set', 'api_key', 'svc_abcdefghijklmnop']);
    await svc(['config', 'set', 'project', 'p1']);
    expect(JSON.parse((await svc(['config', 'get'])).stdout)).toEqual({
      profile: 'default',
      settings: { api_key: 'svc_abcd…', project: 'p1' },
    });
    expect(JSON.parse((await svc(['config', 'get', 'api_key'])).stdout)).toEqual({ profile: 'default', key: 'api_key', value: 'svc_abcd…' });
    expect(JSON.parse((await svc(['config', 'get', 'api_url'])).stdout)).toEqual({ profile: 'default', key: 'api_url', value: null });
    const table = await svc(['config', 'get', '--no-color'], {}, true);
    expect(table.stdout).not.toContain('svc_abcdefghijklmnop');
    expect(table.stdout).toBe(['KEY         VALUE', 'api_url     -', 'api_key     svc_abcd…', 'ingest_url  -', 'project     p1', ''].join('\n'));
  });

  it('unset removes a key; profiles lists names and marks the active one', async () => {
    await svc(['config', 'set', 'project', 'p1']);
    await svc(['config', 'set', 'project', 'p2', '--profile', 'b']);
    await svc(['config', 'unset', 'project']);
    expect(file().profiles).toEqual({ default: {}, b: { project: 'p2' } });
    expect(JSON.parse((await svc(['config', 'profiles'], { SVC_PROFILE: 'b' })).stdout)).toEqual({ active: 'b', profiles: ['b', 'default'] });
    expect((await svc(['config', 'profiles', '-o', 'table'])).stdout).toBe(['NAME     ACTIVE', 'b', 'default  *', ''].join('\n'));
  });

  it('a broken config file is a config error (exit 1)', async () => {
    await svc(['config', 'set', 'project', 'p1']);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(configPath(tmp.env), '{oops');
    const r = await svc(['config', 'get']);
    expect(r.code).toBe(1);
    expect(stderrJson(r)).toMatchObject({ error: 'config_error', exit_code: 1 });
  });

  it('use PROFILE makes a known profile the active one; --profile and SVC_PROFILE still take precedence', async () => {
    await svc(['config', 'set', 'project', 'p-prod', '--profile', 'prod']);
    await svc(['config', 'set', 'project', 'p-dev', '--profile', 'dev']);
    const r = await svc(['config', 'use', 'prod']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ active_profile: 'prod' });
    expect(file().active_profile).toBe('prod');
    expect(JSON.parse((await svc(['config', 'get', 'project'])).stdout)).toEqual({ profile: 'prod', key: 'project', value: 'p-prod' });
    expect(JSON.parse((await svc(['config', 'get', 'project'], { SVC_PROFILE: 'dev' })).stdout).value).toBe('p-dev');
    expect(JSON.parse((await svc(['config', 'get', 'project', '--profile', 'dev'], { SVC_PROFILE: 'prod' })).stdout).value).toBe('p-dev');
    expect(JSON.parse((await svc(['config', 'profiles'])).stdout)).toEqual({ active: 'prod', profiles: ['dev', 'prod'] });
    // `config set` writes the profile that `config use` chose.
    await svc(['config', 'set', 'api_url', 'http://prod:8080']);
    expect(file().profiles.prod).toEqual({ project: 'p-prod', api_url: 'http://prod:8080' });
    // back to the implicit default
    expect((await svc(['config', 'use', 'default'])).code).toBe(0);
    expect(JSON.parse((await svc(['config', 'get', 'project'])).stdout).profile).toBe('default');
  });

  it('an unknown profile is an error, not an empty one: exit 2 listing the known ones (--profile, SVC_PROFILE, config use)', async () => {
    await svc(['config', 'set', 'project', 'p1', '--profile', 'prod']);
    const before = readFileSync(configPath(tmp.env), 'utf8');
    const cases: [string[], Record<string, string>][] = [
      [['config', 'use', 'prdo'], {}],
      [['config', 'get', '--profile', 'prdo'], {}],
      [['config', 'unset', 'project', '--profile', 'prdo'], {}],
      [['config', 'get'], { SVC_PROFILE: 'prdo' }],
      [['projects', 'current'], { SVC_PROFILE: 'prdo' }],
      [['metrics', 'list', '--profile', 'prdo'], { SVC_API_KEY: 'k' }],
    ];
    for (const [args, env] of cases) {
      const r = await svc(args, env);
      expect(r.code, args.join(' ')).toBe(2);
      const e = stderrJson(r);
      expect(e).toMatchObject({ error: 'usage_error', exit_code: 2 });
      expect(e.message).toContain('unknown profile "prdo"');
      expect(e.message).toContain('known profiles: prod');
    }
    expect(readFileSync(configPath(tmp.env), 'utf8')).toBe(before);
    // A hand-edited active_profile naming a missing profile is refused the same way.
    const { writeFileSync } = await import('node:fs');
    writeFileSync(configPath(tmp.env), JSON.stringify({ active_profile: 'gone', profiles: { prod: {} } }));
    const gone = await svc(['config', 'get']);
    expect(gone.code).toBe(2);
    expect(stderrJson(gone).message).toMatch(/unknown profile "gone" \(from the active_profile of the config file/);
    // ... while `config set` creates a profile (the one exception), and `config use` needs its argument.
    expect((await svc(['config', 'set', 'project', 'p2', '--profile', 'fresh'])).code).toBe(0);
    expect((await svc(['config', 'use'])).code).toBe(2);
  });

  it('a profile may be named like an Object.prototype member (__proto__, constructor): stored and read back, not lost', async () => {
    for (const name of ['__proto__', 'constructor']) {
      expect((await svc(['config', 'set', 'project', `p-${name}`, '--profile', name])).code, name).toBe(0);
      expect(JSON.parse((await svc(['config', 'get', 'project', '--profile', name])).stdout).value, name).toBe(`p-${name}`);
    }
    expect(JSON.parse((await svc(['config', 'profiles'])).stdout).profiles).toEqual(['__proto__', 'constructor']);
    expect((await svc(['config', 'get', '--profile', 'toString'])).code).toBe(2);
  });
});
