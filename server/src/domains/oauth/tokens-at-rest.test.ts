/**
 * Defect 8 applied to the authorization server: "Secrets must never be at rest in clear" and "a
 * copy of the database alone does not allow guessing". The library keys access tokens, refresh
 * tokens, codes and registration access tokens by the token itself; they are stored under its
 * keyed hash, without the copy in the payload.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../testing/app.js';
import { connectAgent, tokenRequest, withToken } from '../../testing/oauth.js';
import { addPerson, signIn } from '../../testing/people.js';

describe.each(['sqlite', 'postgres'] as const)('OAuth tokens at rest (%s)', (dialect) => {
  let t: TestApp;

  beforeAll(async () => {
    t = await testApp({ dialect });
  });
  afterAll(async () => t.close());

  const rows = async () => JSON.stringify(await t.db.selectFrom('oauth_payloads').selectAll().execute());

  it('neither the access token nor the refresh token is in the table; both still work', async () => {
    const b = await signIn(t, await addPerson(t, 'member'));
    const { tokens, clientId } = await connectAgent(t, b, { scope: 'metrics:read' });
    const at = await rows();
    expect(at).not.toContain(tokens.access_token);
    expect(at).not.toContain(tokens.refresh_token!);
    expect(at).toContain(t.ctx.keyHash.hash(tokens.access_token));
    expect((await withToken(t, tokens.access_token, { url: '/api/v1/users/me' })).statusCode).toBe(200);
    const refreshed = await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId });
    expect(refreshed.statusCode, refreshed.body).toBe(200);
    expect(await rows()).not.toContain(refreshed.json().refresh_token);
    // Rotation still refuses the used refresh token.
    expect((await tokenRequest(t, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId })).statusCode).toBe(400);
  });

  it('a token stored in clear before (id = the token, jti in the payload) keeps working', async () => {
    const b = await signIn(t, await addPerson(t, 'member'));
    const { tokens } = await connectAgent(t, b, { scope: 'metrics:read' });
    const hashed = t.ctx.keyHash.hash(tokens.access_token);
    const row = await t.db.selectFrom('oauth_payloads').selectAll().where('model', '=', 'AccessToken').where('id', '=', hashed).executeTakeFirstOrThrow();
    const payload = typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload;
    await t.db.deleteFrom('oauth_payloads').where('model', '=', 'AccessToken').where('id', '=', hashed).execute();
    await t.db
      .insertInto('oauth_payloads')
      .values({ ...row, id: tokens.access_token, payload: JSON.stringify({ ...payload, jti: tokens.access_token }) } as never)
      .execute();
    expect((await withToken(t, tokens.access_token, { url: '/api/v1/users/me' })).statusCode).toBe(200);
  });
});
