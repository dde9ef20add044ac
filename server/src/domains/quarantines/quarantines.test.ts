/**
 * Containments (quarantines) through HTTP with two real people: every row of the spec's Quarantine
 * table (request, approve, withdraw, lift, reenforce), its refusals and error codes, and enforcement on
 * the ingest path (a frozen key's telemetry is refused as a revoked key's; reads go on).
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { postTraces, span, traceId, traceRequest } from '../../ingest/otlp/traces-fixtures.js';
import { insertSightings } from '../../testing/agent-fixtures.js';
import { testApp, type TestApp } from '../../testing/app.js';
import { addPerson, secondOrganization, signIn } from '../../testing/people.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

type Obj = Record<string, any>;

/** A project with two people (each with their own keys, minted while signed in) and an agent key that sends telemetry. */
async function world() {
  const p = await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'q' } });
  const projectId: string = p.json().id;
  const mint = async (who: { email: string; password: string }, scopes: string[], name = 'k') => {
    const b = await signIn(t, who);
    const r = await b.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name, scopes, project_id: projectId } });
    expect(r.statusCode, r.body).toBe(201);
    return { key: r.json().key as string, id: r.json().id as string };
  };
  const alice = await addPerson(t, 'admin');
  const bob = await addPerson(t, 'admin');
  const scopes = ['quarantine:request', 'quarantine:approve', 'agents:read', 'agents:write', 'ingest:write', 'traces:read'];
  const a = await mint(alice, scopes, 'alice');
  const a2 = await mint(alice, scopes, 'alice-second');
  const b = await mint(bob, scopes, 'bob');
  const requester = await mint(alice, ['quarantine:request'], 'alice-request-only');
  const agent = await mint(bob, ['ingest:write', 'traces:read'], 'agent');
  const agent2 = await mint(bob, ['ingest:write', 'traces:read'], 'agent-2');
  const call = (key: string, method: 'GET' | 'POST', url: string, payload?: Obj) =>
    t.call({ method, url: `/api/v1${url}`, key, ...(payload !== undefined ? { payload } : {}) });
  /** An agent run of `observationKey` (service/agent) sent with `key`: a sighting of the key. */
  const send = (key: string, agentName = 'weather', service = 'svc') =>
    postTraces(
      t,
      traceRequest({ 'service.name': service }, [span({ traceId: traceId(), name: `invoke_agent ${agentName}`, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': agentName } })]),
      { key },
    );
  const request = (key: string, body: Obj) => call(key, 'POST', `/quarantines?project_id=${projectId}`, body);
  return { projectId, alice, bob, a, a2, b, requester, agent, agent2, call, send, request };
}

describe('request: (none) -> pending', () => {
  it('"POST /quarantines ... pending (HTTP 201)"; "touches no credential"; requester from the credential', async () => {
    const w = await world();
    const r = await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'leaking prompts' });
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json()).toMatchObject({ status: 'pending', action: 'freeze_writes', api_key_id: w.agent.id, reason: 'leaking prompts', credentials: [], requested_by: { user_id: w.alice.userId, api_key_id: w.a.id } });
    expect((await w.send(w.agent.key)).statusCode).toBe(200);
  });

  it('"exactly one target": none or two are 400 naming the accepted targets', async () => {
    const w = await world();
    for (const body of [{ reason: 'x' }, { api_key_id: w.agent.id, observation_key: 'svc/weather', reason: 'x' }]) {
      const r = await w.request(w.a.key, body);
      expect(r.statusCode).toBe(400);
      expect(r.json().message).toMatch(/exactly one target/);
    }
  });

  it('reason is required (and at most 1024 characters); an unknown action is 400; `_UNSPECIFIED` is no action', async () => {
    const w = await world();
    expect((await w.request(w.a.key, { api_key_id: w.agent.id })).statusCode).toBe(400);
    expect((await w.request(w.a.key, { api_key_id: w.agent.id, reason: '' })).statusCode).toBe(400);
    expect((await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x'.repeat(1025) })).statusCode).toBe(400);
    expect((await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x', action: 'explode' })).statusCode).toBe(400);
    expect((await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x', action: 'ACTION_UNSPECIFIED' })).statusCode).toBe(400);
  });

  it('who acts comes from the credential: a body naming the requester or approver is 400, and nothing is created', async () => {
    const w = await world();
    for (const field of ['requested_by', 'approved_by', 'approver_principal', 'user_id', 'status']) {
      const r = await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x', [field]: 'someone' });
      expect(r.statusCode, field).toBe(400);
      expect(r.json().message).toContain(field);
    }
    expect((await w.call(w.a.key, 'GET', `/quarantines?project_id=${w.projectId}`)).json().quarantines).toEqual([]);
  });

  it('"blocks a second containment on the same agent": a second open containment of the target is 409', async () => {
    const w = await world();
    expect((await w.request(w.a.key, { observation_key: 'svc/weather', reason: 'x' })).statusCode).toBe(201);
    const second = await w.request(w.b.key, { observation_key: 'svc/weather', reason: 'y' });
    expect(second.statusCode).toBe(409);
    expect(second.json().error).toBe('conflict');
  });

  it('"blocks a second containment on the same agent": an asset and its observation keys are one agent (409 either way round); a withdrawn one blocks nothing', async () => {
    const w = await world();
    const asset = (await w.call(w.a.key, 'POST', `/assets?project_id=${w.projectId}`, { name: 'Weather bot', observation_keys: ['svc/weather', 'svc/weather-2'] })).json();
    const byAsset = await w.request(w.a.key, { asset_id: asset.id, reason: 'x' });
    expect(byAsset.statusCode, byAsset.body).toBe(201);
    for (const key of ['svc/weather', 'svc/weather-2']) {
      const r = await w.request(w.b.key, { observation_key: key, action: 'kill', reason: 'y' });
      expect(r.statusCode, key).toBe(409);
      expect(r.json().message).toMatch(/this agent/);
    }
    expect((await w.call(w.a.key, 'POST', `/quarantines/${byAsset.json().id}/withdraw`, { reason: 'wrong agent' })).statusCode).toBe(200);
    expect((await w.request(w.b.key, { observation_key: 'svc/weather-2', reason: 'y' })).statusCode).toBe(201);
    expect((await w.request(w.a.key, { asset_id: asset.id, reason: 'x' })).statusCode).toBe(409);
    // Another agent, and a key target, are other containments.
    expect((await w.request(w.a.key, { observation_key: 'svc/other', reason: 'x' })).statusCode).toBe(201);
    expect((await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).statusCode).toBe(201);
  });

  it('"request_id (makes a retry idempotent)": the same person gets the same record; "another principal gets 409 that reveals nothing"', async () => {
    const w = await world();
    const body = { api_key_id: w.agent.id, reason: 'x', request_id: `req-${w.projectId}` };
    const first = await w.request(w.a.key, body);
    const again = await w.request(w.a2.key, body); // the same person with another key
    expect(again.statusCode).toBe(201);
    expect(again.json().id).toBe(first.json().id);
    const other = await w.request(w.b.key, body);
    expect(other.statusCode).toBe(409);
    expect(other.body).not.toContain(first.json().id);
    expect(other.body).not.toContain(w.agent.id);
  });

  it('a request_id sent again by the same person for another project is 409 and shows nothing of the first project', async () => {
    const w = await world();
    const body = { api_key_id: w.agent.id, reason: 'x', request_id: `cross-${w.projectId}` };
    const first = await w.request(w.a.key, body);
    expect(first.statusCode).toBe(201);
    const other = (await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'q-other' } })).json().id as string;
    const b = await signIn(t, w.alice);
    const key = (await b.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'other', scopes: ['quarantine:request'], project_id: other } })).json().key as string;
    const r = await w.call(key, 'POST', `/quarantines?project_id=${other}`, body);
    expect(r.statusCode).toBe(409);
    expect(r.body).not.toContain(first.json().id);
    expect(r.body).not.toContain(w.agent.id);
    expect((await w.call(key, 'GET', `/quarantines?project_id=${other}`)).json().quarantines).toEqual([]);
  });

  it('concurrent identical requests with one request_id create one containment', async () => {
    const w = await world();
    const body = { api_key_id: w.agent.id, reason: 'x', request_id: `race-${w.projectId}` };
    const rs = await Promise.all(Array.from({ length: 8 }, () => w.request(w.a.key, body)));
    expect(rs.map((r) => r.statusCode)).toEqual(Array(8).fill(201));
    expect(new Set(rs.map((r) => r.json().id)).size).toBe(1);
  });

  it('needs quarantine:request (403 naming the scope)', async () => {
    const w = await world();
    const r = await w.request(w.agent.key, { api_key_id: w.agent.id, reason: 'x' });
    expect(r.statusCode).toBe(403);
    expect(r.json().message).toContain('quarantine:request');
  });
});

describe('approve: pending -> active', () => {
  it('"approver differs from requester": the requester is refused, also with a second key of the same person (people are compared, not keys)', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    for (const key of [w.a.key, w.a2.key]) {
      const r = await w.call(key, 'POST', `/quarantines/${q.id}/approve`);
      expect(r.statusCode).toBe(403);
    }
    expect((await w.call(w.a.key, 'GET', `/quarantines/${q.id}`)).json().status).toBe('pending');
  });

  it('freeze_writes: "resolves target to exact credential set and disables it": the key\'s telemetry is refused as a revoked key\'s, its reads go on; another key is untouched', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    const r = await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`);
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'active', approved_by: { user_id: w.bob.userId, api_key_id: w.b.id }, credentials: [{ api_key_id: w.agent.id, effect: 'freeze', enforcement: 'verified' }] });
    const refused = await w.send(w.agent.key);
    expect(refused.statusCode).toBe(401);
    expect(refused.json()).toEqual({ error: 'unauthorized', message: 'authentication required' });
    expect((await w.call(w.agent.key, 'GET', '/traces?since=1h')).statusCode).toBe(200);
    expect((await w.send(w.agent2.key)).statusCode).toBe(200);
  });

  it('an observation key resolves to every key that sent it, and only those', async () => {
    const w = await world();
    for (const k of [w.agent.key, w.agent2.key]) expect((await w.send(k, 'weather')).statusCode).toBe(200);
    expect((await w.send(w.b.key, 'other-agent')).statusCode).toBe(200);
    const q = (await w.request(w.a.key, { observation_key: 'svc/weather', reason: 'x' })).json();
    const r = (await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`)).json();
    expect(r.credentials.map((c: Obj) => c.api_key_id).sort()).toEqual([w.agent.id, w.agent2.id].sort());
    expect(r.unenforceable_sightings).toBe(0);
    expect((await w.send(w.agent.key)).statusCode).toBe(401);
    expect((await w.send(w.agent2.key)).statusCode).toBe(401);
    expect((await w.send(w.b.key, 'other-agent')).statusCode).toBe(200);
  });

  it('sightings no key can be held for (OAuth bearer tokens, the dev header) are counted in unenforceable_sightings; the keys are still reached', async () => {
    const w = await world();
    expect((await w.send(w.agent.key, 'weather')).statusCode).toBe(200);
    const at = Date.parse('2026-03-01T00:00:00Z') * 1000;
    await insertSightings(t, w.projectId, [
      { observationKey: 'svc/weather', source: 'bearer_token', apiKeyId: '', firstSeenUs: at, lastSeenUs: at, sightingCount: 3 },
      { observationKey: 'svc/weather', source: 'dev_org_header', apiKeyId: '', firstSeenUs: at, lastSeenUs: at, sightingCount: 2 },
    ]);
    const q = (await w.request(w.a.key, { observation_key: 'svc/weather', reason: 'x' })).json();
    const r = (await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`)).json();
    expect(r).toMatchObject({ status: 'active', unenforceable_sightings: 5, credentials: [{ api_key_id: w.agent.id, enforcement: 'verified' }] });
  });

  it('an asset resolves through its observation keys; the asset shows the containment while active, and a review does not change that', async () => {
    const w = await world();
    // Declared before its telemetry arrives (else discovery maps the key to a shadow asset first).
    const declared = await w.call(w.a.key, 'POST', `/assets?project_id=${w.projectId}`, { name: 'Weather bot', observation_keys: ['svc/weather'] });
    const asset = declared.json();
    await w.send(w.agent.key, 'weather');
    await w.send(w.agent2.key, 'other');
    const q = (await w.request(w.a.key, { asset_id: asset.id, reason: 'x' })).json();
    const res = await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`);
    expect(res.statusCode, `${declared.body} ${res.body}`).toBe(200);
    const approved = res.json();
    expect(approved.credentials.map((c: Obj) => c.api_key_id)).toEqual([w.agent.id]);
    expect((await w.send(w.agent.key)).statusCode).toBe(401);
    expect((await w.send(w.agent2.key, 'other')).statusCode).toBe(200);
    const reviewed = await w.call(w.b.key, 'POST', `/assets/${asset.id}/reviews?project_id=${w.projectId}`, { approval_state: 'APPROVAL_STATE_APPROVED', risk_tier: 'RISK_TIER_LOW', reason: 'ok' });
    expect(reviewed.json()).toMatchObject({ quarantined: true, quarantine_id: q.id });
    await w.call(w.b.key, 'POST', `/quarantines/${q.id}/lift`, { reason: 'done' });
    expect((await w.call(w.a.key, 'GET', `/assets/${asset.id}?project_id=${w.projectId}`)).json()).toMatchObject({ quarantined: false, quarantine_id: null });
    // An asset of another project is no target: 404 at approval.
    const v = await world();
    const foreign = (await v.request(v.a.key, { asset_id: asset.id, reason: 'x' })).json();
    expect((await v.call(v.b.key, 'POST', `/quarantines/${foreign.id}/approve`)).statusCode).toBe(404);
  });

  it('"writes receipt entries AUTHORIZED then QUARANTINED": a folded mediated receipt under agents:containment_approval@v1, and an authority edge', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x', action: 'revoke_credentials' })).json();
    await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`);
    const r = await w.call(w.a.key, 'GET', `/action-receipts/${q.id}?project_id=${w.projectId}`);
    expect(r.statusCode, r.body).toBe(200);
    const receipt = r.json();
    expect(receipt).toMatchObject({
      authority: 'RECEIPT_AUTHORITY_MEDIATED',
      final_state: 'RECEIPT_STATE_QUARANTINED',
      policy_id: 'agents:containment_approval',
      policy_version: 'v1',
      requester_principal: `user:${w.alice.userId}`,
      approver_principal: `user:${w.bob.userId}`,
      destructive: true,
      effect_class: 'EFFECT_CLASS_INTERNAL',
    });
    expect(receipt.entries.map((e: Obj) => [e.seq, e.state, e.authority, `${e.policy_id}@${e.policy_version}`])).toEqual([
      [1, 'RECEIPT_STATE_AUTHORIZED', 'RECEIPT_AUTHORITY_MEDIATED', 'agents:containment_approval@v1'],
      [2, 'RECEIPT_STATE_QUARANTINED', 'RECEIPT_AUTHORITY_MEDIATED', 'agents:containment_approval@v1'],
    ]);
    const edges = (await w.call(w.a.key, 'GET', `/authority-edges?project_id=${w.projectId}`)).json().authority_edges;
    expect(edges).toEqual([
      expect.objectContaining({ from_principal: `user:${w.bob.userId}`, tool: 'quarantine', purpose: 'containment:revoke_credentials', source_kind: 'quarantine', source_id: q.id }),
    ]);
  });

  it('revoke_credentials and kill: "cannot be undone": the keys are revoked (reads too), and a lift leaves them revoked', async () => {
    const w = await world();
    for (const action of ['revoke_credentials', 'kill'] as const) {
      const victim = action === 'kill' ? w.agent2 : w.agent;
      const q = (await w.request(w.a.key, { api_key_id: victim.id, reason: 'x', action })).json();
      const r = (await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`)).json();
      expect(r.credentials).toEqual([{ api_key_id: victim.id, effect: 'revoke', enforcement: 'verified' }]);
      expect((await w.call(victim.key, 'GET', '/traces?since=1h')).statusCode).toBe(401);
      expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/lift`, { reason: 'fixed' })).statusCode).toBe(200);
      expect((await w.send(victim.key)).statusCode).toBe(401);
    }
  });

  it('"an api_key_id target naming no key in the organization and the containment\'s project gives 404 at approval"; the containment stays pending', async () => {
    const w = await world();
    const other = await secondOrganization(t);
    const foreign = (await t.call({ method: 'POST', url: '/api/v1/account/api-keys', key: other.ownerKey, payload: { name: 'x', scopes: ['ingest:write'], org_wide: true } })).json();
    const otherProject = await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'other' } });
    const elsewhere = (await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'x', scopes: ['ingest:write'], project_id: otherProject.json().id } })).json();
    for (const keyId of ['no-such-key', foreign.id, elsewhere.id]) {
      const q = (await w.request(w.a.key, { api_key_id: keyId, reason: 'x' })).json();
      const r = await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`);
      expect(r.statusCode, keyId).toBe(404);
      expect((await w.call(w.a.key, 'GET', `/quarantines/${q.id}`)).json().status).toBe('pending');
    }
  });

  it('"a key created org_wide belongs to no project and is reachable from any"', async () => {
    const w = await world();
    const orgWide = (await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'ow', scopes: ['ingest:write'], org_wide: true } })).json();
    const q = (await w.request(w.a.key, { api_key_id: orgWide.id, reason: 'x' })).json();
    expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`)).statusCode).toBe(200);
  });

  it('approve needs quarantine:approve; approving twice is 400 (wrong state)', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    expect((await w.call(w.requester.key, 'POST', `/quarantines/${q.id}/approve`)).statusCode).toBe(403);
    expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`)).statusCode).toBe(200);
    const again = await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`);
    expect(again.statusCode).toBe(400);
    expect(again.json().message).toMatch(/active/);
  });

  it('concurrent approvals: one activates, the others are 400, and the credential is reached once', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    const rs = await Promise.all(Array.from({ length: 5 }, () => w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`)));
    expect(rs.map((r) => r.statusCode).sort()).toEqual([200, 400, 400, 400, 400]);
    expect((await t.ctx.control.receipts.entriesOf(w.projectId, [q.id])).length).toBe(2);
  });
});

describe('KILLED_ASSET_CREDENTIAL', () => {
  const signals = async (w: Awaited<ReturnType<typeof world>>, status = 'REVIEW_SIGNAL_STATUS_OPEN') => {
    await t.ctx.assets.settled();
    const r = await w.call(w.a.key, 'GET', `/review-signals?project_id=${w.projectId}&kind=REVIEW_SIGNAL_KIND_KILLED_ASSET_CREDENTIAL&status=${status}`);
    expect(r.statusCode, r.body).toBe(200);
    return r.json().review_signals as Obj[];
  };

  it('"telemetry from an API key resolves to an agent under an active kill containment but the key was outside the approved set": subject the key id, asset the agent, evidence the containment; a repeat refreshes it; the lift clears it', async () => {
    const w = await world();
    expect((await w.send(w.agent.key, 'weather')).statusCode).toBe(200);
    const q = (await w.request(w.a.key, { observation_key: 'svc/weather', reason: 'x', action: 'kill' })).json();
    expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`)).json().credentials.map((c: Obj) => c.api_key_id)).toEqual([w.agent.id]);
    expect(await signals(w)).toEqual([]);
    // A key the approval did not reach sends the killed agent's telemetry (it is not frozen: the kill revoked only the keys it knew).
    expect((await w.send(w.agent2.key, 'weather')).statusCode).toBe(200);
    const [s] = await signals(w);
    const asset = (await w.call(w.a.key, 'GET', `/assets/attribution?project_id=${w.projectId}&observation_key=svc/weather`)).json();
    expect(s).toMatchObject({ kind: 'REVIEW_SIGNAL_KIND_KILLED_ASSET_CREDENTIAL', subject_ref: w.agent2.id, evidence_ref: q.id, asset_id: asset.mappings[0].asset_id, severity: 'REVIEW_SIGNAL_SEVERITY_CRITICAL' });
    expect((await w.send(w.agent2.key, 'weather')).statusCode).toBe(200);
    const again = await signals(w);
    expect(again.map((x) => x.id)).toEqual([s.id]);
    // Other agents' telemetry from that key raises nothing.
    expect((await w.send(w.agent2.key, 'another')).statusCode).toBe(200);
    expect(await signals(w)).toHaveLength(1);
    await w.call(w.b.key, 'POST', `/quarantines/${q.id}/lift`, { reason: 'done' });
    expect(await signals(w)).toEqual([]);
    expect((await signals(w, 'REVIEW_SIGNAL_STATUS_RESOLVED')).map((x) => x.id)).toEqual([s.id]);
  });

  it('"clears on key revocation": at once, when the revocation answers (no sweep ran), resolved as key_revoked; the sweep then finds nothing left', async () => {
    const w = await world();
    expect((await w.send(w.agent.key, 'weather')).statusCode).toBe(200);
    const q = (await w.request(w.a.key, { observation_key: 'svc/weather', reason: 'x', action: 'kill' })).json();
    await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`);
    expect((await w.send(w.agent2.key, 'weather')).statusCode).toBe(200);
    const [open] = await signals(w);
    expect(open).toBeDefined();
    expect((await t.call({ method: 'POST', url: `/api/v1/account/api-keys/${w.agent2.id}/revoke` })).statusCode).toBe(200);
    expect(await signals(w)).toEqual([]);
    const [resolved] = await signals(w, 'REVIEW_SIGNAL_STATUS_RESOLVED');
    expect(resolved).toMatchObject({ id: open.id, resolution_code: 'key_revoked' });
    expect(await t.ctx.quarantines.clearKilledCredentials(t.orgId, w.projectId)).toBe(0);
  });
});

describe('withdraw: pending -> withdrawn', () => {
  it('"own request needs quarantine:request, someone else\'s needs quarantine:approve"; "reaches no credential"', async () => {
    const w = await world();
    const own = (await w.request(w.requester.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    const r = await w.call(w.requester.key, 'POST', `/quarantines/${own.id}/withdraw`, { reason: 'mistake' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'withdrawn', withdraw_reason: 'mistake', withdrawn_by: { user_id: w.alice.userId }, credentials: [] });
    const bobs = (await w.request(w.b.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    const refused = await w.call(w.requester.key, 'POST', `/quarantines/${bobs.id}/withdraw`, { reason: 'no' });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().message).toContain('quarantine:approve');
    expect((await w.call(w.a.key, 'POST', `/quarantines/${bobs.id}/withdraw`, { reason: 'no' })).statusCode).toBe(200);
    expect((await w.send(w.agent.key)).statusCode).toBe(200);
  });

  it('"required reason"; "request_id stays and re-sending it returns the withdrawn record"', async () => {
    const w = await world();
    const body = { api_key_id: w.agent.id, reason: 'x', request_id: `wd-${w.projectId}` };
    const q = (await w.request(w.a.key, body)).json();
    expect((await w.call(w.a.key, 'POST', `/quarantines/${q.id}/withdraw`, {})).statusCode).toBe(400);
    // "withdraw_reason ... at most 1024 characters"
    expect((await w.call(w.a.key, 'POST', `/quarantines/${q.id}/withdraw`, { reason: 'w'.repeat(1025) })).statusCode).toBe(400);
    expect((await w.call(w.a.key, 'POST', `/quarantines/${q.id}/withdraw`, { reason: 'gone' })).statusCode).toBe(200);
    const again = await w.request(w.a.key, body);
    expect(again.json()).toMatchObject({ id: q.id, status: 'withdrawn' });
  });

  it('"Withdraw ... on a quarantine in the wrong state answers 400 (withdraw: anything not pending)"', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`);
    expect((await w.call(w.a.key, 'POST', `/quarantines/${q.id}/withdraw`, { reason: 'late' })).statusCode).toBe(400);
  });
});

describe('lift: active -> lifted', () => {
  it('"restores only what a freeze reduced"; lift_reason, lifted_by; a second lift is 400', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`);
    expect((await w.send(w.agent.key)).statusCode).toBe(401);
    expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/lift`, {})).statusCode).toBe(400);
    expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/lift`, { reason: 'y'.repeat(1025) })).statusCode).toBe(400);
    const r = await w.call(w.a.key, 'POST', `/quarantines/${q.id}/lift`, { reason: 'fixed' });
    expect(r.statusCode, r.body).toBe(200);
    expect(r.json()).toMatchObject({ status: 'lifted', lift_reason: 'fixed', lifted_by: { user_id: w.alice.userId }, credentials: [{ api_key_id: w.agent.id, effect: 'freeze' }] });
    expect(r.json().credentials[0].released_at).toBeDefined();
    expect((await w.send(w.agent.key)).statusCode).toBe(200);
    expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/lift`, { reason: 'again' })).statusCode).toBe(400);
  });

  it('"a credential still covered by another active quarantine is released by the last lift"', async () => {
    const w = await world();
    await w.send(w.agent.key, 'weather');
    const byKey = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    const byAgent = (await w.request(w.a.key, { observation_key: 'svc/weather', reason: 'x' })).json();
    await w.call(w.b.key, 'POST', `/quarantines/${byKey.id}/approve`);
    const second = (await w.call(w.b.key, 'POST', `/quarantines/${byAgent.id}/approve`)).json();
    expect(second.credentials).toEqual([{ api_key_id: w.agent.id, effect: 'freeze', enforcement: 'verified', detail_code: 'held_by_another_quarantine' }]);
    await w.call(w.b.key, 'POST', `/quarantines/${byKey.id}/lift`, { reason: 'one' });
    expect((await w.send(w.agent.key)).statusCode).toBe(401);
    await w.call(w.b.key, 'POST', `/quarantines/${byAgent.id}/lift`, { reason: 'two' });
    expect((await w.send(w.agent.key)).statusCode).toBe(200);
  });

  it('"Lifts issued at the same moment are safe": concurrent lifts of overlapping containments leave every key in the right state', async () => {
    const w = await world();
    await w.send(w.agent.key, 'weather');
    await w.send(w.agent2.key, 'weather');
    const q1 = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    const q2 = (await w.request(w.a.key, { observation_key: 'svc/weather', reason: 'x' })).json();
    const q3 = (await w.request(w.a.key, { api_key_id: w.agent2.id, reason: 'x' })).json();
    for (const q of [q1, q2, q3]) expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`)).statusCode).toBe(200);
    // q1 and q2 lifted at once (each twice): agent is released; agent2 stays held by q3.
    const rs = await Promise.all([q1, q2, q1, q2].map((q) => w.call(w.b.key, 'POST', `/quarantines/${q.id}/lift`, { reason: 'race' })));
    expect(rs.map((r) => r.statusCode).sort()).toEqual([200, 200, 400, 400]);
    expect((await w.send(w.agent.key)).statusCode).toBe(200);
    expect((await w.send(w.agent2.key)).statusCode).toBe(401);
  });

  it('lift needs quarantine:approve; lifting a pending one is 400', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/lift`, { reason: 'x' })).statusCode).toBe(400);
    await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`);
    expect((await w.call(w.requester.key, 'POST', `/quarantines/${q.id}/lift`, { reason: 'x' })).statusCode).toBe(403);
  });
});

describe('reenforce: stays active', () => {
  it('"re-attempts only parts recorded failed; returns retried (0 is success)"; anything not active is 400', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x', action: 'revoke_credentials' })).json();
    expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/reenforce`)).statusCode).toBe(400);
    // The store fails the revocation once: the credential is recorded failed, and reenforce retries it.
    const keys = t.ctx.control.apiKeys;
    const update = keys.update.bind(keys);
    let failures = 1;
    keys.update = async (id, patch) => {
      if (patch.status === 'revoked' && failures-- > 0) throw new Error('disk full');
      return update(id, patch);
    };
    try {
      const approved = (await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`)).json();
      expect(approved.credentials).toEqual([{ api_key_id: w.agent.id, effect: 'revoke', enforcement: 'failed', detail_code: 'store_error' }]);
      expect((await w.send(w.agent.key)).statusCode).toBe(200);
      const r = await w.call(w.b.key, 'POST', `/quarantines/${q.id}/reenforce`);
      expect(r.json()).toMatchObject({ retried: 1, status: 'active', credentials: [{ api_key_id: w.agent.id, enforcement: 'verified' }] });
      expect((await w.send(w.agent.key)).statusCode).toBe(401);
      expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/reenforce`)).json().retried).toBe(0);
    } finally {
      keys.update = update;
    }
  });

  it('a part left `unknown` (the server stopped between the approval and its enforcement) is checked by reenforce: a revocation not carried out is failed and retried; a freeze in place is verified', async () => {
    const w = await world();
    const svc = t.ctx.quarantines as unknown as { enforce: (...a: unknown[]) => Promise<number> };
    const approveStopped = async (body: Obj) => {
      const q = (await w.request(w.a.key, body)).json();
      const spy = vi.spyOn(svc, 'enforce').mockResolvedValueOnce(0);
      try {
        const approved = (await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`)).json();
        expect(approved.credentials.map((c: Obj) => c.enforcement)).toEqual(['unknown']);
      } finally {
        spy.mockRestore();
      }
      return q.id as string;
    };
    const revoke = await approveStopped({ api_key_id: w.agent.id, reason: 'x', action: 'revoke_credentials' });
    expect((await w.send(w.agent.key)).statusCode).toBe(200); // the revocation never happened
    const r = (await w.call(w.b.key, 'POST', `/quarantines/${revoke}/reenforce`)).json();
    expect(r).toMatchObject({ retried: 1, credentials: [{ api_key_id: w.agent.id, effect: 'revoke', enforcement: 'verified' }] });
    expect((await w.send(w.agent.key)).statusCode).toBe(401);

    const freeze = await approveStopped({ api_key_id: w.agent2.id, reason: 'x' });
    expect((await w.send(w.agent2.key)).statusCode).toBe(401); // the hold is written with the approval
    const f = (await w.call(w.b.key, 'POST', `/quarantines/${freeze}/reenforce`)).json();
    expect(f).toMatchObject({ retried: 0, credentials: [{ api_key_id: w.agent2.id, effect: 'freeze', enforcement: 'verified' }] });
  });

  it('"no body": a body naming an actor is 400', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`, { approver_principal: 'me' })).statusCode).toBe(400);
    expect((await w.call(w.b.key, 'POST', `/quarantines/${q.id}/approve`, { extra: 1 })).statusCode).toBe(400);
  });
});

describe('reads, projects and bad input', () => {
  it('GET /quarantines: repeatable status (an unknown value is 400), limit, cursor; GET one', async () => {
    const w = await world();
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push((await w.request(w.a.key, { observation_key: `svc/agent-${i}`, reason: 'x' })).json().id);
    await w.call(w.b.key, 'POST', `/quarantines/${ids[0]}/approve`);
    const list = async (q: string) => (await w.call(w.a.key, 'GET', `/quarantines?project_id=${w.projectId}&${q}`)).json();
    expect((await list('status=active')).quarantines.map((q: Obj) => q.id)).toEqual([ids[0]]);
    expect((await list('status=pending&status=active')).quarantines).toHaveLength(3);
    expect((await list('status=pending,active')).quarantines).toHaveLength(3);
    expect((await w.call(w.a.key, 'GET', `/quarantines?project_id=${w.projectId}&status=frozen`)).statusCode).toBe(400);
    const p1 = await list('limit=2');
    const p2 = await list(`limit=2&cursor=${p1.next_cursor}`);
    expect([...p1.quarantines, ...p2.quarantines].map((q: Obj) => q.id).sort()).toEqual([...ids].sort());
    expect(p2.next_cursor).toBeNull();
    for (const bad of ['limit=0', 'limit=201', 'limit=x', 'cursor=%%%', 'nope=1']) expect((await w.call(w.a.key, 'GET', `/quarantines?project_id=${w.projectId}&${bad}`)).statusCode, bad).toBe(400);
    expect((await w.call(w.a.key, 'GET', `/quarantines/${ids[1]}`)).json().id).toBe(ids[1]);
  });

  it('"GET /quarantines ... either scope": a quarantine:request-only key reads the list and one containment; a key with no containment or agents:read scope is 403', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    expect((await w.call(w.requester.key, 'GET', `/quarantines?project_id=${w.projectId}`)).json().quarantines.map((x: Obj) => x.id)).toEqual([q.id]);
    expect((await w.call(w.requester.key, 'GET', `/quarantines/${q.id}`)).statusCode).toBe(200);
    for (const url of [`/quarantines?project_id=${w.projectId}`, `/quarantines/${q.id}`]) {
      const r = await w.call(w.agent.key, 'GET', url);
      expect(r.statusCode, url).toBe(403);
      expect(r.json().message).toContain('quarantine:approve');
    }
  });

  it('"object owned by another project (same answer)": another project\'s containment is 404 like a missing one, for every move', async () => {
    const w = await world();
    const q = (await w.request(w.a.key, { api_key_id: w.agent.id, reason: 'x' })).json();
    const v = await world();
    const missing = await v.call(v.b.key, 'GET', '/quarantines/does-not-exist');
    for (const [method, path, body] of [
      ['GET', '', undefined],
      ['POST', '/approve', undefined],
      ['POST', '/lift', { reason: 'x' }],
      ['POST', '/withdraw', { reason: 'x' }],
      ['POST', '/reenforce', undefined],
    ] as const) {
      const r = await v.call(v.b.key, method, `/quarantines/${q.id}${path}`, body);
      expect(r.statusCode, path).toBe(404);
      expect(r.json()).toEqual(missing.json());
    }
    const other = await secondOrganization(t);
    expect((await t.call({ method: 'GET', url: `/api/v1/quarantines/${q.id}`, key: other.ownerKey })).statusCode).toBe(404);
  });

  it('bad input as an attacker writes it: malformed JSON, arrays, huge and deeply nested bodies are 4xx in our shape, and nothing is created', async () => {
    const w = await world();
    const url = `/api/v1/quarantines?project_id=${w.projectId}`;
    const bodies = ['{', '[]', '"x"', JSON.stringify({ api_key_id: ['a'], reason: 'x' }), JSON.stringify({ api_key_id: 'k', reason: { a: 1 } }), JSON.stringify({ api_key_id: 'x'.repeat(600), reason: 'x' })];
    let nested: Obj = {};
    for (let i = 0; i < 200; i++) nested = { n: nested };
    bodies.push(JSON.stringify({ api_key_id: 'k', reason: 'x', environment: nested }));
    for (const payload of bodies) {
      const r = await t.call({ method: 'POST', url, key: w.a.key, payload, headers: { 'content-type': 'application/json' } });
      expect(r.statusCode, payload.slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(r.statusCode).toBeLessThan(500);
      expect(r.json().error).toBeDefined();
    }
    expect((await w.call(w.a.key, 'GET', `/quarantines?project_id=${w.projectId}`)).json().quarantines).toEqual([]);
  });
});
