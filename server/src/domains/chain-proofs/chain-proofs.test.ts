/**
 * Checkpoints, signed tree heads, proofs and the entry export through HTTP, on an in-memory chain and a
 * node:crypto Ed25519 signer. Signatures and proofs are checked with the offline verifier (cli/src/verify),
 * not with the service's own code.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkCheckpoint, checkConsistency, checkInclusion, checkTreeHead, CHECKPOINT, TREE_HEAD, verifyChainEntries } from '../../../../cli/src/verify/chain.js';
import { verifyArtifactSignature } from '../../../../cli/src/verify/ed25519.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { secondOrganization } from '../../testing/people.js';
import { FakeChain, TestSigner } from './testing.js';

type Obj = Record<string, any>;
const chain = new FakeChain();
const signer = new TestSigner();
let t: TestApp;
beforeAll(async () => {
  t = await testApp({ chainSource: chain, signer });
});
afterAll(async () => t?.close());

/** A project with `n` chain entries and a key with agents:read only. */
async function world(n: number) {
  const { projectId, key } = await projectWithKey(t, ['agents:read'], 'chain');
  if (n > 0) chain.append(projectId, n);
  const base = `/api/v1/receipt-chains/actions`;
  const call = (method: 'GET' | 'POST', path: string, query: Record<string, string | number> = {}, extra: Obj = {}) =>
    t.call({ method, url: `${base}${path}?${new URLSearchParams({ project_id: projectId, ...Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) })}`, key, ...extra });
  const exported = async () => {
    const entries: Obj[] = [];
    let from: number | null = 0;
    while (from !== null) {
      const r = await call('GET', '/entries', { from_seq: from, limit: 7 });
      expect(r.statusCode, r.body).toBe(200);
      entries.push(...r.json().entries);
      from = r.json().next_from_seq;
    }
    return { chain_id: 'actions', project_id: projectId, entries } as any;
  };
  return { projectId, key, call, exported };
}

describe('checkpoints', () => {
  it('"42 entries checkpoint at 41": the signed members are exactly the contract\'s, with nine fractional digits, and the signature verifies offline', async () => {
    const w = await world(42);
    const r = await w.call('POST', '/checkpoints');
    expect(r.statusCode, r.body).toBe(201);
    const cp = r.json();
    const members = JSON.parse(cp.canonical_form);
    expect(Object.keys(members)).toEqual(['chain_id', 'entry_sha256', 'generated_at', 'schema', 'scope', 'seq', 'signature_alg', 'signing_key_id']);
    expect(members).toMatchObject({
      chain_id: 'actions',
      entry_sha256: chain.chains.get(w.projectId)![41].entrySha256,
      schema: 'svc.receipt-checkpoint.v1',
      scope: { environment: '', org_id: t.orgId, project_id: w.projectId },
      seq: 41,
      signature_alg: 'EdDSA',
      signing_key_id: signer.kid,
    });
    expect(members.generated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    expect(cp).toMatchObject({ ...members, id: expect.any(String), checkpoint_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(verifyArtifactSignature(cp.canonical_form, cp.checkpoint_sha256, cp.signature, CHECKPOINT.domain, signer.jwks())).toEqual({ ok: true, kid: signer.kid });
    // Stored: the same artifact by id and in the list, newest first.
    const again = await w.call('POST', '/checkpoints');
    expect((await w.call('GET', `/checkpoints/${cp.id}`)).json()).toEqual(cp);
    const list = (await w.call('GET', '/checkpoints')).json();
    expect(new Set(list.checkpoints.map((c: Obj) => c.id))).toEqual(new Set([again.json().id, cp.id]));
    expect(list.checkpoints).toHaveLength(2);
    expect(list.next_cursor).toBeNull();
  });

  it('"a signature made for one domain must fail in the other"; one changed byte of canonical form, digest, signature or kid fails', async () => {
    const w = await world(3);
    const cp = (await w.call('POST', '/checkpoints')).json();
    const jwks = signer.jwks();
    const check = (c: Obj, domain: string = CHECKPOINT.domain) => verifyArtifactSignature(c.canonical_form, c.checkpoint_sha256, c.signature, domain, jwks);
    expect(check(cp).ok).toBe(true);
    expect(check(cp, TREE_HEAD.domain)).toMatchObject({ ok: false, fault: 'signature_invalid' });
    expect(check(cp, 'svc.abom.signature.v1')).toMatchObject({ ok: false, fault: 'signature_invalid' });
    const flipped = cp.canonical_form.replace('"seq":2', '"seq":3');
    expect(check({ ...cp, canonical_form: flipped })).toMatchObject({ ok: false, fault: 'digest_mismatch' });
    const digest = `${cp.checkpoint_sha256.slice(0, -1)}${cp.checkpoint_sha256.endsWith('0') ? '1' : '0'}`;
    expect(check({ ...cp, checkpoint_sha256: digest })).toMatchObject({ ok: false, fault: 'digest_mismatch' });
    const sig = Buffer.from(cp.signature, 'base64url');
    sig[10] ^= 1;
    expect(check({ ...cp, signature: sig.toString('base64url') })).toMatchObject({ ok: false, fault: 'signature_invalid' });
    // Another kid inside the signed bytes (with a digest recomputed to match): unknown key, or the wrong key.
    const { createHash } = await import('node:crypto');
    const otherKid = cp.canonical_form.replace(signer.kid, 'test-key-2');
    const sha = createHash('sha256').update(otherKid).digest('hex');
    expect(check({ ...cp, canonical_form: otherKid, checkpoint_sha256: sha })).toMatchObject({ ok: false, fault: 'unknown_key' });
    const other = new TestSigner('test-key-2');
    expect(verifyArtifactSignature(otherKid, sha, cp.signature, CHECKPOINT.domain, other.jwks())).toMatchObject({ ok: false, fault: 'signature_invalid' });
  });

  it('"the chain is verified first and an invalid chain is not checkpointed": 409 with the fault, nothing stored', async () => {
    const w = await world(5);
    chain.chains.get(w.projectId)![2].canonical = chain.chains.get(w.projectId)![2].canonical.replace('EXECUTED', 'DENIED');
    for (const path of ['/checkpoints', '/tree-heads']) {
      const r = await w.call('POST', path);
      expect(r.statusCode, r.body).toBe(409);
      expect(r.json()).toMatchObject({ error: 'conflict', details: { reason: 'chain_invalid', detail: 'digest_mismatch', first_invalid_seq: 2 } });
    }
    expect((await w.call('GET', '/checkpoints')).json().checkpoints).toEqual([]);
    expect((await w.call('GET', '/tree-heads')).json().tree_heads).toEqual([]);
  });

  it('"a never-opened chain" is 404 on every route; another chain id too; another organization\'s project is 404 like a missing one', async () => {
    const w = await world(0);
    const routes: [string, string, Record<string, number>][] = [
      ['POST', '/checkpoints', {}],
      ['POST', '/tree-heads', {}],
      ['GET', '/checkpoints', {}],
      ['GET', '/tree-heads', {}],
      ['GET', '/proofs/inclusion', { seq: 0, tree_size: 1 }],
      ['GET', '/proofs/consistency', { first: 1, second: 1 }],
      ['GET', '/entries', {}],
    ];
    for (const [m, p, q] of routes) expect((await w.call(m as 'GET', p, q)).statusCode, `${m} ${p}`).toBe(404);
    chain.append(w.projectId, 2);
    const other = await t.call({ method: 'POST', url: `/api/v1/receipt-chains/payments/checkpoints?project_id=${w.projectId}`, key: w.key });
    expect(other.statusCode).toBe(404);
    const second = await secondOrganization(t);
    const foreign = await t.call({ method: 'POST', url: `/api/v1/receipt-chains/actions/checkpoints?project_id=${w.projectId}`, key: second.ownerKey });
    expect(foreign.statusCode).toBe(404);
    const cp = (await w.call('POST', '/checkpoints')).json();
    expect((await t.call({ method: 'GET', url: `/api/v1/receipt-chains/actions/checkpoints/${cp.id}?project_id=${w.projectId}`, key: second.ownerKey })).statusCode).toBe(404);
    // The id of a checkpoint is not the id of a tree head.
    expect((await w.call('GET', `/tree-heads/${cp.id}`)).statusCode).toBe(404);
  });

  it('"nothing signed is client-supplied": a body naming anything is 400 and nothing is signed; the scope is agents:read', async () => {
    const w = await world(2);
    for (const payload of [{ seq: 0 }, { entry_sha256: 'x' }, { signature: 'x' }, { signing_key_id: 'k' }, [1], 'x']) {
      const r = await w.call('POST', '/checkpoints', {}, { payload: JSON.stringify(payload), headers: { 'content-type': 'application/json' } });
      expect(r.statusCode, JSON.stringify(payload)).toBe(400);
      expect(r.json().error).toBe('invalid_request');
    }
    expect((await w.call('GET', '/checkpoints')).json().checkpoints).toEqual([]);
    const { key } = await projectWithKey(t, ['traces:read'], 'no-agents');
    const r = await t.call({ method: 'POST', url: `/api/v1/receipt-chains/actions/checkpoints?project_id=${w.projectId}`, key });
    expect(r.statusCode).toBe(403);
  });
});

describe('signed tree heads and proofs', () => {
  it('a tree head signs the RFC 6962 root over every entry; each inclusion proof verifies offline against it', async () => {
    const w = await world(13);
    const r = await w.call('POST', '/tree-heads');
    expect(r.statusCode, r.body).toBe(201);
    const th = r.json();
    const members = JSON.parse(th.canonical_form);
    expect(Object.keys(members)).toEqual(['chain_id', 'generated_at', 'root_sha256', 'schema', 'scope', 'signature_alg', 'signing_key_id', 'tree_size']);
    expect(members).toMatchObject({ schema: 'svc.receipt-tree-head.v1', tree_size: 13, chain_id: 'actions' });
    expect(verifyArtifactSignature(th.canonical_form, th.tree_head_sha256, th.signature, TREE_HEAD.domain, signer.jwks()).ok).toBe(true);
    expect(verifyArtifactSignature(th.canonical_form, th.tree_head_sha256, th.signature, CHECKPOINT.domain, signer.jwks()).ok).toBe(false);
    const exported = await w.exported();
    expect(checkTreeHead(th, exported, signer.jwks()).every((f) => f.ok)).toBe(true);
    for (let seq = 0; seq < 13; seq++) {
      const p = await w.call('GET', '/proofs/inclusion', { seq, tree_size: 13 });
      expect(p.statusCode, p.body).toBe(200);
      expect(p.json().root_sha256).toBe(members.root_sha256);
      const findings = checkInclusion(p.json(), th, signer.jwks(), exported.entries[seq].canonical_form);
      expect(findings.every((f) => f.ok), JSON.stringify(findings)).toBe(true);
    }
    // A proof in a smaller tree does not verify against the bigger tree head.
    const small = (await w.call('GET', '/proofs/inclusion', { seq: 3, tree_size: 7 })).json();
    expect(checkInclusion(small, th, signer.jwks()).some((f) => !f.ok)).toBe(true);
    expect((await w.call('GET', `/tree-heads/${th.id}`)).json()).toEqual(th);
  });

  it('consistency: a kept tree head and a later one verify with the proof; a rewrite in between is detected', async () => {
    const w = await world(6);
    const old = (await w.call('POST', '/tree-heads')).json();
    chain.append(w.projectId, 5);
    const later = (await w.call('POST', '/tree-heads')).json();
    const proof = (await w.call('GET', '/proofs/consistency', { first: 6, second: 11 })).json();
    expect(proof).toMatchObject({ first: 6, second: 11, first_root_sha256: JSON.parse(old.canonical_form).root_sha256 });
    expect(checkConsistency(old, later, proof, signer.jwks()).every((f) => f.ok)).toBe(true);

    // The server cannot be made to sign a rewritten history without it being noticed.
    chain.rewrite(w.projectId, 2);
    const refused = await w.call('POST', '/tree-heads');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().details.reason).toBe('chain_rewritten');
    expect((await w.call('GET', '/proofs/consistency', { first: 6, second: 11 })).statusCode).toBe(409);

    // And a server that does sign the rewritten chain (a fresh cache, as a compromised store would have)
    // gives a tree head no consistency proof links to the kept one.
    const fresh = await testApp({ chainSource: chain, signer });
    try {
      chain.chains.set(fresh.projectId, chain.chains.get(w.projectId)!);
      const head = (await fresh.call({ method: 'POST', url: `/api/v1/receipt-chains/actions/tree-heads?project_id=${fresh.projectId}`, key: fresh.ownerKey })).json();
      const p = (await fresh.call({ method: 'GET', url: `/api/v1/receipt-chains/actions/proofs/consistency?project_id=${fresh.projectId}&first=6&second=11`, key: fresh.ownerKey })).json();
      const findings = checkConsistency(old, head, p, signer.jwks());
      expect(findings.find((f) => f.check === 'consistency')).toMatchObject({ ok: false, fault: 'inconsistent' });
      // The exported (rewritten) chain fails the kept tree head too.
      const entries = (await fresh.call({ method: 'GET', url: `/api/v1/receipt-chains/actions/entries?project_id=${fresh.projectId}`, key: fresh.ownerKey })).json().entries;
      expect(checkTreeHead(old, { chain_id: 'actions', entries }, signer.jwks()).at(-1)).toMatchObject({ ok: false, fault: 'chain_rewritten' });
    } finally {
      await fresh.close();
    }
  });

  it('truncation: a kept checkpoint or tree head fails against a shortened export; the server refuses to sign a chain shorter than it saw', async () => {
    const w = await world(10);
    const cp = (await w.call('POST', '/checkpoints')).json();
    const th = (await w.call('POST', '/tree-heads')).json();
    const full = await w.exported();
    expect(verifyChainEntries(full.entries)).toMatchObject({ valid: true, entry_count: 10 });
    expect(checkCheckpoint(cp, full, signer.jwks()).every((f) => f.ok)).toBe(true);
    chain.chains.get(w.projectId)!.splice(8);
    const cut = await w.exported();
    // The cut chain still verifies on its own: only a kept artifact shows the cut.
    expect(verifyChainEntries(cut.entries).valid).toBe(true);
    expect(checkCheckpoint(cp, cut, signer.jwks()).at(-1)).toMatchObject({ ok: false, fault: 'chain_truncated' });
    expect(checkTreeHead(th, cut, signer.jwks()).at(-1)).toMatchObject({ ok: false, fault: 'chain_truncated' });
    for (const path of ['/checkpoints', '/tree-heads']) {
      const r = await w.call('POST', path);
      expect(r.statusCode).toBe(409);
      expect(r.json().details).toMatchObject({ reason: 'chain_truncated', entry_count: 8, entries_seen: 10 });
    }
  });

  it('"bad sizes (0, above the chain size, first > second, non-integers) are 400" in our error shape', async () => {
    const w = await world(4);
    const cases: [string, Record<string, string | number>][] = [
      ['/proofs/inclusion', { seq: 0, tree_size: 0 }],
      ['/proofs/inclusion', { seq: 0, tree_size: 5 }],
      ['/proofs/inclusion', { seq: 4, tree_size: 4 }],
      ['/proofs/inclusion', { seq: -1, tree_size: 4 }],
      ['/proofs/inclusion', { seq: 1.5, tree_size: 4 }],
      ['/proofs/inclusion', { seq: 'x', tree_size: 4 }],
      ['/proofs/inclusion', { seq: '', tree_size: 4 }],
      ['/proofs/inclusion', { tree_size: 4 }],
      ['/proofs/inclusion', { seq: 0, tree_size: '99999999999999999999999' }],
      ['/proofs/consistency', { first: 0, second: 2 }],
      ['/proofs/consistency', { first: 3, second: 2 }],
      ['/proofs/consistency', { first: 1, second: 5 }],
      ['/proofs/consistency', { first: 1, second: 2.5 }],
      ['/proofs/consistency', { first: '1e3', second: 2 }],
      ['/proofs/consistency', { first: 1 }],
      ['/entries', { from_seq: 5 }],
      ['/entries', { from_seq: -1 }],
      ['/entries', { limit: 0 }],
      ['/entries', { limit: 1001 }],
      ['/checkpoints', { limit: 0 }],
      ['/checkpoints', { cursor: '!!' }],
      ['/tree-heads', { unknown: 1 }],
    ];
    for (const [path, q] of cases) {
      const r = await w.call('GET', path, q);
      expect(r.statusCode, `${path} ${JSON.stringify(q)} ${r.body}`).toBe(400);
      expect(r.json()).toMatchObject({ error: 'invalid_request', message: expect.any(String) });
    }
    // A repeated parameter is refused, not guessed.
    const rep = await t.call({ method: 'GET', url: `/api/v1/receipt-chains/actions/proofs/inclusion?project_id=${w.projectId}&seq=0&seq=1&tree_size=4`, key: w.key });
    expect(rep.statusCode).toBe(400);
    // The edges that are allowed.
    expect((await w.call('GET', '/proofs/consistency', { first: 4, second: 4 })).json().proof).toEqual([]);
    expect((await w.call('GET', '/entries', { from_seq: 4 })).json()).toMatchObject({ entries: [], next_from_seq: null, entry_count: 4 });
  });

  it('bad input as an attacker writes it: malformed, huge, deeply nested and repeated bodies; concurrent identical requests', async () => {
    const w = await world(3);
    const url = `/api/v1/receipt-chains/actions/checkpoints?project_id=${w.projectId}`;
    let nested: Obj = {};
    for (let i = 0; i < 200; i++) nested = { n: nested };
    const before = (await w.call('GET', '/checkpoints')).json().checkpoints.length;
    const bodies = ['{', '[]', '"x"', '1', JSON.stringify({ seq: 'x'.repeat(100_000) }), JSON.stringify(nested), '{"a":1,"a":2}'];
    for (const payload of bodies) {
      const r = await t.call({ method: 'POST', url, key: w.key, payload, headers: { 'content-type': 'application/json' } });
      expect(r.statusCode, payload.slice(0, 30)).toBeGreaterThanOrEqual(400);
      expect(r.statusCode).toBeLessThan(500);
      expect(r.json().error).toBeDefined();
    }
    const long = await t.call({ method: 'POST', url: `/api/v1/receipt-chains/${'a'.repeat(5000)}/checkpoints?project_id=${w.projectId}`, key: w.key });
    expect(long.statusCode).toBeGreaterThanOrEqual(400);
    expect(long.statusCode).toBeLessThan(500);
    // Concurrent identical requests: each is its own signed tree head of the same root; the leaf cache fills once.
    const rs = await Promise.all(Array.from({ length: 8 }, () => w.call('POST', '/tree-heads')));
    expect(rs.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    expect(new Set(rs.map((r) => JSON.parse(r.json().canonical_form).root_sha256)).size).toBe(1);
    const ps = await Promise.all(Array.from({ length: 8 }, () => w.call('GET', '/proofs/inclusion', { seq: 1, tree_size: 3 })));
    expect(new Set(ps.map((p) => p.body)).size).toBe(1);
    expect((await w.call('GET', '/checkpoints')).json().checkpoints.length).toBe(before);
  });
});

describe('the entry export', () => {
  it('pages entries with their canonical bytes in seq order; the export verifies offline; a tampered entry is found', async () => {
    const w = await world(20);
    const first = (await w.call('GET', '/entries', { limit: 7 })).json();
    expect(first).toMatchObject({ chain_id: 'actions', entry_count: 20, next_from_seq: 7 });
    expect(first.entries.map((e: Obj) => e.seq)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(Object.keys(first.entries[0]).sort()).toEqual(['authority', 'canonical_form', 'entry_sha256', 'prev_entry_sha256', 'seq']);
    const all = await w.exported();
    expect(all.entries).toHaveLength(20);
    expect(verifyChainEntries(all.entries)).toMatchObject({ valid: true, entry_count: 20, last_entry_sha256: all.entries[19].entry_sha256 });
    const tampered = structuredClone(all.entries);
    tampered[11].canonical_form = tampered[11].canonical_form.replace('act-11', 'act-99');
    expect(verifyChainEntries(tampered)).toMatchObject({ valid: false, first_invalid_seq: 11, detail: 'digest_mismatch' });
  });

  it('pages of checkpoints with cursor and limit, newest first, no repeats', async () => {
    const w = await world(2);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await w.call('POST', '/checkpoints')).json().id);
    const seen: string[] = [];
    let cursor = '';
    do {
      const r = (await w.call('GET', '/checkpoints', { limit: 2, ...(cursor ? { cursor } : {}) })).json();
      seen.push(...r.checkpoints.map((c: Obj) => c.id));
      cursor = r.next_cursor ?? '';
    } while (cursor);
    expect(seen).toHaveLength(5);
    expect(new Set(seen)).toEqual(new Set(ids));
  });
});
