import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { canonicalize } from 'json-canonicalize';
import { afterAll, describe, expect, it } from 'vitest';
import { useCliTestEnv } from '../testing/cli-test-env.js';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const { t, svc } = useCliTestEnv(NOW);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-verify-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A key and artifacts made here with node:crypto and json-canonicalize, the way the spec describes, not by the service. */
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const x = publicKey.export({ format: 'jwk' }).x as string;
const kid = createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${x}"}`).digest('base64url');
const JWKS = { keys: [{ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid, x }] };

function artifact(members: Record<string, unknown>, domain: string, digestField: string) {
  const canonical_form = canonicalize({ ...members, signature_alg: 'EdDSA', signing_key_id: kid });
  const digest = createHash('sha256').update(canonical_form, 'utf8').digest();
  const signature = sign(null, Buffer.concat([Buffer.from(domain), Buffer.from([0]), digest]), privateKey).toString('base64url');
  return { canonical_form, [digestField]: digest.toString('hex'), signature };
}
const SCOPE = { environment: 'prod', org_id: 'o', project_id: 'p' };
const ABOM = artifact(
  { schema: 'svc.abom.v1', manifest_id: 'm1', asset_id: 'a1', asset_version_id: '', deployment_id: '', authority: 'declared', components: [], generated_at: '2026-03-10T12:00:00.000000000Z', release: null, scope: SCOPE },
  'svc.abom.signature.v1',
  'manifest_sha256',
);
const CHECKPOINT = artifact(
  { schema: 'svc.receipt-checkpoint.v1', chain_id: 'actions', entry_sha256: 'ab'.repeat(32), generated_at: '2026-03-10T12:00:00.000000000Z', seq: 41, scope: SCOPE },
  'svc.receipt-checkpoint.signature.v1',
  'checkpoint_sha256',
);

function write(name: string, content: unknown): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, typeof content === 'string' ? content : JSON.stringify(content));
  return f;
}

describe('svc verify-artifact', () => {
  it('a bill of materials and a checkpoint verify offline: exit 0, JSON verdict, no request to any server', async () => {
    const keys = write('keys.json', JWKS);
    for (const [doc, kind] of [[ABOM, 'abom'], [CHECKPOINT, 'receipt_checkpoint']] as const) {
      const r = await svc(['verify-artifact', write(`${kind}.json`, doc), '--keys', keys]);
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ valid: true, kind, schema: expect.any(String), signing_key_id: kid });
    }
    expect(t.api.requests).toEqual([]);
  });

  it('tampering fails with exit 1 naming the fault: canonical byte, digest, signature, kid, domain, unknown key', async () => {
    const keys = write('keys2.json', JWKS);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);
    const otherKid = flip(kid, 0);
    // the checkpoint's bytes under the bill-of-materials domain: the signature was made for the other domain
    const crossed: Record<string, unknown> = { ...CHECKPOINT, canonical_form: CHECKPOINT.canonical_form.replace('svc.receipt-checkpoint.v1', 'svc.abom.v1') };
    crossed.manifest_sha256 = createHash('sha256').update(crossed.canonical_form as string).digest('hex');
    const cases: [string, unknown, string][] = [
      ['canonical', { ...ABOM, canonical_form: ABOM.canonical_form.replace('"prod"', '"prof"') }, 'digest_mismatch'],
      ['digest', { ...ABOM, manifest_sha256: flip(ABOM.manifest_sha256 as string, 3) }, 'digest_mismatch'],
      ['signature', { ...ABOM, signature: flip(ABOM.signature, 5) }, 'signature_invalid'],
      ['kid', { ...ABOM, canonical_form: ABOM.canonical_form.replace(kid, otherKid) }, 'unknown_key'],
      ['domain', crossed, 'signature_invalid'],
      ['schema', { ...ABOM, canonical_form: ABOM.canonical_form.replace('svc.abom.v1', 'svc.abom.v0') }, 'unknown_schema'],
      ['unreadable', { ...ABOM, canonical_form: '{' }, 'canonical_form_unreadable'],
      ['not an artifact', { hello: 1 }, 'not_an_artifact'],
    ];
    for (const [name, doc, fault] of cases) {
      const r = await svc(['verify-artifact', write(`bad-${name}.json`, doc), '--keys', keys]);
      expect(r.code, name).toBe(1);
      expect(JSON.parse(r.stderr), name).toMatchObject({ error: 'artifact_invalid', details: { valid: false, fault } });
    }
    const noKey = await svc(['verify-artifact', write('abom2.json', ABOM), '--keys', write('empty-keys.json', { keys: [] })]);
    expect(noKey.code).toBe(1);
  });

  it('usage errors exit 2: no --keys, unreadable or non-JSON files, a key file that is no JWK Set', async () => {
    const art = write('abom3.json', ABOM);
    for (const args of [
      ['verify-artifact', art],
      ['verify-artifact', path.join(dir, 'missing.json'), '--keys', write('k3.json', JWKS)],
      ['verify-artifact', write('text.json', 'not json'), '--keys', write('k4.json', JWKS)],
      ['verify-artifact', art, '--keys', write('k5.json', { nope: true })],
      ['verify-artifact'],
    ]) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
    }
  });

  it('the offline verifier imports nothing from the service', () => {
    const verifyDir = path.join(path.dirname(new URL(import.meta.url).pathname), '..', 'verify');
    for (const f of fs.readdirSync(verifyDir).filter((n) => n.endsWith('.ts'))) {
      const src = fs.readFileSync(path.join(verifyDir, f), 'utf8');
      expect(src, f).not.toMatch(/from\s+['"][^'"]*server\//);
    }
  });
});
