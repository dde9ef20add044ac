import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stderrJson } from '../testing/fake-api.js';
import { useCliTestEnv } from '../testing/cli-test-env.js';
import { consistencyProof, inclusionPath, leafHash, treeRoot } from '../verify/merkle.js';

const NOW = new Date('2026-06-01T12:00:00.000Z');
const { t, svc } = useCliTestEnv(NOW);

const sha = (s: string) => createHash('sha256').update(s).digest();
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const KID = 'k1';
const JWKS = { keys: [{ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: KID, x: (publicKey.export({ format: 'jwk' }) as { x: string }).x }] };
const CP_DOMAIN = 'svc.receipt-checkpoint.signature.v1';
const TH_DOMAIN = 'svc.receipt-tree-head.signature.v1';

/** Members are given in sorted order with plain ASCII values, so JSON.stringify is their RFC 8785 form. */
function signed(members: Record<string, unknown>, domain: string, digestField: string) {
  const canonical = JSON.stringify(members);
  const digest = sha(canonical);
  const signature = sign(null, Buffer.concat([Buffer.from(domain, 'ascii'), Buffer.of(0), digest]), privateKey).toString('base64url');
  return { id: 'x', ...members, canonical_form: canonical, [digestField]: digest.toString('hex'), signature };
}

function entries(n: number, mark = '') {
  const out: { seq: number; canonical_form: string; entry_sha256: string; prev_entry_sha256: string; authority: string }[] = [];
  for (let seq = 0; seq < n; seq++) {
    const prev = out.at(-1)?.entry_sha256 ?? '';
    const canonical = JSON.stringify({ action_id: `a${seq}${seq === 2 ? mark : ''}`, prev_entry_sha256: prev, seq });
    out.push({ seq, canonical_form: canonical, entry_sha256: sha(canonical).toString('hex'), prev_entry_sha256: prev, authority: 'RECEIPT_AUTHORITY_MEDIATED' });
  }
  return out;
}

const scope = { environment: '', org_id: 'o1', project_id: 'p1' };
const checkpoint = (es: ReturnType<typeof entries>, seq: number) =>
  signed(
    { chain_id: 'actions', entry_sha256: es[seq].entry_sha256, generated_at: '2026-06-01T12:00:00.000000000Z', schema: 'svc.receipt-checkpoint.v1', scope, seq, signature_alg: 'EdDSA', signing_key_id: KID },
    CP_DOMAIN,
    'checkpoint_sha256',
  );
const treeHead = (es: ReturnType<typeof entries>, size: number) =>
  signed(
    {
      chain_id: 'actions',
      generated_at: '2026-06-01T12:00:00.000000000Z',
      root_sha256: treeRoot(es.slice(0, size).map((e) => leafHash(e.canonical_form))).toString('hex'),
      schema: 'svc.receipt-tree-head.v1',
      scope,
      signature_alg: 'EdDSA',
      signing_key_id: KID,
      tree_size: size,
    },
    TH_DOMAIN,
    'tree_head_sha256',
  );

/** Writes JSON files into the test's temp dir; returns their paths. */
function files(named: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(named).map(([name, v]) => {
      const p = join(t.tmp.dir, `${name}.json`);
      writeFileSync(p, JSON.stringify(v));
      return [name, p];
    }),
  );
}

describe('svc receipt-chains', () => {
  it('export pages the entries (from_seq, limit) into one document that verify --file accepts offline', async () => {
    const es = entries(5);
    t.api.on('GET', '/receipt-chains/actions/entries', (req) => {
      const from = Number(req.query.from_seq[0]);
      const to = Math.min(5, from + 3);
      return { body: { chain_id: 'actions', entry_count: 5, entries: es.slice(from, to), next_from_seq: to < 5 ? to : null } };
    });
    const out = join(t.tmp.dir, 'chain.json');
    // The server pages by at most its own maximum; the fake pages by 3.
    const r = await svc(['receipt-chains', 'export', '--out', out, '--project', 'p1']);
    expect(r.code, r.stderr).toBe(0);
    expect(t.api.requests.map((q) => q.search)).toEqual(['project_id=p1&from_seq=0&limit=1000', 'project_id=p1&from_seq=3&limit=1000']);
    const doc = JSON.parse(readFileSync(out, 'utf8'));
    expect(doc).toMatchObject({ schema: 'svc.receipt-chain-export.v1', chain_id: 'actions', project_id: 'p1' });
    expect(doc.entries).toEqual(es);
    const v = await svc(['receipt-chains', 'verify', '--file', out]);
    expect(v.code, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ valid: true, chain: { valid: true, entry_count: 5, last_entry_sha256: es[4].entry_sha256 } });
    expect(t.api.requests).toHaveLength(2);
  });

  it('verify --file with kept checkpoints and tree heads and --keys: every check holds with no server', async () => {
    const es = entries(9);
    const f = files({ chain: { chain_id: 'actions', entries: es }, cp: checkpoint(es, 8), th: treeHead(es, 9), th5: treeHead(es, 5), keys: JWKS });
    const r = await svc(['receipt-chains', 'verify', '--file', f.chain, '--keys', f.keys, '--checkpoint', f.cp, '--tree-head', f.th, '--tree-head', f.th5]);
    expect(r.code, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.valid).toBe(true);
    expect(out.findings.map((x: { check: string }) => x.check)).toEqual([
      'chain',
      `checkpoint ${f.cp} signature`,
      `checkpoint ${f.cp}`,
      `tree head ${f.th} signature`,
      `tree head ${f.th}`,
      `tree head ${f.th5} signature`,
      `tree head ${f.th5}`,
    ]);
    expect(t.api.requests).toEqual([]);
  });

  it('"a checkpoint the customer retained defends against chain truncation": a shorter chain fails with exit 1; so does a rewrite', async () => {
    const es = entries(9);
    const f = files({ cut: { chain_id: 'actions', entries: es.slice(0, 7) }, rewritten: { chain_id: 'actions', entries: entries(9, 'x') }, cp: checkpoint(es, 8), th: treeHead(es, 6), keys: JWKS });
    const cut = await svc(['receipt-chains', 'verify', '--file', f.cut, '--keys', f.keys, '--checkpoint', f.cp]);
    expect(cut.code).toBe(1);
    expect(JSON.parse(cut.stdout).findings.at(-1)).toMatchObject({ ok: false, fault: 'chain_truncated' });
    expect(stderrJson(cut)).toMatchObject({ error: 'verification_failed', exit_code: 1, details: { fault: 'chain_truncated' } });
    // The rewritten chain is internally consistent: only the kept artifacts show the rewrite.
    const rw = await svc(['receipt-chains', 'verify', '--file', f.rewritten, '--keys', f.keys, '--checkpoint', f.cp, '--tree-head', f.th]);
    expect(rw.code).toBe(1);
    const findings = JSON.parse(rw.stdout).findings;
    expect(findings[0]).toMatchObject({ check: 'chain', ok: true });
    expect(findings.filter((x: { ok: boolean }) => !x.ok).map((x: { fault: string }) => x.fault)).toEqual(['chain_rewritten', 'chain_rewritten']);
  });

  it('tampering fails: one byte of an entry, of the canonical form, digest, signature or kid, or the other domain', async () => {
    const es = entries(4);
    const cp = checkpoint(es, 3);
    const badEntry = structuredClone(es);
    badEntry[1].canonical_form = badEntry[1].canonical_form.replace('a1', 'b1');
    const sig = Buffer.from(cp.signature, 'base64url');
    sig[0] ^= 1;
    const otherDomain = signed(JSON.parse(cp.canonical_form), TH_DOMAIN, 'checkpoint_sha256');
    const otherKid = signed({ ...JSON.parse(cp.canonical_form), signing_key_id: 'k2' }, CP_DOMAIN, 'checkpoint_sha256');
    const f = files({
      chain: { chain_id: 'actions', entries: es },
      badEntry: { chain_id: 'actions', entries: badEntry },
      canon: { ...cp, canonical_form: cp.canonical_form.replace('"seq":3', '"seq":2') },
      digest: { ...cp, checkpoint_sha256: sha('x').toString('hex') },
      sig: { ...cp, signature: sig.toString('base64url') },
      kid: otherKid,
      domain: otherDomain,
      keys: JWKS,
    });
    const entry = await svc(['receipt-chains', 'verify', '--file', f.badEntry]);
    expect(entry.code).toBe(1);
    expect(JSON.parse(entry.stdout).chain).toMatchObject({ valid: false, first_invalid_seq: 1, detail: 'digest_mismatch' });
    const want: Record<string, string> = { canon: 'digest_mismatch', digest: 'digest_mismatch', sig: 'signature_invalid', kid: 'unknown_key', domain: 'signature_invalid' };
    for (const [name, fault] of Object.entries(want)) {
      const r = await svc(['receipt-chains', 'verify', '--file', f.chain, '--keys', f.keys, '--checkpoint', f[name]]);
      expect(r.code, name).toBe(1);
      expect(stderrJson(r).details, name).toEqual({ fault });
    }
  });

  it('prove consistency: a kept tree head and a newer one (or one signed now) check offline against the server proof; a rewrite is inconsistent', async () => {
    const es = entries(11);
    const older = treeHead(es, 6);
    const newer = treeHead(es, 11);
    const proof = { chain_id: 'actions', first: 6, second: 11, proof: consistencyProof(6, es.map((e) => leafHash(e.canonical_form))).map((h) => h.toString('hex')) };
    t.api.on('GET', '/receipt-chains/actions/proofs/consistency', { body: proof });
    t.api.on('POST', '/receipt-chains/actions/tree-heads', { status: 201, body: newer });
    const f = files({ older, newer, rewritten: treeHead(entries(11, 'x'), 11), keys: JWKS });
    const r = await svc(['receipt-chains', 'prove', 'consistency', '--older', f.older, '--newer', f.newer, '--keys', f.keys, '--project', 'p1']);
    expect(r.code, r.stderr).toBe(0);
    expect(t.api.requests[0]).toMatchObject({ method: 'GET', path: '/api/v1/receipt-chains/actions/proofs/consistency', search: 'project_id=p1&first=6&second=11' });
    const now = await svc(['receipt-chains', 'prove', 'consistency', '--older', f.older, '--keys', f.keys, '--project', 'p1']);
    expect(now.code, now.stderr).toBe(0);
    expect(t.api.requests.map((q) => q.method)).toEqual(['GET', 'POST', 'GET']);
    const bad = await svc(['receipt-chains', 'prove', 'consistency', '--older', f.older, '--newer', f.rewritten, '--keys', f.keys, '--project', 'p1']);
    expect(bad.code).toBe(1);
    expect(stderrJson(bad).details).toEqual({ fault: 'inconsistent' });
    // A newer tree smaller than the kept one: truncated, without asking for a proof.
    const small = files({ small: treeHead(es, 4) });
    const cut = await svc(['receipt-chains', 'prove', 'consistency', '--older', f.older, '--newer', small.small, '--project', 'p1']);
    expect(cut.code).toBe(1);
    expect(stderrJson(cut).details).toEqual({ fault: 'chain_truncated' });
  });

  it('prove inclusion against a kept tree head (its size by default); a proof for another root fails', async () => {
    const es = entries(7);
    const hashes = es.map((e) => leafHash(e.canonical_form));
    const proof = { chain_id: 'actions', seq: 4, tree_size: 7, entry_sha256: es[4].entry_sha256, leaf_hash: hashes[4].toString('hex'), audit_path: inclusionPath(4, hashes).map((h) => h.toString('hex')), root_sha256: treeRoot(hashes).toString('hex') };
    t.api.on('GET', '/receipt-chains/actions/proofs/inclusion', { body: proof });
    const f = files({ th: treeHead(es, 7), other: treeHead(entries(7, 'x'), 7), keys: JWKS });
    const r = await svc(['receipt-chains', 'prove', 'inclusion', '--seq', '4', '--tree-head', f.th, '--keys', f.keys, '--project', 'p1']);
    expect(r.code, r.stderr).toBe(0);
    expect(t.api.requests[0].search).toBe('project_id=p1&seq=4&tree_size=7');
    const bad = await svc(['receipt-chains', 'prove', 'inclusion', '--seq', '4', '--tree-head', f.other, '--project', 'p1']);
    expect(bad.code).toBe(1);
    expect(stderrJson(bad).details).toEqual({ fault: 'not_included' });
  });

  it('checkpoint and tree-head post to the active project (no body) and --out keeps the artifact', async () => {
    const es = entries(3);
    t.api.on('POST', '/receipt-chains/actions/checkpoints', { status: 201, body: checkpoint(es, 2) });
    t.api.on('POST', '/receipt-chains/actions/tree-heads', { status: 201, body: treeHead(es, 3) });
    const out = join(t.tmp.dir, 'kept.json');
    expect((await svc(['receipt-chains', 'checkpoint', '--out', out, '--project', 'p1'])).code).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(checkpoint(es, 2));
    expect((await svc(['receipt-chains', 'tree-head', '--project', 'p1'])).code).toBe(0);
    expect(t.api.requests.map((q) => [q.method, q.path, q.search, q.rawBody])).toEqual([
      ['POST', '/api/v1/receipt-chains/actions/checkpoints', 'project_id=p1', ''],
      ['POST', '/api/v1/receipt-chains/actions/tree-heads', 'project_id=p1', ''],
    ]);
  });

  it('verify without --file asks the server; an invalid chain exits 1', async () => {
    t.api.on('GET', '/receipt-chains/actions/verify', {
      body: { valid: false, entry_count: 3, mediated_entry_count: 3, reported_entry_count: 0, first_invalid_seq: 1, last_entry_sha256: 'x', detail: 'broken_link' },
    });
    const r = await svc(['receipt-chains', 'verify', '--project', 'p1']);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stdout)).toMatchObject({ valid: false, detail: 'broken_link' });
  });

  it('usage errors exit 2 and send nothing', async () => {
    const f = files({ notjson: 'x', nokeys: { foo: 1 }, chain: { chain_id: 'actions', entries: [] } });
    writeFileSync(f.notjson, '{');
    const cases = [
      ['receipt-chains', 'verify', '--checkpoint', f.chain, '--project', 'p1'],
      ['receipt-chains', 'verify', '--file', join(t.tmp.dir, 'missing.json')],
      ['receipt-chains', 'verify', '--file', f.notjson],
      ['receipt-chains', 'verify', '--file', f.nokeys],
      ['receipt-chains', 'verify', '--file', f.chain, '--keys', f.nokeys],
      ['receipt-chains', 'prove', 'inclusion', '--seq', '1', '--project', 'p1'],
      ['receipt-chains', 'prove', 'inclusion', '--seq', '-1', '--tree-size', '2', '--project', 'p1'],
      ['receipt-chains', 'prove', 'inclusion', '--seq', '1', '--tree-size', '0', '--project', 'p1'],
      ['receipt-chains', 'prove', 'consistency', '--project', 'p1'],
      ['receipt-chains', 'checkpoint'],
    ];
    for (const args of cases) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
    }
    expect(t.api.requests).toEqual([]);
  });
});
