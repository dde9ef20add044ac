/**
 * Action receipts over HTTP: reported ingest (all or nothing, retries, refusals), reads and their filters,
 * the run graph, chain verify, and attacker-style bad input (docs/receipts.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTraces, span, traceId, traceRequest } from '../../ingest/otlp/traces-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, secondOrganization, signIn } from '../../testing/people.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

type Obj = Record<string, any>;
const SCOPES = ['ingest:write', 'agents:read', 'agents:write', 'traces:read'];

async function world() {
  const { projectId, key, keyId } = await projectWithKey(t, SCOPES, 'r');
  const report = (body: Obj, k = key) => t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', key: k, payload: body });
  const get = (url: string, k = key) => t.call({ method: 'GET', url: `/api/v1${url}`, key: k });
  return { projectId, key, keyId, report, get };
}

const entry = (over: Obj = {}): Obj => ({ action_id: 'act-1', state: 'RECEIPT_STATE_INTENDED', occurred_at: '2026-09-01T10:00:00Z', effect_class: 'EFFECT_CLASS_NONE', ...over });
const nothingStored = async (w: Awaited<ReturnType<typeof world>>) => {
  expect((await w.get('/action-receipts')).json().action_receipts).toEqual([]);
  expect((await w.get('/receipt-chains/actions/verify')).statusCode).toBe(404);
};

describe('reported entries: POST /action-receipts/entries', () => {
  it('appends, folds and links: authority forced to REPORTED, reported_by from the credential; GET one has every entry with its own fields', async () => {
    const w = await world();
    const r = await w.report({
      entries: [
        entry({ requester_principal: 'user:ann', policy_id: 'mine', policy_version: '3' }),
        entry({ state: 'RECEIPT_STATE_AUTHORIZED', effect_class: 'EFFECT_CLASS_EXTERNAL', requester_principal: 'svc:other' }),
        entry({ state: 'RECEIPT_STATE_EXECUTED', destructive: true, occurred_at: '2026-09-01T12:00:00.123456789+02:00' }),
      ],
    });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ project_id: w.projectId, accepted: 3, duplicates: 0 });
    expect(r.json().entries.map((e: Obj) => [e.index, e.seq, e.chain_seq, e.duplicate])).toEqual([
      [0, 1, 0, false],
      [1, 2, 1, false],
      [2, 3, 2, false],
    ]);
    const one = (await w.get('/action-receipts/act-1')).json();
    expect(one).toMatchObject({
      action_id: 'act-1',
      chain_id: 'actions',
      authority: 'RECEIPT_AUTHORITY_REPORTED',
      final_state: 'RECEIPT_STATE_EXECUTED',
      remediation: '',
      requester_principal: 'user:ann',
      conflicting_requester_principals: ['user:ann', 'svc:other'],
      effect_class: 'EFFECT_CLASS_EXTERNAL',
      destructive: true,
      approver_principal: '',
      approved_at: '2026-09-01T10:00:00.000000000Z',
      policy_id: 'mine',
      policy_version: '3',
      normalizer_version: 1,
      occurred_at: '2026-09-01T10:00:00.123456789Z',
      entry_count: 3,
    });
    expect(one.entries.map((e: Obj) => [e.seq, e.state, e.authority, e.requester_principal, e.effect_class, e.reported_by])).toEqual([
      [1, 'RECEIPT_STATE_INTENDED', 'RECEIPT_AUTHORITY_REPORTED', 'user:ann', 'EFFECT_CLASS_NONE', `api_key:${w.keyId}`],
      [2, 'RECEIPT_STATE_AUTHORIZED', 'RECEIPT_AUTHORITY_REPORTED', 'svc:other', 'EFFECT_CLASS_EXTERNAL', `api_key:${w.keyId}`],
      [3, 'RECEIPT_STATE_EXECUTED', 'RECEIPT_AUTHORITY_REPORTED', '', 'EFFECT_CLASS_NONE', `api_key:${w.keyId}`],
    ]);
  });

  it('the fold over two batches: "two spellings appear in conflicting_policies" in sequence order, the first pair stands; effect_class and destructive never fall; remediation never moves final_state', async () => {
    const w = await world();
    const first = await w.report({
      entries: [
        entry({ policy_id: 'refunds', policy_version: 'v1', effect_class: 'EFFECT_CLASS_EXTERNAL', destructive: true }),
        entry({ state: 'RECEIPT_STATE_AUTHORIZED', policy_id: 'Refunds', policy_version: 'v1', effect_class: 'EFFECT_CLASS_NONE', destructive: false }),
        entry({ state: 'RECEIPT_STATE_EXECUTED', policy_id: 'refunds', policy_version: 'v1', effect_class: 'EFFECT_CLASS_INTERNAL' }),
      ],
    });
    expect(first.statusCode, first.body).toBe(200);
    const second = await w.report({
      entries: [
        entry({ state: 'RECEIPT_STATE_EFFECT_VERIFIED', policy_id: 'refunds', policy_version: '2', destructive: false }),
        entry({ state: 'RECEIPT_STATE_COMPENSATED', effect_class: 'EFFECT_CLASS_NONE' }),
      ],
    });
    expect(second.statusCode, second.body).toBe(200);
    const r = (await w.get('/action-receipts/act-1')).json();
    expect(r).toMatchObject({
      policy_id: 'refunds',
      policy_version: 'v1',
      conflicting_policies: ['refunds@v1', 'Refunds@v1', 'refunds@2'],
      malformed_policy_records: [],
      effect_class: 'EFFECT_CLASS_EXTERNAL',
      destructive: true,
      final_state: 'RECEIPT_STATE_EFFECT_VERIFIED',
      remediation: 'RECEIPT_STATE_COMPENSATED',
      entry_count: 5,
    });
    // The list answers the same fold.
    expect((await w.get('/action-receipts?action_id=act-1')).json().action_receipts[0]).toMatchObject({ conflicting_policies: r.conflicting_policies, destructive: true });
  });

  it('"an entry with only one of policy_id/policy_version is refused with 400 naming the field": the whole batch, naming the index; nothing stored', async () => {
    const w = await world();
    for (const [half, field] of [[{ policy_id: 'p' }, 'policy_version'], [{ policy_version: 'v1' }, 'policy_id']] as const) {
      const r = await w.report({ entries: [entry(), entry({ state: 'RECEIPT_STATE_EXECUTED' }), entry({ action_id: 'b', ...half })] });
      expect(r.statusCode).toBe(400);
      expect(r.json()).toMatchObject({ error: 'invalid_request', details: { index: 2, field } });
      expect(r.json().message).toContain(`entries[2].${field}`);
    }
    await nothingStored(w);
  });

  it('"rollback/compensation without an executed-type step" is 400; with one earlier in the batch or stored it is accepted, and final_state stays', async () => {
    const w = await world();
    const bad = await w.report({ entries: [entry(), entry({ state: 'RECEIPT_STATE_COMPENSATED' })] });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details).toEqual({ index: 1, field: 'state' });
    await nothingStored(w);
    expect((await w.report({ entries: [entry(), entry({ state: 'RECEIPT_STATE_EFFECT_UNKNOWN' })] })).statusCode).toBe(200);
    expect((await w.report({ entries: [entry({ state: 'RECEIPT_STATE_ROLLED_BACK' })] })).statusCode).toBe(200);
    expect((await w.get('/action-receipts/act-1')).json()).toMatchObject({ final_state: 'RECEIPT_STATE_EFFECT_UNKNOWN', remediation: 'RECEIPT_STATE_ROLLED_BACK' });
  });

  it('"authority never changes within one action": a reported entry on a mediated (containment) action is 400', async () => {
    const { projectId } = await projectWithKey(t, ['agents:read'], 'mediated');
    const mint = async (who: { email: string; password: string }, scopes: string[]) => {
      const r = await (await signIn(t, who)).call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'k', scopes, project_id: projectId } });
      return { key: r.json().key as string, id: r.json().id as string };
    };
    const alice = await mint(await addPerson(t, 'admin'), ['quarantine:request', 'ingest:write', 'agents:read']);
    const bob = await mint(await addPerson(t, 'admin'), ['quarantine:approve', 'ingest:write']);
    const q = (await t.call({ method: 'POST', url: `/api/v1/quarantines?project_id=${projectId}`, key: alice.key, payload: { api_key_id: bob.id, reason: 'x' } })).json();
    expect((await t.call({ method: 'POST', url: `/api/v1/quarantines/${q.id}/approve`, key: alice.key })).statusCode).toBe(403);
    const agentKey = (await projectWithKey(t, ['ingest:write'], 'other')).key; // another project: its own action space
    expect((await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', key: agentKey, payload: { entries: [entry({ action_id: q.id })] } })).statusCode).toBe(200);
    const approver = await mint(await addPerson(t, 'admin'), ['quarantine:approve']);
    expect((await t.call({ method: 'POST', url: `/api/v1/quarantines/${q.id}/approve`, key: approver.key })).statusCode).toBe(200);
    const r = await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', key: alice.key, payload: { entries: [entry({ action_id: q.id, state: 'RECEIPT_STATE_EXECUTED' })] } });
    expect(r.statusCode).toBe(400);
    expect(r.json().details).toEqual({ index: 0, field: 'authority' });
    // "freeze_writes stops a typical SDK key's telemetry": the frozen key cannot report receipts either.
    const frozen = await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', key: bob.key, payload: { entries: [entry()] } });
    expect(frozen.statusCode).toBe(401);
  });

  it('closed enumerations: unknown and *_UNSPECIFIED states and effect classes are 400 naming the index', async () => {
    const w = await world();
    for (const bad of [{ state: 'RECEIPT_STATE_UNSPECIFIED' }, { state: 'DONE' }, { effect_class: 'EFFECT_CLASS_UNSPECIFIED' }, { effect_class: 'EFFECT_CLASS_COSMIC' }]) {
      const r = await w.report({ entries: [entry(), entry(bad)] });
      expect(r.statusCode, JSON.stringify(bad)).toBe(400);
      expect(r.json().message).toContain('entries.1');
    }
    await nothingStored(w);
  });

  it('who acts comes from the credential: authority, reported_by, approver fields are 400 at the top or in an entry; nothing stored', async () => {
    const w = await world();
    for (const field of ['authority', 'reported_by', 'approver_principal', 'recorded_at']) {
      const top = await w.report({ [field]: 'x', entries: [entry()] });
      expect(top.statusCode, field).toBe(400);
      expect(top.json().message).toContain(field);
      const inner = await w.report({ entries: [entry(), entry({ [field]: 'RECEIPT_AUTHORITY_MEDIATED' })] });
      expect(inner.statusCode, field).toBe(400);
      expect(inner.json().details).toEqual({ index: 1, field });
    }
    await nothingStored(w);
  });

  it('bad input as an attacker writes it: huge batch, huge strings, deep nesting, malformed JSON, arrays, bad times and ids are 4xx in our shape; nothing stored', async () => {
    const w = await world();
    const bodies: (Obj | string | unknown[])[] = [
      { entries: Array.from({ length: 101 }, (_, i) => entry({ action_id: `a${i}` })) },
      { entries: [] },
      {},
      { entries: [entry({ action_id: 'x'.repeat(201) })] },
      { entries: [entry({ policy_id: 'p'.repeat(129), policy_version: 'v' })] },
      { entries: [entry({ requester_principal: 'u'.repeat(257) })] },
      { entries: [entry({ tool: { nested: { deeper: [[[[1]]]] } } })] },
      { entries: [entry({ occurred_at: 'yesterday' })] },
      { entries: [entry({ occurred_at: '2026-09-01T10:00:00' })] },
      { entries: [entry({ run_id: 'not-a-run' })] },
      { entries: [entry({ span_id: 'abc' })] },
      { entries: [entry({ authority_edge_id: 'no-such-edge', state: 'RECEIPT_STATE_AUTHORIZED' })] },
      { entries: [entry({ unknown: 1 })] },
      { entries: [entry()], deep: JSON.parse('['.repeat(500) + ']'.repeat(500)) },
      [entry()],
      '{"entries": [',
    ];
    for (const body of bodies) {
      const r = await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', key: w.key, headers: { 'content-type': 'application/json' }, payload: typeof body === 'string' ? body : JSON.stringify(body) });
      expect(r.statusCode, JSON.stringify(body).slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(r.statusCode).toBeLessThan(500);
      expect(Object.keys(r.json()).sort()).toEqual(expect.arrayContaining(['error', 'message']));
    }
    const big = await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', key: w.key, payload: { entries: [entry({ purpose: 'p'.repeat(3_000_000) })] } });
    expect([400, 413]).toContain(big.statusCode);
    await nothingStored(w);
  });

  it('needs ingest:write (403 naming it); an organization credential names the project; another project of a project key is 403', async () => {
    const w = await world();
    const reader = await projectWithKey(t, ['agents:read'], 'reader');
    const r = await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', key: reader.key, payload: { entries: [entry()] } });
    expect(r.statusCode).toBe(403);
    expect(r.json().message).toContain('ingest:write');
    expect((await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', payload: { entries: [entry()] } })).statusCode).toBe(400);
    expect((await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', payload: { project_id: w.projectId, entries: [entry({ action_id: 'owner' })] } })).statusCode).toBe(200);
    expect((await w.report({ project_id: reader.projectId, entries: [entry()] })).statusCode).toBe(403);
  });
});

describe('retries', () => {
  it('"request_id": the same principal gets the first answer (nothing appended again); another principal gets 409 revealing nothing', async () => {
    const w = await world();
    const body = { request_id: `rq-${w.projectId}`, entries: [entry(), entry({ state: 'RECEIPT_STATE_EXECUTED' })] };
    const first = await w.report(body);
    const again = await w.report({ ...body, entries: [entry({ action_id: 'other' })] });
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    expect((await w.get('/receipt-chains/actions/verify')).json().entry_count).toBe(2);
    const stranger = await projectWithKey(t, ['ingest:write'], 'stranger');
    const other = await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', key: stranger.key, payload: body });
    expect(other.statusCode).toBe(409);
    expect(other.body).not.toContain(w.projectId);
  });

  it('concurrent identical requests with one request_id append once and all get the same answer', async () => {
    const w = await world();
    const body = { request_id: `race-${w.projectId}`, entries: [entry(), entry({ action_id: 'b' })] };
    const rs = await Promise.all(Array.from({ length: 8 }, () => w.report(body)));
    expect(rs.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(new Set(rs.map((r) => r.body)).size).toBe(1);
    expect((await w.get('/receipt-chains/actions/verify')).json()).toMatchObject({ valid: true, entry_count: 2 });
  });

  it('"entry_id": the same entry again appends nothing (duplicate: true); other content under the same id is 409 and refuses the batch', async () => {
    const w = await world();
    const first = (await w.report({ entries: [entry({ entry_id: 'e1' })] })).json();
    const again = await w.report({ entries: [entry({ entry_id: 'e1' }), entry({ entry_id: 'e2', state: 'RECEIPT_STATE_EXECUTED' })] });
    expect(again.json()).toMatchObject({ accepted: 1, duplicates: 1 });
    expect(again.json().entries[0]).toMatchObject({ seq: 1, duplicate: true, entry_sha256: first.entries[0].entry_sha256 });
    const changed = await w.report({ entries: [entry({ action_id: 'c' }), entry({ entry_id: 'e1', state: 'RECEIPT_STATE_DENIED' })] });
    expect(changed.statusCode).toBe(409);
    expect((await w.get('/receipt-chains/actions/verify')).json().entry_count).toBe(2);
    expect((await w.report({ entries: [entry({ entry_id: 'e3' }), entry({ entry_id: 'e3' })] })).statusCode).toBe(400);
  });
});

describe('reads: GET /action-receipts', () => {
  async function seeded() {
    const w = await world();
    const run = traceId();
    await w.report({
      entries: [
        entry({ action_id: 'old', occurred_at: '2026-01-01T00:00:00Z', state: 'RECEIPT_STATE_EXECUTED', run_id: run }),
        entry({ action_id: 'mid', occurred_at: '2026-05-01T00:00:00Z', state: 'RECEIPT_STATE_DENIED' }),
        entry({ action_id: 'new', occurred_at: '2026-09-01T00:00:00Z' }),
      ],
    });
    // The chain's newest entry has the oldest client time.
    await w.report({ entries: [entry({ action_id: 'late', occurred_at: '2025-01-01T00:00:00Z' })] });
    return { ...w, run };
  }
  const ids = (r: { json(): Obj }) => r.json().action_receipts.map((x: Obj) => x.action_id);

  it('"ordered by client occurred_at newest first"; cursor paging with limit; a duplicate cursor is 400', async () => {
    const w = await seeded();
    expect(ids(await w.get('/action-receipts'))).toEqual(['new', 'mid', 'old', 'late']);
    const p1 = (await w.get('/action-receipts?limit=3')).json();
    expect(p1.action_receipts.map((x: Obj) => x.action_id)).toEqual(['new', 'mid', 'old']);
    const p2 = (await w.get(`/action-receipts?limit=3&cursor=${p1.next_cursor}`)).json();
    expect([p2.action_receipts.map((x: Obj) => x.action_id), p2.next_cursor]).toEqual([['late'], null]);
    expect((await w.get(`/action-receipts?limit=3&cursor=${p1.next_cursor}&cursor=${p1.next_cursor}`)).statusCode).toBe(400);
    expect((await w.get(`/action-receipts?limit=3&final_state=RECEIPT_STATE_DENIED&cursor=${p1.next_cursor}`)).statusCode).toBe(400);
    expect((await w.get('/action-receipts?limit=201')).statusCode).toBe(400);
  });

  it('filters: authority, final_state (repeatable or comma-separated; unknown and _UNSPECIFIED 400), action_id, run_id', async () => {
    const w = await seeded();
    expect(ids(await w.get('/action-receipts?final_state=RECEIPT_STATE_DENIED,RECEIPT_STATE_EXECUTED'))).toEqual(['mid', 'old']);
    expect(ids(await w.get('/action-receipts?final_state=RECEIPT_STATE_DENIED&final_state=RECEIPT_STATE_INTENDED'))).toEqual(['new', 'mid', 'late']);
    expect(ids(await w.get('/action-receipts?authority=RECEIPT_AUTHORITY_MEDIATED'))).toEqual([]);
    expect(ids(await w.get('/action-receipts?authority=RECEIPT_AUTHORITY_REPORTED&action_id=mid'))).toEqual(['mid']);
    expect(ids(await w.get(`/action-receipts?run_id=${w.run.toUpperCase()}`))).toEqual(['old']);
    for (const bad of ['final_state=DONE', 'final_state=RECEIPT_STATE_UNSPECIFIED', 'authority=RECEIPT_AUTHORITY_UNSPECIFIED', 'run_id=xyz', 'final_state='])
      expect((await w.get(`/action-receipts?${bad}`)).statusCode, bad).toBe(400);
  });

  it('"normalizer_versions (open number; an unseen version gives an empty page, not 400)"; a non-number is 400', async () => {
    const w = await seeded();
    expect(ids(await w.get('/action-receipts?normalizer_versions=1'))).toHaveLength(4);
    expect((await w.get('/action-receipts?normalizer_versions=7&normalizer_versions=9')).json()).toEqual({ action_receipts: [], next_cursor: null });
    expect((await w.get('/action-receipts?normalizer_versions=one')).statusCode).toBe(400);
  });

  it('"chain_id without action_id returns the chain\'s most recent receipt in platform sequence order"; with action_id it narrows', async () => {
    const w = await seeded();
    expect(ids(await w.get('/action-receipts?chain_id=actions'))).toEqual(['late']);
    expect(ids(await w.get('/action-receipts?chain_id=actions&final_state=RECEIPT_STATE_DENIED'))).toEqual(['mid']);
    expect(ids(await w.get('/action-receipts?chain_id=actions&action_id=old'))).toEqual(['old']);
    expect(ids(await w.get('/action-receipts?chain_id=elsewhere'))).toEqual([]);
  });

  it('"An object of another org/project is 404 exactly like a missing one"; reads need agents:read', async () => {
    const w = await seeded();
    const other = await projectWithKey(t, ['agents:read'], 'other');
    expect((await w.get('/action-receipts/old', other.key)).statusCode).toBe(404);
    expect((await w.get('/action-receipts/none')).statusCode).toBe(404);
    expect((await w.get('/action-receipts', other.key)).json().action_receipts).toEqual([]);
    const org2 = await secondOrganization(t);
    expect((await w.get(`/action-receipts/old?project_id=${w.projectId}`, org2.ownerKey)).statusCode).toBe(404);
    const ingestOnly = await projectWithKey(t, ['ingest:write'], 'ingest-only');
    expect((await w.get('/action-receipts', ingestOnly.key)).statusCode).toBe(403);
  });

  it('GET /agent-runs/{runId}/graph "includes action_receipts": the receipts naming the run', async () => {
    const w = await world();
    const run = traceId();
    const sent = await postTraces(t, traceRequest({ 'service.name': 'svc' }, [span({ traceId: run, name: 'invoke_agent a', attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'a' } })]), { key: w.key });
    expect(sent.statusCode).toBe(200);
    await w.report({ entries: [entry({ action_id: 'in-run', run_id: run }), entry({ action_id: 'elsewhere' })] });
    const g = await w.get(`/agent-runs/${run}/graph`);
    expect(g.statusCode, g.body).toBe(200);
    expect(g.json().action_receipts.map((x: Obj) => [x.action_id, x.run_id])).toEqual([['in-run', run]]);
  });
});

describe('GET /receipt-chains/{chainId}/verify', () => {
  it('"a never-opened chain is 404"; then valid with counts whose sum is entry_count and the last digest', async () => {
    const w = await world();
    expect((await w.get('/receipt-chains/actions/verify')).statusCode).toBe(404);
    const r = (await w.report({ entries: [entry(), entry({ state: 'RECEIPT_STATE_EXECUTED' })] })).json();
    const v = await w.get('/receipt-chains/actions/verify');
    expect(v.json()).toEqual({
      valid: true,
      entry_count: 2,
      mediated_entry_count: 0,
      reported_entry_count: 2,
      first_invalid_seq: null,
      last_entry_sha256: r.entries[1].entry_sha256,
      detail: '',
    });
    expect((await w.get('/receipt-chains/other/verify')).statusCode).toBe(404);
    expect((await w.get('/receipt-chains/actions/verify', (await projectWithKey(t, ['agents:read'], 'empty')).key)).statusCode).toBe(404);
  });

  it('a tampered row answers 200 with valid: false and the first invalid position', async () => {
    const w = await world();
    await w.report({ entries: [entry(), entry({ state: 'RECEIPT_STATE_EXECUTED' }), entry({ action_id: 'z' })] });
    await t.db.updateTable('receipt_entries').set({ requester_principal: 'user:mallory' }).where('project_id', '=', w.projectId).where('chain_seq', '=', 1).execute();
    const v = await w.get('/receipt-chains/actions/verify');
    expect(v.statusCode).toBe(200);
    expect(v.json()).toMatchObject({ valid: false, first_invalid_seq: 1, detail: 'content_mismatch', entry_count: 3 });
  });
});
