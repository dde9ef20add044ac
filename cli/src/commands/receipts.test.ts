import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { Context } from '../context.js';
import { useCliTestEnv } from '../testing/cli-test-env.js';
import { addChainVerify, type ChainVerification } from './receipts.js';

const NOW = new Date('2026-09-01T12:00:00.000Z');
const R = {
  action_id: 'a1',
  project_id: 'p1',
  chain_id: 'actions',
  authority: 'RECEIPT_AUTHORITY_REPORTED',
  final_state: 'RECEIPT_STATE_EXECUTED',
  remediation: '',
  requester_principal: 'user:ann',
  conflicting_requester_principals: [],
  effect_class: 'EFFECT_CLASS_EXTERNAL',
  destructive: false,
  approver_principal: '',
  policy_id: '',
  policy_version: '',
  conflicting_policies: [],
  malformed_policy_records: [],
  normalizer_version: 1,
  occurred_at: '2026-09-01T10:00:00.000000000Z',
  entry_count: 2,
};
const E = { id: 'e1', project_id: 'p1', from_principal: 'user:ann', tool: 'mail', purpose: 'send', source_kind: 'receipt', source_id: 'a1', created_at: NOW.toISOString(), sighting_count: 2, revoked: false };
const VALID: ChainVerification = { valid: true, entry_count: 3, mediated_entry_count: 1, reported_entry_count: 2, first_invalid_seq: null, last_entry_sha256: 'ab', detail: '' };

const { t, svc } = useCliTestEnv(NOW);

describe('svc receipts, authority-edges, receipt-chains', () => {
  it('receipts list and get send the filters and the active project; JSON is the answer', async () => {
    t.api.on('GET', '/action-receipts', { status: 200, body: { action_receipts: [R], next_cursor: null } });
    t.api.on('GET', '/action-receipts/a1', { status: 200, body: { ...R, entries: [] } });
    const list = await svc(['receipts', 'list', '--final-state', 'RECEIPT_STATE_EXECUTED,RECEIPT_STATE_DENIED', '--authority', 'RECEIPT_AUTHORITY_REPORTED', '--normalizer-version', '1', '--run', 'r1', '--project', 'p1']);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).action_receipts).toEqual([R]);
    expect((await svc(['receipts', 'get', 'a1', '--project', 'p1'])).code).toBe(0);
    expect(t.api.requests.map((r) => `${r.method} ${r.path}?${r.search}`)).toEqual([
      'GET /api/v1/action-receipts?project_id=p1&authority=RECEIPT_AUTHORITY_REPORTED&final_state=RECEIPT_STATE_EXECUTED%2CRECEIPT_STATE_DENIED&normalizer_versions=1&run_id=r1',
      'GET /api/v1/action-receipts/a1?project_id=p1',
    ]);
  });

  it('receipts report posts the file\'s entries (array or {entries}) with the project and request id; bad files are usage errors and send nothing', async () => {
    t.api.on('POST', '/action-receipts/entries', { status: 200, body: { project_id: 'p1', accepted: 1, duplicates: 0, entries: [{ index: 0, action_id: 'a1', seq: 1, chain_seq: 0, entry_sha256: 'x', duplicate: false }] } });
    const dir = t.tmp.dir;
    const file = join(dir, 'entries.json');
    const entries = [{ action_id: 'a1', state: 'RECEIPT_STATE_INTENDED', occurred_at: NOW.toISOString(), effect_class: 'EFFECT_CLASS_NONE' }];
    writeFileSync(file, JSON.stringify(entries));
    const r = await svc(['receipts', 'report', '--file', file, '--request-id', 'rq1', '--project', 'p1']);
    expect(r.code, r.stderr).toBe(0);
    expect(t.api.requests[0].body).toEqual({ project_id: 'p1', entries, request_id: 'rq1' });
    for (const content of ['not json', '[]', '{"x":1}', JSON.stringify(Array(101).fill(entries[0]))]) {
      writeFileSync(file, content);
      expect((await svc(['receipts', 'report', '--file', file, '--project', 'p1'])).code, content.slice(0, 20)).toBe(2);
    }
    expect((await svc(['receipts', 'report', '--file', join(dir, 'missing.json'), '--project', 'p1'])).code).toBe(2);
    expect(t.api.requests).toHaveLength(1);
  });

  it('authority-edges list and revoke (revoke needs --yes and a reason)', async () => {
    t.api.on('GET', '/authority-edges', { status: 200, body: { authority_edges: [E], next_cursor: null } });
    t.api.on('POST', '/authority-edges/e1/revoke', { status: 200, body: { ...E, revoked: true, already_revoked: false, revocation: { reason: 'done', revoked_by: 'api_key:k', revoked_at: NOW.toISOString() } } });
    expect((await svc(['authority-edges', 'revoke', 'e1', '--reason', 'done'])).code).toBe(2);
    expect((await svc(['authority-edges', 'revoke', 'e1', '--yes'])).code).toBe(2);
    expect(t.api.requests).toEqual([]);
    expect((await svc(['authority-edges', 'list', '--from', 'user:ann', '--include-revoked', '--project', 'p1'])).code).toBe(0);
    const rv = await svc(['authority-edges', 'revoke', 'e1', '--reason', 'done', '--yes', '--project', 'p1']);
    expect(rv.code, rv.stderr).toBe(0);
    expect(t.api.requests.map((r) => `${r.method} ${r.path}?${r.search}`)).toEqual([
      'GET /api/v1/authority-edges?project_id=p1&from_principal=user%3Aann&include_revoked=true',
      'POST /api/v1/authority-edges/e1/revoke?project_id=p1',
    ]);
    expect(t.api.requests[1].body).toEqual({ reason: 'done' });
  });

  it('receipt-chains verify asks the server (default chain actions); an invalid chain exits 1 after printing; a missing chain exits 5', async () => {
    t.api.on('GET', '/receipt-chains/actions/verify', { status: 200, body: VALID });
    const ok = await svc(['receipt-chains', 'verify', '--project', 'p1']);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual(VALID);
    t.api.on('GET', '/receipt-chains/actions/verify', { status: 200, body: { ...VALID, valid: false, first_invalid_seq: 1, detail: 'digest_mismatch' } });
    const bad = await svc(['receipt-chains', 'verify', 'actions', '--project', 'p1']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout).detail).toBe('digest_mismatch');
    expect(bad.stderr).toContain('digest_mismatch');
    t.api.on('GET', '/receipt-chains/none/verify', { status: 404, body: { error: 'not_found', message: 'receipt chain not found' } });
    expect((await svc(['receipt-chains', 'verify', 'none', '--project', 'p1'])).code).toBe(5);
    // Without an offline verifier in this build, --file is a usage error and nothing is sent.
    const before = t.api.requests.length;
    expect((await svc(['receipt-chains', 'verify', '--file', 'chain.json', '--project', 'p1'])).code).toBe(2);
    expect(t.api.requests).toHaveLength(before);
  });

  it('the offline seam: addChainVerify hands --file and the chain id to the offline verifier and asks no server', async () => {
    const seen: string[] = [];
    const out: string[] = [];
    const io = { env: {}, stdout: { write: (s: string) => void out.push(s), isTTY: false }, stderr: { write: () => {}, isTTY: false } };
    const program = new Command().exitOverride();
    const ctx = new Context(io as never, program);
    ctx.output.set('json');
    addChainVerify(program.command('receipt-chains'), ctx, async (file, chainId) => {
      seen.push(`${file} ${chainId}`);
      return VALID;
    });
    await program.parseAsync(['receipt-chains', 'verify', 'actions', '--file', 'export.json'], { from: 'user' });
    expect(seen).toEqual(['export.json actions']);
    expect(JSON.parse(out.join(''))).toEqual(VALID);
  });
});
