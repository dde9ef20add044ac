/**
 * Discovery, review signals (spec 2 "Review signal", "States and transitions / Review signal"), the
 * notification outbox and the attribution reads ("Attribution entry").
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { insertSightings, us } from '../../testing/agent-fixtures.js';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { DEFAULT_REVIEW_WINDOW_DAYS, SEVERITY_OF } from './signals.js';
import { SIGNAL_KINDS } from './store.js';

const clock = fixedClock('2026-03-10T00:00:00.000Z');
const DAY = 86_400_000;
let t: TestApp;
beforeAll(async () => {
  t = await testApp({ clock });
});
afterAll(async () => t.close());

async function project() {
  const p = await projectWithKey(t, ['agents:read', 'agents:write']);
  const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: object) =>
    t.call({ method, url: `/api/v1${url}`, key: p.key, ...(payload ? { payload } : {}) });
  const signals = async (q = '') => {
    const res = await call('GET', `/review-signals${q ? `?${q}` : ''}`);
    if (res.statusCode !== 200) throw new Error(res.body);
    return res.json().review_signals as Record<string, string>[];
  };
  const outbox = async () => (await call('GET', '/notification-outbox')).json().notifications as Record<string, string>[];
  const sight = (observationKey: string, lastSeen = '2026-03-09T00:00:00Z', apiKeyId = 'key-1') =>
    insertSightings(t, p.projectId, [
      { observationKey, source: 'api_key', apiKeyId, firstSeenUs: us('2026-03-01T00:00:00Z'), lastSeenUs: us(lastSeen), sightingCount: 2 },
    ]);
  return { ...p, call, signals, outbox, sight };
}

const REVIEW = { approval_state: 'APPROVAL_STATE_APPROVED', risk_tier: 'RISK_TIER_LOW', reason: 'ok' };

describe('discovery and SHADOW_ASSET', () => {
  it('"every observation key sighted maps to an asset"; "a discovered agent nobody declared raises SHADOW_ASSET"; a declared key raises nothing', async () => {
    const p = await project();
    await p.call('POST', '/assets', { name: 'declared', observation_keys: ['known'] });
    await p.sight('known');
    await p.sight('ghost');
    const created = await t.ctx.assets.discoverAssets(p.projectId);
    expect(created.map((a) => a.name)).toEqual(['ghost']);
    const assets = (await p.call('GET', '/assets')).json().assets;
    expect(assets.map((a: { name: string; shadow: boolean }) => `${a.name}:${a.shadow}`).sort()).toEqual(['declared:false', 'ghost:true']);
    const ghost = assets.find((a: { name: string }) => a.name === 'ghost');
    expect(ghost).toMatchObject({ origin: 'discovered', observation_keys: ['ghost'], created_by: null, approval_state: 'APPROVAL_STATE_UNREVIEWED' });
    const s = await p.signals();
    expect(s).toHaveLength(1);
    expect(s[0]).toMatchObject({
      kind: 'REVIEW_SIGNAL_KIND_SHADOW_ASSET',
      status: 'REVIEW_SIGNAL_STATUS_OPEN',
      severity: 'REVIEW_SIGNAL_SEVERITY_HIGH',
      subject_ref: 'ghost',
      detail_code: 'undeclared_observation_key',
      asset_id: ghost.id,
    });
    expect((await p.call('GET', `/assets/${ghost.id}/versions`)).json().versions[0]).toMatchObject({ change: 'discovered', actor: 'system' });
  });

  it('discovery is idempotent and safe to run concurrently: one asset, one signal, one notification', async () => {
    const p = await project();
    await p.sight('racer');
    await Promise.all([t.ctx.assets.discoverAssets(p.projectId), t.ctx.assets.discoverAssets(p.projectId), t.ctx.assets.discoverAssets()]);
    await t.ctx.assets.discoverAssets(p.projectId);
    expect((await p.call('GET', '/assets')).json().assets).toHaveLength(1);
    expect(await p.signals()).toHaveLength(1);
    expect(await p.outbox()).toHaveLength(1);
  });

  it('a declaration of a discovered key adopts the shadow asset: declared, shadow false, same id and history; the shadow signal waits for a review', async () => {
    const p = await project();
    await p.sight('early');
    await t.ctx.assets.discoverAssets(p.projectId);
    const [ghost] = (await p.call('GET', '/assets')).json().assets;
    const r = await p.call('POST', '/assets', { name: 'late', description: 'the billing agent', observation_keys: ['early', 'early-v2'] });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({
      id: ghost.id,
      name: 'late',
      description: 'the billing agent',
      origin: 'declared',
      shadow: false,
      observation_keys: ['early', 'early-v2'],
      created_by: `api_key:${p.keyId}`,
      created_at: ghost.created_at,
      version: 2,
    });
    const all = (await p.call('GET', '/assets')).json().assets;
    expect(all.map((a: { id: string }) => a.id)).toEqual([ghost.id]);
    expect((await p.call('GET', '/assets?shadow=true')).json().assets).toEqual([]);
    expect((await p.call('GET', `/assets/${ghost.id}/versions`)).json().versions.map((v: { change: string }) => v.change)).toEqual(['discovered', 'declared']);
    // "Auto-clears" lists a review as what clears a shadow signal: a declaration is not a review.
    const [s] = await p.signals();
    expect(s).toMatchObject({ kind: 'REVIEW_SIGNAL_KIND_SHADOW_ASSET', status: 'REVIEW_SIGNAL_STATUS_OPEN', asset_id: ghost.id });
    await p.call('POST', `/assets/${ghost.id}/reviews`, REVIEW);
    expect((await p.signals())[0].status).toBe('REVIEW_SIGNAL_STATUS_RESOLVED');
    // Declared now: declaring its key again is 409, as for any declared key.
    expect((await p.call('POST', '/assets', { name: 'again', observation_keys: ['early'] })).statusCode).toBe(409);
  });

  it('a declaration naming keys of a declared asset, or of two assets, is 409 and changes nothing', async () => {
    const p = await project();
    await p.call('POST', '/assets', { name: 'mine', observation_keys: ['mine'] });
    await p.sight('ghost-a');
    await p.sight('ghost-b');
    await t.ctx.assets.discoverAssets(p.projectId);
    const before = (await p.call('GET', '/assets')).json().assets;
    for (const keys of [['mine'], ['ghost-a', 'mine'], ['ghost-a', 'ghost-b']]) {
      const r = await p.call('POST', '/assets', { name: 'x', observation_keys: [...keys, 'fresh'] });
      expect(r.statusCode, keys.join()).toBe(409);
      expect(r.json().error).toBe('conflict');
    }
    expect((await p.call('GET', '/assets')).json().assets).toEqual(before);
  });

  it('concurrent declarations adopting one shadow asset: one 200, the rest 409, one asset', async () => {
    const p = await project();
    await p.sight('contested');
    await t.ctx.assets.discoverAssets(p.projectId);
    const rs = await Promise.all(Array.from({ length: 6 }, (_, i) => p.call('POST', '/assets', { name: `n${i}`, observation_keys: ['contested'] })));
    expect(rs.map((r) => r.statusCode).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    const all = (await p.call('GET', '/assets')).json().assets;
    expect(all).toHaveLength(1);
    expect(all[0].version).toBe(2);
  });

  it('"Repeated sightings refresh one signal and do not re-notify": last_seen_at moves forward', async () => {
    const p = await project();
    await p.sight('bot', '2026-03-11T00:00:00Z');
    await t.ctx.assets.discoverAssets(p.projectId);
    const [first] = await p.signals();
    expect(first.last_seen_at).toBe('2026-03-11T00:00:00.000Z');
    await p.sight('bot', '2026-03-12T12:00:00Z', 'key-2');
    await t.ctx.assets.discoverAssets(p.projectId);
    const [again] = await p.signals();
    expect(again.id).toBe(first.id);
    expect(again.opened_at).toBe(first.opened_at);
    expect(again.last_seen_at > first.last_seen_at).toBe(true);
    expect(await p.outbox()).toHaveLength(1);
  });

  it('"exact to a minute": ingest sighting a known shadow key again moves its signal\'s last_seen_at forward (at most once per 30 s per process), with no discovery run and no second notification', async () => {
    const p = await project();
    await p.sight('chatty', '2026-03-09T00:00:00Z');
    await t.ctx.assets.discoverAssets(p.projectId);
    const [first] = await p.signals();
    const start = clock.now().getTime();
    try {
      // What ingest calls after committing spans of the key (domains/agent-runs ingest).
      t.ctx.assets.noteSightings(p.projectId, ['chatty']);
      await t.ctx.assets.settled();
      expect((await p.signals())[0].last_seen_at).toBe(first.last_seen_at); // refreshed just now by discovery
      clock.set(new Date(start + 31_000).toISOString());
      t.ctx.assets.noteSightings(p.projectId, ['chatty']);
      await t.ctx.assets.settled();
      const [moved] = await p.signals();
      expect(moved).toMatchObject({ id: first.id, opened_at: first.opened_at, last_seen_at: new Date(start + 31_000).toISOString() });
      clock.set(new Date(start + 40_000).toISOString());
      t.ctx.assets.noteSightings(p.projectId, ['chatty']);
      await t.ctx.assets.settled();
      expect((await p.signals())[0].last_seen_at).toBe(moved.last_seen_at);
      expect(await p.outbox()).toHaveLength(1);
    } finally {
      clock.set(new Date(start).toISOString());
    }
  });

  it('"shadow_asset clears when a review records approval or rejection"; "A resolved signal is never reopened by a later sighting"', async () => {
    const p = await project();
    await p.sight('bot');
    await t.ctx.assets.discoverAssets(p.projectId);
    const [s] = await p.signals();
    await p.call('POST', `/assets/${s.asset_id}/reviews`, { ...REVIEW, approval_state: 'APPROVAL_STATE_REJECTED' });
    const [resolved] = await p.signals();
    expect(resolved).toMatchObject({ id: s.id, status: 'REVIEW_SIGNAL_STATUS_RESOLVED', resolution_code: 'reviewed', resolved_by: `api_key:${p.keyId}` });
    await p.sight('bot', '2026-03-09T23:00:00Z', 'key-3');
    await t.ctx.assets.discoverAssets(p.projectId);
    expect(await p.signals()).toEqual([resolved]);
    expect((await p.outbox()).map((o) => o.event)).toEqual(['opened', 'resolved']);
  });

  it('a review that stays UNREVIEWED does not clear the shadow signal', async () => {
    const p = await project();
    await p.sight('bot');
    await t.ctx.assets.discoverAssets(p.projectId);
    const [s] = await p.signals();
    await p.call('POST', `/assets/${s.asset_id}/reviews`, { approval_state: 'APPROVAL_STATE_UNREVIEWED', risk_tier: 'RISK_TIER_HIGH', reason: 'looking' });
    expect((await p.signals())[0].status).toBe('REVIEW_SIGNAL_STATUS_OPEN');
  });

  it('ingest of spans with a never-seen observation key discovers it right away', async () => {
    const p = await projectWithKey(t, ['agents:read', 'ingest:write']);
    const now = Date.now() * 1_000_000;
    const span = {
      traceId: 'a'.repeat(32),
      spanId: 'b'.repeat(16),
      name: 'invoke_agent triage',
      kind: 1,
      startTimeUnixNano: String(now),
      endTimeUnixNano: String(now + 1_000_000),
      attributes: [
        { key: 'gen_ai.operation.name', value: { stringValue: 'invoke_agent' } },
        { key: 'gen_ai.agent.name', value: { stringValue: 'triage' } },
      ],
    };
    const res = await t.call({
      method: 'POST',
      url: '/v1/traces',
      key: p.key,
      headers: { 'content-type': 'application/json' },
      payload: { resourceSpans: [{ resource: { attributes: [{ key: 'service.name', value: { stringValue: 'svc' } }] }, scopeSpans: [{ spans: [span] }] }] },
    });
    expect(res.statusCode).toBe(200);
    await t.ctx.assets.settled();
    const assets = (await t.call({ method: 'GET', url: '/api/v1/assets', key: p.key })).json().assets;
    expect(assets).toHaveLength(1);
    expect(assets[0]).toMatchObject({ shadow: true });
    expect(assets[0].observation_keys).toHaveLength(1);
  });
});

describe('review window: UNREVIEWED_ASSET and UNOWNED_ASSET', () => {
  it(`default review window is ${DEFAULT_REVIEW_WINDOW_DAYS} days`, () => {
    expect(DEFAULT_REVIEW_WINDOW_DAYS).toBe(7);
    expect(t.ctx.signals.reviewWindowDays).toBe(7);
  });

  it('"asset in inventory past the review window with no approval decision" raises UNREVIEWED; "neither owner team nor owner principal" raises UNOWNED; not before the window', async () => {
    clock.set('2026-04-01T00:00:00.000Z');
    const p = await project();
    const a = (await p.call('POST', '/assets', { name: 'x' })).json();
    await t.ctx.signals.sweepReviewWindow(new Date(clock.now().getTime() + 6 * DAY));
    expect(await p.signals()).toEqual([]);
    const r = await t.ctx.signals.sweepReviewWindow(new Date(clock.now().getTime() + 7 * DAY));
    expect(r.opened).toBeGreaterThanOrEqual(2);
    const s = await p.signals();
    expect(s.map((x) => `${x.kind}:${x.severity}:${x.subject_ref}`).sort()).toEqual([
      `REVIEW_SIGNAL_KIND_UNOWNED_ASSET:REVIEW_SIGNAL_SEVERITY_LOW:${a.id}`,
      `REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET:REVIEW_SIGNAL_SEVERITY_MEDIUM:${a.id}`,
    ]);
    // A repeat sweep refreshes last_seen_at and does not re-notify.
    await t.ctx.signals.sweepReviewWindow(new Date(clock.now().getTime() + 8 * DAY));
    const again = await p.signals();
    expect(again.map((x) => x.id).sort()).toEqual(s.map((x) => x.id).sort());
    expect(again.every((x) => x.last_seen_at === new Date(clock.now().getTime() + 8 * DAY).toISOString())).toBe(true);
    expect(await p.outbox()).toHaveLength(2);
  });

  it('"unreviewed_asset clears when a review records approval"; "unowned_asset clears when ownership sets either owner field"; each clear is notified', async () => {
    clock.set('2026-05-01T00:00:00.000Z');
    const p = await project();
    const a = (await p.call('POST', '/assets', { name: 'x' })).json();
    await t.ctx.signals.sweepReviewWindow(new Date(clock.now().getTime() + 8 * DAY));
    await p.call('POST', `/assets/${a.id}/reviews`, REVIEW);
    expect((await p.signals('kind=REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET'))[0]).toMatchObject({ status: 'REVIEW_SIGNAL_STATUS_RESOLVED', resolution_code: 'reviewed' });
    expect((await p.signals('kind=REVIEW_SIGNAL_KIND_UNOWNED_ASSET'))[0].status).toBe('REVIEW_SIGNAL_STATUS_OPEN');
    await p.call('PUT', `/assets/${a.id}/ownership`, { owner_principal: 'user:bob' });
    expect((await p.signals('kind=REVIEW_SIGNAL_KIND_UNOWNED_ASSET'))[0]).toMatchObject({ status: 'REVIEW_SIGNAL_STATUS_RESOLVED', resolution_code: 'owner_set' });
    expect((await p.outbox()).map((o) => `${o.event}:${o.kind}`).sort()).toEqual([
      'opened:REVIEW_SIGNAL_KIND_UNOWNED_ASSET',
      'opened:REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET',
      'resolved:REVIEW_SIGNAL_KIND_UNOWNED_ASSET',
      'resolved:REVIEW_SIGNAL_KIND_UNREVIEWED_ASSET',
    ]);
    // Past the window again, the reviewed and owned asset raises nothing new.
    await t.ctx.signals.sweepReviewWindow(new Date(clock.now().getTime() + 30 * DAY));
    expect(await p.signals('status=REVIEW_SIGNAL_STATUS_OPEN')).toEqual([]);
  });

  it('clearing both owners later opens a new UNOWNED signal at the next sweep (the resolved one stays resolved)', async () => {
    clock.set('2026-06-01T00:00:00.000Z');
    const p = await project();
    const a = (await p.call('POST', '/assets', { name: 'x' })).json();
    await t.ctx.signals.sweepReviewWindow(new Date(clock.now().getTime() + 8 * DAY));
    await p.call('PUT', `/assets/${a.id}/ownership`, { owner_team: 't' });
    await p.call('PUT', `/assets/${a.id}/ownership`, { owner_team: null });
    await t.ctx.signals.sweepReviewWindow(new Date(clock.now().getTime() + 9 * DAY));
    const unowned = await p.signals('kind=REVIEW_SIGNAL_KIND_UNOWNED_ASSET');
    expect(unowned.map((s) => s.status).sort()).toEqual(['REVIEW_SIGNAL_STATUS_OPEN', 'REVIEW_SIGNAL_STATUS_RESOLVED']);
  });
});

describe('GET /review-signals', () => {
  it('"filters status, kind, severity (repeatable or comma-separated; OR within, AND across; unrecognized value rejected), asset_id"', async () => {
    clock.set('2026-07-01T00:00:00.000Z');
    const p = await project();
    const a = (await p.call('POST', '/assets', { name: 'x' })).json();
    const b = (await p.call('POST', '/assets', { name: 'y' })).json();
    await t.ctx.signals.sweepReviewWindow(new Date(clock.now().getTime() + 8 * DAY));
    const kinds = async (q: string) => (await p.signals(q)).map((s) => `${s.kind.replace('REVIEW_SIGNAL_KIND_', '')}:${s.asset_id === a.id ? 'a' : 'b'}`).sort();
    expect(await kinds(`asset_id=${a.id}`)).toEqual(['UNOWNED_ASSET:a', 'UNREVIEWED_ASSET:a']);
    expect(await kinds('kind=REVIEW_SIGNAL_KIND_UNOWNED_ASSET')).toEqual(['UNOWNED_ASSET:a', 'UNOWNED_ASSET:b']);
    expect(await kinds('severity=REVIEW_SIGNAL_SEVERITY_LOW,REVIEW_SIGNAL_SEVERITY_MEDIUM')).toHaveLength(4);
    expect(await kinds('severity=REVIEW_SIGNAL_SEVERITY_LOW&severity=REVIEW_SIGNAL_SEVERITY_HIGH')).toEqual(['UNOWNED_ASSET:a', 'UNOWNED_ASSET:b']);
    expect(await kinds(`kind=REVIEW_SIGNAL_KIND_UNOWNED_ASSET&asset_id=${b.id}`)).toEqual(['UNOWNED_ASSET:b']);
    expect(await kinds('status=REVIEW_SIGNAL_STATUS_RESOLVED')).toEqual([]);
    // Every kind of the enumeration is accepted as a filter, also the ones not raised yet.
    expect(await kinds(`kind=${SIGNAL_KINDS.join(',')}`)).toHaveLength(4);
    for (const k of SIGNAL_KINDS) expect((await p.call('GET', `/review-signals?kind=${k}`)).statusCode).toBe(200);
    for (const bad of ['kind=REVIEW_SIGNAL_KIND_BOGUS', 'status=open', 'severity=HIGH', 'severity=', 'kind=REVIEW_SIGNAL_KIND_SHADOW_ASSET,nope', 'environment=prod', 'limit=201', 'cursor=a&cursor=b']) {
      const res = await p.call('GET', `/review-signals?${bad}`);
      expect(res.statusCode, bad).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
  });

  it('"newest first by last_seen_at"; cursor; "default 100, max 200"', async () => {
    clock.set('2026-08-01T00:00:00.000Z');
    const p = await project();
    for (const [k, seen] of [['k1', '2026-08-20T00:00:00Z'], ['k2', '2026-08-25T00:00:00Z'], ['k3', '2026-08-22T00:00:00Z']]) await p.sight(k, seen);
    await t.ctx.assets.discoverAssets(p.projectId);
    const first = (await p.call('GET', '/review-signals?limit=2')).json();
    expect(first.review_signals.map((s: { subject_ref: string }) => s.subject_ref)).toEqual(['k2', 'k3']);
    const rest = (await p.call('GET', `/review-signals?limit=2&cursor=${first.next_cursor}`)).json();
    expect(rest.review_signals.map((s: { subject_ref: string }) => s.subject_ref)).toEqual(['k1']);
    expect(rest.next_cursor).toBeNull();
    expect((await p.call('GET', '/review-signals?limit=200')).statusCode).toBe(200);
    expect((await p.call('GET', `/review-signals?limit=2&kind=REVIEW_SIGNAL_KIND_SHADOW_ASSET&cursor=${first.next_cursor}`)).statusCode).toBe(400);
  });

  it('severities are fixed per kind, one for every kind of the enumeration', () => {
    expect(Object.keys(SEVERITY_OF).sort()).toEqual([...SIGNAL_KINDS].sort());
  });

  it("another project's signals are not listed and answer 404 by id", async () => {
    const p = await project();
    const q = await project();
    await p.sight('mine');
    await t.ctx.assets.discoverAssets(p.projectId);
    const [s] = await p.signals();
    expect(await q.signals()).toEqual([]);
    expect((await q.call('GET', `/review-signals/${s.id}`)).statusCode).toBe(404);
    expect((await q.call('POST', `/review-signals/${s.id}/dismiss`, { reason: 'x' })).statusCode).toBe(404);
    expect((await p.call('GET', `/review-signals/${s.id}`)).json()).toEqual(s);
  });
});

describe('acknowledge and dismiss', () => {
  it('acknowledge: OPEN -> ACKNOWLEDGED with who and when from the credential; it still auto-clears', async () => {
    const p = await project();
    await p.sight('bot');
    await t.ctx.assets.discoverAssets(p.projectId);
    const [s] = await p.signals();
    const ack = await p.call('POST', `/review-signals/${s.id}/acknowledge`);
    expect(ack.statusCode).toBe(200);
    expect(ack.json()).toMatchObject({ status: 'REVIEW_SIGNAL_STATUS_ACKNOWLEDGED', acknowledged_by: `api_key:${p.keyId}` });
    expect((await p.call('POST', `/review-signals/${s.id}/acknowledge`)).json().status).toBe('REVIEW_SIGNAL_STATUS_ACKNOWLEDGED');
    await p.call('POST', `/assets/${s.asset_id}/reviews`, REVIEW);
    expect((await p.signals())[0].status).toBe('REVIEW_SIGNAL_STATUS_RESOLVED');
    expect((await p.call('POST', `/review-signals/${s.id}/acknowledge`)).statusCode).toBe(400);
  });

  it('dismiss: needs a reason, closes for good, is notified; sending who is 400; a dismissed signal cannot be dismissed again', async () => {
    const p = await project();
    await p.sight('bot');
    await t.ctx.assets.discoverAssets(p.projectId);
    const [s] = await p.signals();
    expect((await p.call('POST', `/review-signals/${s.id}/dismiss`, {})).statusCode).toBe(400);
    expect((await p.call('POST', `/review-signals/${s.id}/dismiss`, { reason: 'x', dismissed_by: 'me' })).statusCode).toBe(400);
    const res = await p.call('POST', `/review-signals/${s.id}/dismiss`, { reason: 'test agent' });
    expect(res.json()).toMatchObject({ status: 'REVIEW_SIGNAL_STATUS_DISMISSED', resolved_by: `api_key:${p.keyId}`, resolution_code: 'dismissed', resolution_reason: 'test agent' });
    expect((await p.call('POST', `/review-signals/${s.id}/dismiss`, { reason: 'again' })).statusCode).toBe(400);
    await p.sight('bot', '2026-03-09T22:00:00Z', 'key-9');
    await t.ctx.assets.discoverAssets(p.projectId);
    expect((await p.signals())[0].status).toBe('REVIEW_SIGNAL_STATUS_DISMISSED');
    expect((await p.outbox()).map((o) => o.event)).toEqual(['opened', 'dismissed']);
  });

  it('concurrent identical acknowledges answer one acknowledgement; concurrent dismissals close it once (one 200, the rest 400) and notify once; bad bodies are 4xx', async () => {
    const p = await project();
    await p.sight('bot');
    await t.ctx.assets.discoverAssets(p.projectId);
    const [s] = await p.signals();
    const acks = await Promise.all(Array.from({ length: 5 }, () => p.call('POST', `/review-signals/${s.id}/acknowledge`)));
    expect(acks.map((r) => r.statusCode)).toEqual(Array(5).fill(200));
    expect(new Set(acks.map((r) => r.json().acknowledged_at)).size).toBe(1);
    for (const body of ['not json', '[]', JSON.stringify({ reason: 'x'.repeat(1025) }), JSON.stringify({ reason: { nested: { deep: 1 } } }), JSON.stringify({ reason: ['a', 'b'] })]) {
      const r = await t.call({ method: 'POST', url: `/api/v1/review-signals/${s.id}/dismiss`, key: p.key, payload: body, headers: { 'content-type': 'application/json' } });
      expect(r.statusCode, body.slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(r.statusCode, body.slice(0, 40)).toBeLessThan(500);
      expect(r.json()).toHaveProperty('error');
    }
    const dismissals = await Promise.all(Array.from({ length: 5 }, () => p.call('POST', `/review-signals/${s.id}/dismiss`, { reason: 'noise' })));
    expect(dismissals.map((r) => r.statusCode).sort()).toEqual([200, 400, 400, 400, 400]);
    expect((await p.outbox()).map((o) => o.event)).toEqual(['opened', 'dismissed']);
  });

  it('acknowledge and dismiss need agents:write', async () => {
    const p = await project();
    const reader = await projectWithKey(t, ['agents:read']);
    const as = (url: string, payload?: object) => t.call({ method: 'POST', url: `/api/v1${url}`, key: reader.key, ...(payload ? { payload } : {}) });
    expect((await as('/review-signals/x/acknowledge')).statusCode).toBe(403);
    expect((await as('/review-signals/x/dismiss', { reason: 'r' })).statusCode).toBe(403);
    void p;
  });
});

describe('notification outbox', () => {
  it('"Every open and clear is written to a notification outbox in the same transaction": an outbox failure rolls the change back', async () => {
    const p = await project();
    await p.sight('bot');
    await t.ctx.assets.discoverAssets(p.projectId);
    const [s] = await p.signals();
    const { KyselyOutboxStore } = await import('../../storage/control/signals-store.js');
    const spy = vi.spyOn(KyselyOutboxStore.prototype, 'append').mockRejectedValueOnce(new Error('disk full'));
    const res = await p.call('POST', `/assets/${s.asset_id}/reviews`, REVIEW);
    spy.mockRestore();
    expect(res.statusCode).toBe(500);
    expect((await p.signals())[0].status).toBe('REVIEW_SIGNAL_STATUS_OPEN');
    expect((await p.call('GET', `/assets/${s.asset_id}`)).json().approval_state).toBe('APPROVAL_STATE_UNREVIEWED');
    await p.call('POST', `/assets/${s.asset_id}/reviews`, REVIEW);
    const entries = await p.outbox();
    expect(entries.map((o) => o.event)).toEqual(['opened', 'resolved']);
    expect(entries[1]).toMatchObject({ source: 'review_signals', signal_id: s.id, kind: 'REVIEW_SIGNAL_KIND_SHADOW_ASSET', delivered_at: null });
    expect(entries[1].signal).toMatchObject({ status: 'REVIEW_SIGNAL_STATUS_RESOLVED' });
  });
});

describe('attribution', () => {
  it('GET /assets/attribution: each observation key "maps to its current asset" with credentials[] (source, api_key_id, first/last seen, sighting count)', async () => {
    const p = await project();
    const a = (await p.call('POST', '/assets', { name: 'x', observation_keys: ['bot'] })).json();
    await insertSightings(t, p.projectId, [
      { observationKey: 'bot', source: 'api_key', apiKeyId: 'key-1', firstSeenUs: us('2026-03-01T00:00:00Z'), lastSeenUs: us('2026-03-02T00:00:00Z'), sightingCount: 5 },
      { observationKey: 'bot', source: 'bearer_token', firstSeenUs: us('2026-03-02T00:00:00Z'), lastSeenUs: us('2026-03-03T00:00:00Z'), sightingCount: 1 },
    ]);
    const res = await p.call('GET', '/assets/attribution?observation_key=bot&observation_key=never');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      availability: 'answered',
      mappings: [
        {
          observation_key: 'bot',
          asset_id: a.id,
          credentials: [
            { source: 'api_key', api_key_id: 'key-1', first_seen: '2026-03-01T00:00:00.000000Z', last_seen: '2026-03-02T00:00:00.000000Z', sighting_count: 5 },
            { source: 'bearer_token', first_seen: '2026-03-02T00:00:00.000000Z', last_seen: '2026-03-03T00:00:00.000000Z', sighting_count: 1 },
          ],
          first_seen: '2026-03-01T00:00:00.000000Z',
          last_seen: '2026-03-03T00:00:00.000000Z',
          sighting_count: 6,
        },
        // "An empty credentials list means nothing was recorded": an answered empty match.
        { observation_key: 'never', asset_id: null, credentials: [], sighting_count: 0 },
      ],
    });
    const byAsset = (await p.call('GET', `/assets/${a.id}/attribution`)).json();
    expect(byAsset).toMatchObject({ asset_id: a.id, availability: 'answered', mappings: [{ observation_key: 'bot', sighting_count: 6 }] });
  });

  it('"availability separates an unanswerable lookup from an answered empty match": an unreadable telemetry store is unavailable, never an empty list', async () => {
    const p = await project();
    const a = (await p.call('POST', '/assets', { name: 'x', observation_keys: ['bot'] })).json();
    const spy = vi.spyOn(t.ctx.telemetry.agentRuns, 'sightings').mockRejectedValue(new Error('telemetry down'));
    try {
      const res = await p.call('GET', '/assets/attribution?observation_key=bot');
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ availability: 'unavailable', unavailable_reason: 'telemetry_unreadable', mappings: [{ observation_key: 'bot', asset_id: a.id }] });
      const byAsset = (await p.call('GET', `/assets/${a.id}/attribution`)).json();
      expect(byAsset.availability).toBe('unavailable');
      expect(byAsset.mappings[0]).not.toHaveProperty('credentials');
    } finally {
      spy.mockRestore();
    }
  });

  it('attribution: observation_key is required, repeated (not comma-split), at most 100', async () => {
    const p = await project();
    expect((await p.call('GET', '/assets/attribution')).statusCode).toBe(400);
    const many = Array.from({ length: 101 }, (_, i) => `observation_key=k${i}`).join('&');
    expect((await p.call('GET', `/assets/attribution?${many}`)).statusCode).toBe(400);
    const comma = (await p.call('GET', '/assets/attribution?observation_key=a,b')).json();
    expect(comma.mappings.map((m: { observation_key: string }) => m.observation_key)).toEqual(['a,b']);
  });
});
