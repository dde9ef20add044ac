/** Agent identities: the attribution read (spec 2 "Attribution entry"; docs/agent-model.md "Agent identity"). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertSightings, us } from '../../testing/agent-fixtures.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

async function project(scopes = ['agents:read']) {
  const p = await projectWithKey(t, scopes);
  const get = (url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key: p.key });
  return { ...p, get };
}

const D = (day: number) => us(`2026-03-0${day}T00:00:00.000Z`);

async function seed(projectId: string) {
  await insertSightings(t, projectId, [
    { observationKey: 'svc/bot', source: 'api_key', apiKeyId: 'key-2', firstSeenUs: D(3), lastSeenUs: D(4), sightingCount: 2 },
    { observationKey: 'svc/bot', source: 'api_key', apiKeyId: 'key-1', firstSeenUs: D(1), lastSeenUs: D(2), sightingCount: 5 },
    { observationKey: 'svc/bot', source: 'bearer_token', firstSeenUs: D(2), lastSeenUs: D(5), sightingCount: 1 },
    { observationKey: 'agent-42', source: 'api_key', apiKeyId: 'key-1', firstSeenUs: D(1), lastSeenUs: D(1), sightingCount: 1 },
    { observationKey: 'zeta', source: 'bearer_token', firstSeenUs: D(1), lastSeenUs: D(1), sightingCount: 3 },
  ]);
}

const BOT = {
  observation_key: 'svc/bot',
  availability: 'answered',
  credentials: [
    { source: 'api_key', api_key_id: 'key-1', first_seen: '2026-03-01T00:00:00.000000Z', last_seen: '2026-03-02T00:00:00.000000Z', sighting_count: 5 },
    { source: 'bearer_token', first_seen: '2026-03-02T00:00:00.000000Z', last_seen: '2026-03-05T00:00:00.000000Z', sighting_count: 1 },
    { source: 'api_key', api_key_id: 'key-2', first_seen: '2026-03-03T00:00:00.000000Z', last_seen: '2026-03-04T00:00:00.000000Z', sighting_count: 2 },
  ],
  first_seen: '2026-03-01T00:00:00.000000Z',
  last_seen: '2026-03-05T00:00:00.000000Z',
  sighting_count: 8,
};

describe('agent identities', () => {
  it('GET /agent-identities/{observationKey}: "credentials[] with source (api_key, bearer_token, dev_org_header), api_key_id (for api_key), first-seen and last-seen times, and a sighting count"', async () => {
    const p = await project();
    await seed(p.projectId);
    const res = await p.get(`/agent-identities/${encodeURIComponent('svc/bot')}`);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual(BOT);
  });

  it('a key never seen is 404 by path', async () => {
    const p = await project();
    await seed(p.projectId);
    expect((await p.get('/agent-identities/never')).statusCode).toBe(404);
  });

  it('GET /agent-identities lists the project\'s identities in key order, with a cursor', async () => {
    const p = await project();
    await seed(p.projectId);
    const first = (await p.get('/agent-identities?limit=2')).json();
    expect(first.identities.map((i: { observation_key: string }) => i.observation_key)).toEqual(['agent-42', 'svc/bot']);
    expect(first.identities[1]).toEqual(BOT);
    const next = (await p.get(`/agent-identities?limit=2&cursor=${first.next_cursor}`)).json();
    expect(next).toMatchObject({ next_cursor: null });
    expect(next.identities.map((i: { observation_key: string }) => i.observation_key)).toEqual(['zeta']);
    expect((await p.get('/agent-identities?cursor=&cursor=')).statusCode).toBe(400);
  });

  it('"availability separates an unanswerable lookup from an answered empty match"; "An empty credentials list means nothing was recorded"', async () => {
    const p = await project();
    await seed(p.projectId);
    const res = await p.get('/agent-identities?observation_key=never&observation_key=zeta');
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      identities: [
        { observation_key: 'never', availability: 'answered', credentials: [], sighting_count: 0 },
        {
          observation_key: 'zeta',
          availability: 'answered',
          credentials: [{ source: 'bearer_token', first_seen: '2026-03-01T00:00:00.000000Z', last_seen: '2026-03-01T00:00:00.000000Z', sighting_count: 3 }],
          first_seen: '2026-03-01T00:00:00.000000Z',
          last_seen: '2026-03-01T00:00:00.000000Z',
          sighting_count: 3,
        },
      ],
      next_cursor: null,
    });
    expect((await p.get('/agent-identities?observation_key=zeta&limit=5')).statusCode).toBe(400);
  });

  it("another project's sightings are not this project's", async () => {
    const a = await project();
    const b = await project();
    await seed(b.projectId);
    expect((await a.get('/agent-identities')).json()).toEqual({ identities: [], next_cursor: null });
    expect((await a.get('/agent-identities/zeta')).statusCode).toBe(404);
  });

  it('attribution reads need agents:read', async () => {
    const p = await project(['metrics:read']);
    expect((await p.get('/agent-identities')).statusCode).toBe(403);
    expect((await p.get('/agent-identities/x')).statusCode).toBe(403);
  });
});
