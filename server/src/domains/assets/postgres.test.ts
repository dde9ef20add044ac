/** The asset writes that race, through HTTP on PostgreSQL (the SQLite runs are in assets.test.ts). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ dialect: 'postgres' });
});
afterAll(async () => t.close());

describe('assets on PostgreSQL', () => {
  it('concurrent writes to one asset all land, each as its own version', async () => {
    const p = await projectWithKey(t, ['agents:read', 'agents:write']);
    const a = (await t.call({ method: 'POST', url: '/api/v1/assets', key: p.key, payload: { name: 'x' } })).json();
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => t.call({ method: 'PUT', url: `/api/v1/assets/${a.id}/ownership`, key: p.key, payload: { owner_team: `team-${i}` } })),
    );
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    const versions = (await t.call({ method: 'GET', url: `/api/v1/assets/${a.id}/versions`, key: p.key })).json().versions;
    expect(versions.map((v: { version: number }) => v.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('concurrent identical declarations of one key: one 201, the rest 409', async () => {
    const p = await projectWithKey(t, ['agents:read', 'agents:write']);
    const results = await Promise.all(
      Array.from({ length: 5 }, () => t.call({ method: 'POST', url: '/api/v1/assets', key: p.key, payload: { name: 'dup', observation_keys: ['same'] } })),
    );
    expect(results.map((r) => r.statusCode).sort()).toEqual([201, 409, 409, 409, 409]);
  });
});
