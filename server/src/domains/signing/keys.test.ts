/** The signing key service: sealed private keys, the first key, a changed key-hash secret, rotation. */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../http/principal.js';
import { testApp, type TestApp } from '../../testing/app.js';
import { sha256, signingInput, SIGNING_DOMAINS } from './byte-contract.js';
import { ed25519Verify, sealingKey, SigningKeyService } from './keys.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

const owner = (orgId: string): Principal => ({ kind: 'api_key', keyId: 'k', signInId: null, connectionId: null, orgId, projectId: null, scopes: new Set(), userId: null, role: null });

describe('signing keys', () => {
  it('the private key is sealed at rest: the row holds no seed in clear, and another node with the same secret signs with the same key', async () => {
    const kid = await t.ctx.signing.currentKeyId();
    const row = (await t.ctx.control.signingKeys.find(kid))!;
    expect(row.sealed).toMatch(/^v1\./);
    const secret = Buffer.from(t.ctx.config.keyHashSecret!);
    const other = new SigningKeyService(t.ctx.control, t.ctx.clock, sealingKey(secret), async () => 'owner');
    expect(await other.currentKeyId()).toBe(kid);
    const s = await other.sign(SIGNING_DOMAINS.abom, '{"a":1}', kid);
    expect(ed25519Verify(row.x, signingInput(SIGNING_DOMAINS.abom, sha256('{"a":1}')), s.signature)).toBe(true);
    await expect(other.sign(SIGNING_DOMAINS.abom, '{"a":1}', 'not-current')).rejects.toThrow(/no longer current/);
  });

  it('a changed key-hash secret: signing answers 503 saying to rotate; a rotation recovers and the old key stays published', async () => {
    const before = await t.ctx.signing.currentKeyId();
    const moved = new SigningKeyService(t.ctx.control, t.ctx.clock, sealingKey(randomBytes(32)), async () => 'owner');
    await expect(moved.sign(SIGNING_DOMAINS.abom, '{}', before)).rejects.toMatchObject({ status: 503, message: expect.stringMatching(/rotate/) });
    const { current } = await moved.rotate(owner(t.orgId));
    expect((await moved.sign(SIGNING_DOMAINS.abom, '{}', current.kid)).kid).toBe(current.kid);
    expect((await moved.jwks()).keys.map((k) => k.kid)).toEqual(expect.arrayContaining([before, current.kid]));
    await expect(moved.rotate(owner('another-org'))).rejects.toMatchObject({ status: 403 });
    const member = new SigningKeyService(t.ctx.control, t.ctx.clock, sealingKey(randomBytes(32)), async () => 'member');
    await expect(member.rotate(owner(t.orgId))).rejects.toMatchObject({ status: 403 });
  });
});
