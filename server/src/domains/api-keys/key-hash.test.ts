/**
 * Defect 8 (issue): "Show a short prefix of the random part only. Hash keys with a keyed hash (HMAC
 * with a server secret kept in the data dir), so a copy of the database alone does not allow
 * guessing." Keys stored under the old unkeyed SHA-256 keep working and are rewritten on first use.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { buildContext } from '../../context.js';
import { KEY_HASH_SECRET_FILE, keyHashSecretFile, withKeyHashSecret } from '../../lib/keyed-hash.js';
import { DuckDbTelemetry } from '../../storage/telemetry/duckdb/engine.js';
import { openTestControl, testApp, type TestApp } from '../../testing/app.js';
import { bootstrap } from '../organizations/bootstrap.js';
import { ALL_SCOPES } from './scopes.js';
import { keyPrefix, newKeySecret } from './secret.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

describe('API key hashes and prefixes', () => {
  let t: TestApp;
  const hashSecret = randomBytes(32);

  beforeAll(async () => {
    t = await testApp({ env: { SVC_KEY_HASH_SECRET: hashSecret.toString('base64') } });
  });
  afterAll(async () => t.close());

  const mint = async () => {
    const res = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'h', scopes: ['projects:read'], org_wide: true } });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { id: string; key: string; key_prefix: string };
  };
  const row = (id: string) => t.db.selectFrom('api_keys').select(['key_hash', 'key_prefix']).where('id', '=', id).executeTakeFirstOrThrow();

  it('key_prefix is svc_ and the first 6 characters of the random part, in the answer, the listing and the store', async () => {
    const k = await mint();
    expect(k.key_prefix).toBe(k.key.slice(0, 10));
    expect(k.key_prefix).toMatch(/^svc_[A-Za-z0-9_-]{6}$/);
    const listed = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys?limit=200' })).json().api_keys.find((x: { id: string }) => x.id === k.id);
    expect(listed.key_prefix).toBe(k.key_prefix);
    expect((await row(k.id)).key_prefix).toBe(k.key_prefix);
  });

  it('a key chosen by a person shows nothing of itself', () => {
    expect(keyPrefix('my-chosen-key-16')).toBe('');
    expect(keyPrefix('svc_short-chosen-key')).toBe('');
    const generated = newKeySecret();
    expect(keyPrefix(generated)).toBe(generated.slice(0, 10));
  });

  it('the stored hash is HMAC-SHA256 under the server secret, not a plain SHA-256 of the key', async () => {
    const k = await mint();
    const stored = (await row(k.id)).key_hash;
    expect(stored).not.toBe(sha256(k.key));
    expect(stored).toBe(createHmac('sha256', hashSecret).update(k.key).digest('hex'));
  });

  it('a node with another server secret cannot use the stored hashes (the secret is needed, the database alone is not enough)', async () => {
    const k = await mint();
    const telemetry = await DuckDbTelemetry.open({ memory: true });
    const other = buildContext({ config: loadConfig({ SVC_LOG_LEVEL: 'silent', SVC_KEY_HASH_SECRET: randomBytes(32).toString('base64') }), control: t.ctx.control, telemetry });
    try {
      expect(await other.apiKeys.authenticate(k.key)).toBeUndefined();
      expect(await t.ctx.apiKeys.authenticate(k.key)).toBeDefined();
    } finally {
      await telemetry.close();
    }
  });

  it('a key stored under the old plain SHA-256 still works, and its first use rewrites it to the keyed hash and the short prefix', async () => {
    const secret = newKeySecret();
    const id = t.ctx.ids.uuid();
    const now = t.ctx.clock.now().toISOString();
    await t.ctx.control.apiKeys.insert({
      id, orgId: t.orgId, projectId: null, name: 'legacy', keyHash: sha256(secret), keyPrefix: secret.slice(0, 12), scopes: ['projects:read'],
      status: 'active', expiresAt: '2999-01-01T00:00:00.000Z', lastUsedAt: null, createdAt: now, revokedAt: null, userId: null, createdByApiKeyId: null, createdByState: 'system',
    });
    // Listed before its first use: no more than the short prefix is shown.
    const listed = (await t.call({ method: 'GET', url: '/api/v1/account/api-keys?limit=200' })).json().api_keys.find((x: { id: string }) => x.id === id);
    expect(listed.key_prefix).toBe(secret.slice(0, 10));
    expect((await t.call({ method: 'GET', url: '/api/v1/projects', key: secret })).statusCode).toBe(200);
    const after = await row(id);
    expect(after.key_hash).toBe(t.ctx.keyHash.hash(secret));
    expect(after.key_prefix).toBe(secret.slice(0, 10));
    expect((await t.call({ method: 'GET', url: '/api/v1/projects', key: secret })).statusCode).toBe(200);
  });

  it('SVC_INIT_API_KEY of 16 characters: stored keyed, listed with nothing of it', async () => {
    const control = await openTestControl('sqlite');
    const telemetry = await DuckDbTelemetry.open({ memory: true });
    try {
      const ctx = buildContext({ config: t.ctx.config, control: control.store, telemetry });
      const chosen = 'my-chosen-key-16';
      const init = await bootstrap(control.store, ctx.audit, ctx.clock, ctx.ids, { apiKey: chosen }, ctx.keyHash);
      const [k] = await control.store.apiKeys.list({ orgId: init.orgId, limit: 10 });
      expect(k.keyPrefix).toBe('');
      expect(k.keyHash).not.toBe(sha256(chosen));
      expect((await ctx.apiKeys.authenticate(chosen))?.scopes).toEqual(new Set(ALL_SCOPES));
    } finally {
      await telemetry.close();
      await control.drop();
    }
  });
});

describe('the key hash secret', () => {
  it('is created once in the data dir, 32 random bytes, readable by the owner only, and read back after', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-keyhash-'));
    try {
      const a = await keyHashSecretFile(dir);
      const file = path.join(dir, KEY_HASH_SECRET_FILE);
      expect(a.length).toBe(32);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect((await keyHashSecretFile(dir)).equals(a)).toBe(true);
      expect((await withKeyHashSecret(loadConfig({ SVC_DATA_DIR: dir }))).keyHashSecret.equals(a)).toBe(true);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('SVC_KEY_HASH_SECRET (base64, at least 32 bytes) wins over the file; anything else is refused at start', async () => {
    const s = randomBytes(32);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-keyhash-'));
    try {
      const config = await withKeyHashSecret(loadConfig({ SVC_DATA_DIR: dir, SVC_KEY_HASH_SECRET: s.toString('base64') }));
      expect(config.keyHashSecret.equals(s)).toBe(true);
      expect(fs.existsSync(path.join(dir, KEY_HASH_SECRET_FILE))).toBe(false);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
    for (const bad of ['short', randomBytes(16).toString('base64'), 'not base64 !!!'])
      expect(() => loadConfig({ SVC_KEY_HASH_SECRET: bad }), bad).toThrow(/SVC_KEY_HASH_SECRET/);
  });
});
