/**
 * Authority edges over HTTP: sightings from AUTHORIZED entries, list (revoked hidden unless asked), revoke
 * (a record, not a delete; repeat keeps the first), and a revoked edge exercised again (docs/receipts.md).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { secondOrganization } from '../../testing/people.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

type Obj = Record<string, any>;

async function world() {
  const { projectId, key, keyId } = await projectWithKey(t, ['ingest:write', 'agents:read', 'agents:write'], 'edges');
  const call = (method: 'GET' | 'POST', url: string, payload?: Obj, k = key) => t.call({ method, url: `/api/v1${url}`, key: k, ...(payload ? { payload } : {}) });
  const authorize = (action: string, over: Obj = {}) =>
    call('POST', '/action-receipts/entries', {
      entries: [{ action_id: action, state: 'RECEIPT_STATE_AUTHORIZED', occurred_at: '2026-09-01T00:00:00Z', effect_class: 'EFFECT_CLASS_EXTERNAL', requester_principal: 'user:ann', tool: 'mail', purpose: 'send-invoices', ...over }],
    });
  const edges = async (query = '') => (await call('GET', `/authority-edges${query}`)).json().authority_edges as Obj[];
  return { projectId, key, keyId, call, authorize, edges };
}

describe('sightings', () => {
  it('"the AUTHORIZED transition also feeds /authority-edges": the first records the edge, each later one (same principal, tool, purpose) counts', async () => {
    const w = await world();
    expect((await w.authorize('a1')).statusCode).toBe(200);
    expect((await w.authorize('a2')).statusCode).toBe(200);
    const [e] = await w.edges();
    expect(e).toMatchObject({ from_principal: 'user:ann', tool: 'mail', purpose: 'send-invoices', source_kind: 'receipt', source_id: 'a1', sighting_count: 2, revoked: false });
    expect(e.last_exercised_at).toBeDefined();
    await w.authorize('a3', { purpose: 'other' });
    await w.call('POST', '/action-receipts/entries', { entries: [{ action_id: 'a4', state: 'RECEIPT_STATE_EXECUTED', occurred_at: '2026-09-01T00:00:00Z', effect_class: 'EFFECT_CLASS_NONE', tool: 'mail', purpose: 'send-invoices', requester_principal: 'user:ann' }] });
    expect((await w.edges()).map((x) => [x.purpose, x.sighting_count]).sort()).toEqual([
      ['other', 1],
      ['send-invoices', 2],
    ]);
  });

  it('an explicit authority_edge_id is exercised whatever the principal; an unknown one refuses the batch naming the index', async () => {
    const w = await world();
    await w.authorize('a1');
    const [e] = await w.edges();
    expect((await w.authorize('a2', { requester_principal: 'svc:bot', tool: undefined, purpose: undefined, authority_edge_id: e.id })).statusCode).toBe(200);
    expect((await w.edges()).map((x) => x.sighting_count)).toEqual([2]);
    const bad = await w.authorize('a3', { authority_edge_id: 'nope' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().details).toEqual({ index: 0, field: 'authority_edge_id' });
    const other = await projectWithKey(t, ['ingest:write'], 'other');
    const foreign = await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', key: other.key, payload: { entries: [{ action_id: 'x', state: 'RECEIPT_STATE_AUTHORIZED', occurred_at: '2026-09-01T00:00:00Z', effect_class: 'EFFECT_CLASS_NONE', authority_edge_id: e.id }] } });
    expect(foreign.statusCode).toBe(400);
  });
});

describe('revoke', () => {
  it('"body {reason} required; actor from credential; not a delete; repeating returns already_revoked: true with the first reason and instant"', async () => {
    const w = await world();
    await w.authorize('a1');
    const [e] = await w.edges();
    const first = await w.call('POST', `/authority-edges/${e.id}/revoke`, { reason: 'contract ended' });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json()).toMatchObject({ id: e.id, revoked: true, already_revoked: false, revocation: { reason: 'contract ended', revoked_by: `api_key:${w.keyId}` } });
    const again = await w.call('POST', `/authority-edges/${e.id}/revoke`, { reason: 'second thoughts' });
    expect(again.json()).toMatchObject({ already_revoked: true, revocation: first.json().revocation });
    expect(await w.edges()).toEqual([]);
    expect((await w.edges('?include_revoked=true')).map((x) => x.id)).toEqual([e.id]);
  });

  it('concurrent revocations: one reason is kept, every answer shows it', async () => {
    const w = await world();
    await w.authorize('a1');
    const [e] = await w.edges();
    const rs = await Promise.all(Array.from({ length: 6 }, (_, i) => w.call('POST', `/authority-edges/${e.id}/revoke`, { reason: `r${i}` })));
    expect(rs.map((r) => r.statusCode)).toEqual(Array(6).fill(200));
    expect(new Set(rs.map((r) => JSON.stringify(r.json().revocation))).size).toBe(1);
    expect(rs.filter((r) => r.json().already_revoked === false)).toHaveLength(1);
  });

  it('"later use does not restore the edge and raises a review signal (records the violation, blocks nothing)": one signal per edge, refreshed on repeat', async () => {
    const w = await world();
    await w.authorize('a1');
    const [e] = await w.edges();
    await w.call('POST', `/authority-edges/${e.id}/revoke`, { reason: 'done' });
    expect((await w.authorize('a2')).statusCode).toBe(200);
    expect((await w.authorize('a3')).statusCode).toBe(200);
    const [after] = await w.edges('?include_revoked=true');
    expect(after).toMatchObject({ id: e.id, revoked: true, sighting_count: 3, revocation: { reason: 'done' } });
    const signals = (await w.call('GET', `/review-signals?project_id=${w.projectId}&kind=REVIEW_SIGNAL_KIND_REVOKED_AUTHORITY_EXERCISED`)).json().review_signals;
    expect(signals).toHaveLength(1);
    expect(signals[0]).toMatchObject({ subject_ref: e.id, evidence_ref: 'a2', status: 'REVIEW_SIGNAL_STATUS_OPEN' });
    expect(signals[0].last_seen_at >= signals[0].opened_at).toBe(true);
  });

  it('refusals: reason missing, empty, blank or too long; actor fields; unknown fields; 404 for another project or organization; needs agents:write', async () => {
    const w = await world();
    await w.authorize('a1');
    const [e] = await w.edges();
    for (const body of [{}, { reason: '' }, { reason: '   ' }, { reason: 'x'.repeat(1025) }, { reason: 'x', revoked_by: 'me' }, { reason: 'x', extra: 1 }, { reason: { deep: [1] } }]) {
      const r = await w.call('POST', `/authority-edges/${e.id}/revoke`, body);
      expect(r.statusCode, JSON.stringify(body)).toBe(400);
      expect(r.json().error).toBe('invalid_request');
    }
    expect((await w.edges()).map((x) => x.revoked)).toEqual([false]);
    const other = await projectWithKey(t, ['agents:write', 'agents:read'], 'other');
    expect((await w.call('POST', `/authority-edges/${e.id}/revoke`, { reason: 'x' }, other.key)).statusCode).toBe(404);
    expect((await t.call({ method: 'POST', url: `/api/v1/authority-edges/${e.id}/revoke?project_id=${other.projectId}`, payload: { reason: 'x' } })).statusCode).toBe(404);
    const org2 = await secondOrganization(t);
    expect((await w.call('POST', `/authority-edges/${e.id}/revoke`, { reason: 'x' }, org2.ownerKey)).statusCode).toBe(404);
    const reader = await projectWithKey(t, ['agents:read'], 'reader');
    expect((await w.call('POST', `/authority-edges/${e.id}/revoke`, { reason: 'x' }, reader.key)).statusCode).toBe(403);
    expect((await w.edges()).map((x) => x.revoked)).toEqual([false]);
  });
});

describe('GET /authority-edges', () => {
  it('from_principal filter, paging newest first, bad values 400', async () => {
    const w = await world();
    for (const [i, who] of ['user:a', 'user:b', 'user:a'].entries()) await w.authorize(`a${i}`, { requester_principal: who, purpose: `p${i}` });
    expect((await w.edges('?from_principal=user:a')).map((x) => x.purpose)).toEqual(['p2', 'p0']);
    const p1 = (await w.call('GET', '/authority-edges?limit=2')).json();
    const p2 = (await w.call('GET', `/authority-edges?limit=2&cursor=${p1.next_cursor}`)).json();
    expect([...p1.authority_edges, ...p2.authority_edges].map((x: Obj) => x.purpose)).toEqual(['p2', 'p1', 'p0']);
    expect(p2.next_cursor).toBeNull();
    for (const bad of ['include_revoked=maybe', 'limit=0', 'limit=201', 'from_principal=', `cursor=${p1.next_cursor}&cursor=x`, 'unknown=1'])
      expect((await w.call('GET', `/authority-edges?${bad}`)).statusCode, bad).toBe(400);
    expect((await w.call('GET', '/authority-edges', undefined, (await projectWithKey(t, ['ingest:write'], 'i')).key)).statusCode).toBe(403);
  });
});
