import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { Context } from '../context.js';
import { useCliTestEnv } from '../testing/cli-test-env.js';


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

const { t, svc } = useCliTestEnv(NOW);

describe('svc receipts, authority-edges', () => {
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

});
