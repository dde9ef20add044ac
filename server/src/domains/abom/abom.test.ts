/**
 * Signed bills of materials end to end (spec 2 "Attestations and receipt chains", "Byte contract for
 * signed artifacts", Versioning). Signatures are checked by an independent verifier (@noble/ed25519 and
 * json-canonicalize, and the CLI's offline verifier), never by the service's own code path.
 */
import { createHash } from 'node:crypto';
import * as noble from '@noble/ed25519';
import { canonicalize as otherJcs } from 'json-canonicalize';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyArtifact } from '../../../../cli/src/verify/artifact.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, secondOrganization, signIn } from '../../testing/people.js';
import { SIGNING_DOMAINS } from '../signing/byte-contract.js';
import { ABOM_SCHEMA, ASSET_KINDS, abomCanonicalForm, type AbomMembers } from './model.js';
import { type Json, projectWithAsset, sha256hex } from './testing.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

const H = sha256hex;
const project = () => projectWithAsset(t);

const COMPONENTS = [
  { kind: 'ASSET_KIND_TOOL', ref: 'search', version: '2', content_sha256: H('search'), declared_by: 'team-a' },
  { kind: 'ASSET_KIND_MODEL', ref: 'gpt-x', version: '2026-01', content_sha256: H('model'), declared_by: 'team-a' },
  { kind: 'ASSET_KIND_PROMPT', ref: 'system', content_sha256: H('prompt') },
];
const manifestBody = (assetId: string, extra: Json = {}) => ({
  scope: { environment: 'prod' },
  asset_id: assetId,
  generated_at: '2026-03-10T14:00:00.5+02:00',
  components: COMPONENTS,
  ...extra,
});

async function jwks() {
  const res = await t.call({ method: 'GET', url: '/.well-known/svc-signing-keys.json', key: null });
  expect(res.statusCode).toBe(200);
  return res.json() as { keys: Json[] };
}

/** The spec's signature procedure, with other libraries than the service's. */
async function independentlyValid(a: { canonical_form: string; manifest_sha256: string; signature: string }, keys: { keys: Json[] }, domain: string = SIGNING_DOMAINS.abom) {
  let inner: Json;
  try {
    inner = JSON.parse(a.canonical_form);
  } catch {
    return false;
  }
  if (otherJcs(inner) !== a.canonical_form) return false;
  const jwk = keys.keys.find((k) => k.kid === inner.signing_key_id);
  if (!jwk) return false;
  const digest = createHash('sha256').update(Buffer.from(a.canonical_form, 'utf8')).digest();
  if (digest.toString('hex') !== a.manifest_sha256) return false;
  const sig = Buffer.from(a.signature, 'base64url');
  if (sig.length !== 64) return false;
  const msg = Buffer.concat([Buffer.from(domain, 'ascii'), Buffer.from([0]), digest]);
  return noble.verifyAsync(sig, msg, Buffer.from(jwk.x, 'base64url')).catch(() => false);
}

describe('POST /abom-manifests and GET /abom-manifests/{id}', () => {
  it('"response: complete signed artifact with authority declared"; the canonical form has exactly the bill of materials members', async () => {
    const p = await project();
    const res = await p.call('POST', '/abom-manifests', manifestBody(p.assetId, { release: '1.4.0', asset_version_id: '1' }));
    expect(res.statusCode, res.body).toBe(201);
    const a = res.json();
    expect(a).toMatchObject({ authority: 'declared', schema: ABOM_SCHEMA, signature_alg: 'EdDSA', valid: true, defect: '', release: '1.4.0', asset_version_id: '1', deployment_id: '' });
    const inner = JSON.parse(a.canonical_form);
    expect(Object.keys(inner)).toEqual([
      'asset_id', 'asset_version_id', 'authority', 'components', 'deployment_id', 'generated_at', 'manifest_id', 'release', 'schema', 'scope', 'signature_alg', 'signing_key_id',
    ]);
    expect(inner.scope).toEqual({ environment: 'prod', org_id: t.orgId, project_id: p.projectId });
    expect(inner.manifest_id).toBe(a.manifest_id);
    expect(inner.signing_key_id).toBe(a.signing_key_id);
    expect(inner.authority).toBe('declared');
    // "Timestamps are UTC RFC 3339 with exactly nine fractional digits (trailing zeros kept)"
    expect(inner.generated_at).toBe('2026-03-10T12:00:00.500000000Z');
    // "Enumerated values enter as integers"; "Components are sorted by (kind, ref, version, content_sha256, declared_by)"
    expect(inner.components.map((c: Json) => c.kind)).toEqual([2, 3, 4]);
    expect(inner.components[1]).toEqual({ content_sha256: H('prompt'), declared_by: '', kind: 3, ref: 'system', version: '' });
    expect(a.components.map((c: Json) => c.kind)).toEqual(['ASSET_KIND_MODEL', 'ASSET_KIND_PROMPT', 'ASSET_KIND_TOOL']);
    expect(a.manifest_sha256).toBe(H(a.canonical_form));
    expect(a.signature).toMatch(/^[A-Za-z0-9_-]{86}$/);
    expect(await independentlyValid(a, await jwks())).toBe(true);
    expect(verifyArtifact(a, await jwks())).toMatchObject({ valid: true, kind: 'abom', signing_key_id: a.signing_key_id });

    const got = await p.call('GET', `/abom-manifests/${a.manifest_id}`);
    expect(got.statusCode).toBe(200);
    expect(got.json()).toEqual(a);
  });

  it('the published key set: "{keys:[{kty:OKP, crv:Ed25519, alg:EdDSA, use:sig, kid, x}]}", x the raw 32-byte key, no credential needed', async () => {
    const { keys } = await jwks();
    expect(keys.length).toBeGreaterThan(0);
    for (const k of keys) {
      expect(Object.keys(k).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
      expect(k).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });
      expect(k.x).not.toMatch(/=/);
      expect(Buffer.from(k.x, 'base64url').length).toBe(32);
      // kid: the RFC 7638 thumbprint
      expect(k.kid).toBe(createHash('sha256').update(`{"crv":"Ed25519","kty":"OKP","x":"${k.x}"}`).digest('base64url'));
    }
  });

  it('tampering: one changed byte of the canonical form, the digest, the signature, the kid, or the domain each fails verification', async () => {
    const p = await project();
    const a = (await p.call('POST', '/abom-manifests', manifestBody(p.assetId))).json();
    const keys = await jwks();
    expect(await independentlyValid(a, keys)).toBe(true);
    const flip = (s: string, i: number) => s.slice(0, i) + (s[i] === 'a' ? 'b' : 'a') + s.slice(i + 1);
    const i = a.canonical_form.indexOf('"prod"') + 2;
    const cases: [string, Json, string?][] = [
      ['canonical form', { ...a, canonical_form: flip(a.canonical_form, i) }],
      ['digest', { ...a, manifest_sha256: flip(a.manifest_sha256, 5) }],
      ['signature', { ...a, signature: flip(a.signature, 3) }],
      ['kid', { ...a, canonical_form: a.canonical_form.replace(a.signing_key_id, flip(a.signing_key_id, 0)) }],
      ['domain', a, SIGNING_DOMAINS.checkpoint],
    ];
    for (const [what, doc, domain] of cases) {
      expect(await independentlyValid(doc as never, keys, domain), what).toBe(false);
      if (!domain) expect(verifyArtifact(doc, keys).valid, what).toBe(false);
    }
    // the digest recomputed over the tampered bytes still fails: the signature covers the digest
    const forged = { ...a, canonical_form: flip(a.canonical_form, i) };
    forged.manifest_sha256 = H(forged.canonical_form);
    expect(await independentlyValid(forged, keys)).toBe(false);
    expect(verifyArtifact(forged, keys)).toMatchObject({ valid: false, fault: 'signature_invalid' });
  });

  it('"Components are sorted by (kind, ref, version, content_sha256, declared_by)": each key breaks the ties of the ones before it, in code-unit order', async () => {
    const p = await project();
    const c = (ref: string, version: string, content: string, declared_by: string) => ({ kind: 'ASSET_KIND_TOOL', ref, version, content_sha256: H(content), declared_by });
    const [lo, hi] = [H('x'), H('y')].sort();
    const content = lo === H('x') ? ['x', 'y'] : ['y', 'x'];
    // Given in the reverse of the contract order.
    const given = [
      c('b', '1', content[0], ''),
      c('a', '2', content[0], ''),
      c('a', '1', content[1], ''),
      c('a', '1', content[0], 'team-b'),
      c('a', '1', content[0], 'team-a'),
      c('B', '9', content[1], 'z'),
      { kind: 'ASSET_KIND_MODEL', ref: 'z', version: '9', content_sha256: hi, declared_by: 'z' },
    ];
    const res = await p.call('POST', '/abom-manifests', manifestBody(p.assetId, { components: given }));
    expect(res.statusCode, res.body).toBe(201);
    const inner = JSON.parse(res.json().canonical_form);
    expect(inner.components.map((x: Json) => [x.kind, x.ref, x.version, x.content_sha256, x.declared_by])).toEqual([
      [2, 'z', '9', hi, 'z'],
      [4, 'B', '9', hi, 'z'],
      [4, 'a', '1', lo, 'team-a'],
      [4, 'a', '1', lo, 'team-b'],
      [4, 'a', '1', hi, ''],
      [4, 'a', '2', lo, ''],
      [4, 'b', '1', lo, ''],
    ]);
    expect(await independentlyValid(res.json(), await jwks())).toBe(true);
  });

  it('"release null vs empty string produce different bytes, digests and signatures"', async () => {
    const p = await project();
    const none = (await p.call('POST', '/abom-manifests', manifestBody(p.assetId, { release: null }))).json();
    const absent = (await p.call('POST', '/abom-manifests', manifestBody(p.assetId))).json();
    const empty = (await p.call('POST', '/abom-manifests', manifestBody(p.assetId, { release: '' }))).json();
    expect(JSON.parse(none.canonical_form).release).toBeNull();
    expect(JSON.parse(absent.canonical_form).release).toBeNull();
    expect(JSON.parse(empty.canonical_form).release).toBe('');
    expect(none.release).toBeNull();
    expect(empty.release).toBe('');
    // the same members otherwise: only the release differs
    const members = JSON.parse(none.canonical_form) as AbomMembers;
    const a = abomCanonicalForm({ ...members, release: null });
    const b = abomCanonicalForm({ ...members, release: '' });
    expect(a).toContain('"release":null');
    expect(b).toContain('"release":""');
    expect(a).not.toBe(b);
    expect(H(a)).not.toBe(H(b));
    const kid = await t.ctx.signing.currentKeyId();
    const [sa, sb] = [await t.ctx.signing.sign(SIGNING_DOMAINS.abom, a, kid), await t.ctx.signing.sign(SIGNING_DOMAINS.abom, b, kid)];
    expect(sa.signature).not.toBe(sb.signature);
    expect(sa.sha256).toBe(H(a));
    for (const m of [none, absent, empty]) expect(await independentlyValid(m, await jwks())).toBe(true);
  });

  it('"the five derived fields must be absent or the request is rejected": 400 naming them; nothing is stored', async () => {
    const p = await project();
    const res = await p.call('POST', '/abom-manifests', manifestBody(p.assetId, { canonical_form: '{}', manifest_sha256: 'x', signature: 'x', signing_key_id: 'k', authority: 'mediated' }));
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toBe('invalid_request');
    for (const f of ['canonical_form', 'manifest_sha256', 'signature', 'signing_key_id', 'authority']) expect(res.json().message).toContain(f);
    expect(res.json().details.fields).toEqual(['canonical_form', 'manifest_sha256', 'signature', 'signing_key_id', 'authority']);
    for (const f of ['authority', 'signing_key_id']) {
      const one = await p.call('POST', '/abom-manifests', manifestBody(p.assetId, { [f]: 'declared' }));
      expect(one.statusCode).toBe(400);
      expect(one.json().message).toContain(f);
    }
    for (const f of ['manifest_id', 'schema', 'signature_alg']) expect((await p.call('POST', '/abom-manifests', manifestBody(p.assetId, { [f]: 'x' }))).statusCode).toBe(400);
  });

  it('rotation: "retired keys stay published permanently"; an old manifest still verifies after rotation; new manifests use the new key', async () => {
    const p = await project();
    const old = (await p.call('POST', '/abom-manifests', manifestBody(p.assetId))).json();
    const rotated = await t.call({ method: 'POST', url: '/api/v1/signing-keys/rotate' });
    expect(rotated.statusCode, rotated.body).toBe(200);
    expect(rotated.json().retired).toMatchObject({ kid: old.signing_key_id, status: 'retired' });
    const fresh = rotated.json().current.kid;
    expect(fresh).not.toBe(old.signing_key_id);
    const keys = await jwks();
    expect(keys.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([old.signing_key_id, fresh]));
    expect(await independentlyValid(old, keys)).toBe(true);
    expect(verifyArtifact(old, keys).valid).toBe(true);
    expect((await p.call('GET', `/abom-manifests/${old.manifest_id}`)).json()).toMatchObject({ valid: true, defect: '' });
    const next = (await p.call('POST', '/abom-manifests', manifestBody(p.assetId))).json();
    expect(next.signing_key_id).toBe(fresh);
    expect(await independentlyValid(next, keys)).toBe(true);
    const list = (await p.call('GET', '/signing-keys')).json().signing_keys as Json[];
    expect(list.filter((k) => k.status === 'current').map((k) => k.kid)).toEqual([fresh]);
  });

  it('concurrent rotations leave exactly one current key, and every key published', async () => {
    const before = (await jwks()).keys.length;
    const all = await Promise.all([1, 2, 3, 4].map(() => t.call({ method: 'POST', url: '/api/v1/signing-keys/rotate' })));
    expect(all.every((r) => r.statusCode === 200 || r.statusCode === 503)).toBe(true);
    const ok = all.filter((r) => r.statusCode === 200).length;
    const keys = await t.ctx.control.signingKeys.all();
    expect(keys.filter((k) => k.current)).toHaveLength(1);
    expect((await jwks()).keys.length).toBe(before + ok);
  });

  it('rotation is for an owner or admin of the service\'s own organization only; it takes no body', async () => {
    const member = await addPerson(t, 'member');
    const b = await signIn(t, member);
    expect((await b.call({ method: 'POST', url: '/api/v1/signing-keys/rotate' })).statusCode).toBe(403);
    const other = await secondOrganization(t);
    expect((await t.call({ method: 'POST', url: '/api/v1/signing-keys/rotate', key: other.ownerKey })).statusCode).toBe(403);
    expect((await t.call({ method: 'POST', url: '/api/v1/signing-keys/rotate', payload: { kid: 'mine' } })).statusCode).toBe(400);
    expect((await t.call({ method: 'POST', url: '/api/v1/signing-keys/rotate', key: null })).statusCode).toBe(401);
  });

  it('"mintable only by owner/admin": an admin declares; a key whose person was demoted to member is refused (403) though it holds agents:write', async () => {
    const p = await project();
    const admin = await addPerson(t, 'admin');
    const b = await signIn(t, admin);
    const ok = await b.call({ method: 'POST', url: '/api/v1/abom-manifests', payload: manifestBody(p.assetId, { scope: { project_id: p.projectId } }) });
    expect(ok.statusCode, ok.body).toBe(201);
    const minted = await b.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'admin-key', scopes: ['agents:write', 'agents:read'], project_id: p.projectId } });
    expect(minted.statusCode, minted.body).toBe(201);
    const demote = await t.call({ method: 'PATCH', url: `/api/v1/members/${admin.userId}`, payload: { role: 'member' } });
    expect(demote.statusCode, demote.body).toBe(200);
    const refused = await p.call('POST', '/abom-manifests', manifestBody(p.assetId), minted.json().key);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toMatch(/owner or admin/);
    // a member's session lacks agents:write altogether
    const member = await addPerson(t, 'member');
    const mb = await signIn(t, member);
    expect((await mb.call({ method: 'POST', url: '/api/v1/abom-manifests', payload: manifestBody(p.assetId, { scope: { project_id: p.projectId } }) })).statusCode).toBe(403);
  });

  it('"canonical_form_superseded" (signed under an earlier contract) and "canonical_form_unreadable": valid false with HTTP 200 and the manifest as stored', async () => {
    const p = await project();
    const good = (await p.call('POST', '/abom-manifests', manifestBody(p.assetId))).json();
    const row = (await t.ctx.control.manifests.find(good.manifest_id))!;
    const inner = JSON.parse(good.canonical_form);
    const store = async (id: string, canonicalForm: string, sha = H(canonicalForm)) => {
      await t.ctx.control.manifests.insert({ ...row, id, canonicalForm, manifestSha256: sha });
      const res = await p.call('GET', `/abom-manifests/${id}`);
      expect(res.statusCode).toBe(200);
      return res.json();
    };
    const earlier = otherJcs({ ...inner, manifest_id: 'm-v0', schema: 'svc.abom.v0' });
    const v0 = await store('m-v0', earlier);
    expect(v0).toMatchObject({ manifest_id: 'm-v0', valid: false, defect: 'canonical_form_superseded', canonical_form: earlier, manifest_sha256: H(earlier), signature: row.signature });
    expect(v0.components).toBeUndefined();
    const millis = otherJcs({ ...inner, manifest_id: 'm-ms', generated_at: '2026-03-10T12:00:00.500Z' });
    expect((await store('m-ms', millis)).defect).toBe('canonical_form_superseded');
    const kindNames = otherJcs({ ...inner, manifest_id: 'm-kn', components: inner.components.map((c: Json) => ({ ...c, kind: ASSET_KINDS[c.kind] })) });
    expect((await store('m-kn', kindNames)).defect).toBe('canonical_form_superseded');
    const broken = await store('m-broken', '{"schema":"svc.abom.v1",');
    expect(broken).toMatchObject({ manifest_id: 'm-broken', valid: false, defect: 'canonical_form_unreadable', canonical_form: '{"schema":"svc.abom.v1",' });
    expect((await store('m-array', '[1,2]')).defect).toBe('canonical_form_unreadable');
    // the recorded digest no longer that of the bytes
    expect((await store(good.manifest_id.replace(/.$/, 'z'), good.canonical_form, good.manifest_sha256)).defect).toBe('digest_mismatch');
    const mismatch = otherJcs({ ...inner, manifest_id: 'm-dm' });
    expect(await store('m-dm', mismatch, H(mismatch).replace(/^./, '0'))).toMatchObject({ valid: false, defect: 'digest_mismatch' });
    // a good digest of other bytes under the old signature: the signature fails, reported as digest_mismatch
    expect(await store('m-sig', otherJcs({ ...inner, manifest_id: 'm-sig' }))).toMatchObject({ valid: false, defect: 'digest_mismatch' });
  });

  it('an object of another project or organization is 404 exactly like a missing one', async () => {
    const p = await project();
    const q = await project();
    const a = (await p.call('POST', '/abom-manifests', manifestBody(p.assetId))).json();
    const missing = await q.call('GET', '/abom-manifests/nope');
    const foreign = await q.call('GET', `/abom-manifests/${a.manifest_id}`);
    expect(missing.statusCode).toBe(404);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(missing.json());
    const other = await secondOrganization(t);
    const o = await t.call({ method: 'GET', url: `/api/v1/abom-manifests/${a.manifest_id}?project_id=${p.projectId}`, key: other.ownerKey });
    expect(o.statusCode).toBe(404);
    // declaring for an asset of another project: 404
    const cross = await q.call('POST', '/abom-manifests', manifestBody(p.assetId));
    expect(cross.statusCode).toBe(404);
    expect((await q.call('POST', '/abom-manifests', manifestBody(q.assetId, { asset_version_id: '99' }))).statusCode).toBe(404);
    expect((await q.call('POST', '/abom-manifests', manifestBody(q.assetId, { deployment_id: 'nope' }))).statusCode).toBe(404);
    // reading needs agents:read
    const writeOnly = await projectWithKey(t, ['metrics:read']);
    expect((await t.call({ method: 'GET', url: `/api/v1/abom-manifests/${a.manifest_id}`, key: writeOnly.key })).statusCode).toBe(403);
  });

  it('bad input is a 4xx in the error shape, never 5xx, and stores nothing: malformed, huge, deeply nested, repeated, unspecified enum', async () => {
    const p = await project();
    const before = await t.db.selectFrom('abom_manifests').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    const nested: Json = {};
    let cur = nested;
    for (let i = 0; i < 2000; i++) cur = cur.a = {};
    const comp = COMPONENTS[0];
    const bad: unknown[] = [
      'not json',
      [],
      null,
      { ...manifestBody(p.assetId), generated_at: 'yesterday' },
      { ...manifestBody(p.assetId), generated_at: '2026-03-10T12:00:00.1234567891Z' },
      { ...manifestBody(p.assetId), components: [{ ...comp, kind: 'ASSET_KIND_UNSPECIFIED' }] },
      { ...manifestBody(p.assetId), components: [{ ...comp, kind: 'ASSET_KIND_ROBOT' }] },
      { ...manifestBody(p.assetId), components: [{ ...comp, kind: 2 }] },
      { ...manifestBody(p.assetId), components: [{ ...comp, content_sha256: H('x').toUpperCase() }] },
      { ...manifestBody(p.assetId), components: [comp, { ...comp }] },
      { ...manifestBody(p.assetId), components: Array.from({ length: 1001 }, (_, i) => ({ ...comp, ref: `r${i}` })) },
      { ...manifestBody(p.assetId), components: [{ ...comp, ref: 'x'.repeat(513) }] },
      { ...manifestBody(p.assetId), release: 5 },
      { ...manifestBody(p.assetId), scope: { environment: 'prod', org_id: 'other' } },
      { ...manifestBody(p.assetId), nested },
      { ...manifestBody(p.assetId), asset_id: '' },
      { ...manifestBody(p.assetId), asset_id: 'x'.repeat(5000) },
    ];
    for (const body of bad) {
      const res = await t.call({ method: 'POST', url: '/api/v1/abom-manifests', key: p.key, payload: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } });
      expect(res.statusCode, JSON.stringify(body).slice(0, 120)).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
      expect(res.json()).toMatchObject({ error: expect.any(String), message: expect.any(String) });
    }
    const after = await t.db.selectFrom('abom_manifests').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
    for (const url of ['/abom-manifests/x?project_id=a&project_id=b', `/abom-manifests/${'x'.repeat(300)}`, '/abom-manifests/x?bogus=1'])
      expect((await p.call('GET', url)).statusCode).toBeLessThan(500);
  });

  it('concurrent identical declarations each get their own signed manifest (nothing shared, each verifies)', async () => {
    const p = await project();
    const all = await Promise.all(Array.from({ length: 8 }, () => p.call('POST', '/abom-manifests', manifestBody(p.assetId))));
    expect(all.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    const ids = new Set(all.map((r) => r.json().manifest_id));
    expect(ids.size).toBe(8);
    const keys = await jwks();
    for (const r of all) expect(await independentlyValid(r.json(), keys)).toBe(true);
  });
});
