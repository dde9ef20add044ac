/**
 * "Lifts issued at the same moment are safe", on both control-store engines: concurrent lifts (and
 * approvals) of overlapping containments leave every key in the right state. SQLite serializes writers;
 * PostgreSQL runs the moves on separate connections, where only the state-conditional updates decide.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTraces, span, traceId, traceRequest } from '../../ingest/otlp/traces-fixtures.js';
import { testApp, type TestApp } from '../../testing/app.js';
import { addPerson, signIn } from '../../testing/people.js';

describe.each(['sqlite', 'postgres'] as const)('containment races on %s', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ dialect });
  });
  afterAll(async () => t?.close());

  it('overlapping containments lifted at once, twice each: one lift of each wins, a key still held by another stays frozen, the others are released', async () => {
    const project = (await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'race' } })).json().id as string;
    const mint = async (who: { email: string; password: string }, scopes: string[]) => {
      const b = await signIn(t, who);
      const r = await b.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'k', scopes, project_id: project } });
      expect(r.statusCode, r.body).toBe(201);
      return r.json() as { key: string; id: string };
    };
    const bobPerson = await addPerson(t, 'admin');
    const alice = await mint(await addPerson(t, 'admin'), ['quarantine:request', 'quarantine:approve']);
    const bob = await mint(bobPerson, ['quarantine:request', 'quarantine:approve']);
    const agents = [];
    for (let i = 0; i < 4; i++) agents.push(await mint(bobPerson, ['ingest:write']));
    const send = (key: string) =>
      postTraces(t, traceRequest({ 'service.name': 'svc' }, [span({ traceId: traceId(), attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'shared' } })]), { key });
    for (const a of agents.slice(0, 3)) {
      const r = await send(a.key);
      expect(r.statusCode, r.body).toBe(200);
    }
    const call = (key: string, url: string, payload?: object) => t.call({ method: 'POST', url: `/api/v1${url}`, key, ...(payload ? { payload } : {}) });
    // q0 holds every agent of `svc/shared` (agents 0-2); q1..q4 hold one key each (agents 0-3).
    const targets = [{ observation_key: 'svc/shared' }, ...agents.map((a) => ({ api_key_id: a.id }))];
    const qs: string[] = [];
    for (const target of targets) qs.push((await call(alice.key, `/quarantines?project_id=${project}`, { ...target, reason: 'race' })).json().id);
    const approvals = await Promise.all([...qs, ...qs].map((id) => call(bob.key, `/quarantines/${id}/approve`)));
    expect(approvals.filter((r) => r.statusCode === 200)).toHaveLength(qs.length);
    expect(approvals.filter((r) => r.statusCode === 400)).toHaveLength(qs.length);
    for (const a of agents) expect((await send(a.key)).statusCode).toBe(401);

    // Lift q0 (the shared one), q1 (agent 0) and q4 (agent 3) at once, each twice; q2 and q3 stay.
    const lifted = [qs[0]!, qs[1]!, qs[4]!];
    const lifts = await Promise.all([...lifted, ...lifted].map((id) => call(bob.key, `/quarantines/${id}/lift`, { reason: 'race' })));
    expect(lifts.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 400, 400, 400]);
    // Agent 0: its two containments lifted; agents 1 and 2: still held by q2, q3; agent 3: released.
    expect(await Promise.all(agents.map(async (a) => (await send(a.key)).statusCode))).toEqual([200, 401, 401, 200]);
  });
});
