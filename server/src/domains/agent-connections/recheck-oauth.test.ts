/** The re-check hook of running streams (rules 7-8) for an agent's OAuth access token. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialRechecker } from '../../http/recheck.js';
import { testApp, type TestApp } from '../../testing/app.js';
import { connectAgent } from '../../testing/oauth.js';
import { addPerson, signIn } from '../../testing/people.js';

let t: TestApp;
let rechecker: CredentialRechecker;

beforeAll(async () => {
  t = await testApp();
  rechecker = new CredentialRechecker(t.ctx.apiKeys, t.ctx.sessions, t.ctx.members, t.ctx.control, t.ctx.clock, t.ctx.agentConnections);
});
afterAll(async () => t.close());

async function agent(role: 'admin' | 'member', scope: string) {
  const person = await addPerson(t, role);
  const b = await signIn(t, person);
  const { tokens, connectionId } = await connectAgent(t, b, { scope });
  return { person, b, token: tokens.access_token, connectionId, principal: (await t.ctx.agentConnections.authenticate(tokens.access_token))! };
}

describe('re-check of a stream admitted with an OAuth token', () => {
  it('stays ok; revoking the approval ends it as unauthorized', async () => {
    const a = await agent('member', 'metrics:read');
    expect(await rechecker.recheck(a.principal, a.token, ['metrics:read'])).toBe('ok');
    await a.b.call({ method: 'DELETE', url: `/api/v1/account/agent-connections/${a.connectionId}` });
    expect(await rechecker.recheck(a.principal, a.token, ['metrics:read'])).toBe('unauthorized');
  });

  it('a role downgrade that removes an admitted scope ends it as forbidden', async () => {
    const a = await agent('admin', 'metrics:read audit:read');
    await t.call({ method: 'PATCH', url: `/api/v1/members/${a.person.userId}`, payload: { role: 'member' } });
    expect(await rechecker.recheck(a.principal, a.token, ['audit:read'])).toBe('forbidden');
    expect(await rechecker.recheck(a.principal, a.token, ['metrics:read'])).toBe('ok');
  });

  it('a token that no longer resolves under a live approval is routine expiry; after removal it is unauthorized', async () => {
    const a = await agent('member', 'metrics:read');
    expect(await rechecker.recheck(a.principal, 'x'.repeat(43), ['metrics:read'])).toBe('expired');
    await t.call({ method: 'DELETE', url: `/api/v1/members/${a.person.userId}` });
    expect(await rechecker.recheck(a.principal, a.token, ['metrics:read'])).toBe('unauthorized');
  });
});
