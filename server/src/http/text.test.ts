import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../testing/app.js';
import { badTextPath } from './text.js';

describe('text no store can keep as sent', () => {
  it('finds NUL and unpaired surrogates in values and keys at any depth; paired surrogates (emoji) are text', () => {
    expect(badTextPath({ name: 'a\u0000b' })).toBe('body.name');
    expect(badTextPath({ a: [{ b: 'x\ud800' }] })).toBe('body.a[0].b');
    expect(badTextPath({ a: '\udc00x' })).toBe('body.a');
    expect(badTextPath({ ['k\u0000']: 1 })).toBe('body (a key)');
    let deep: unknown = 'ok\u0000';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(badTextPath(deep)).toMatch(/^body(\[0\])+$/);
    expect(badTextPath({ name: 'weather 🌦️ ünïcode', n: 1, b: null, bytes: new Uint8Array([0, 0xd8]) })).toBeUndefined();
  });

  describe.each(['sqlite', 'postgres'] as const)('over HTTP (%s)', (dialect) => {
    let t: TestApp;
    beforeAll(async () => {
      t = await testApp({ dialect });
    });
    afterAll(async () => t.close());

    it('a JSON body with NUL or an unpaired surrogate is 400 naming where, and nothing is created (PostgreSQL answered 500 to NUL)', async () => {
      const before = (await t.call({ method: 'GET', url: '/api/v1/projects?limit=200' })).json().projects.length;
      for (const name of ['a\u0000b', 'a\ud800b', 'b\udfff']) {
        const r = await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name } });
        expect(r.statusCode, JSON.stringify(name)).toBe(400);
        expect(r.json()).toMatchObject({ error: 'invalid_request', message: expect.stringContaining('body.name contains a NUL character or an unpaired UTF-16 surrogate') });
      }
      expect((await t.call({ method: 'GET', url: '/api/v1/projects?limit=200' })).json().projects.length).toBe(before);
      const ok = await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'weather 🌦️' } });
      expect(ok.statusCode).toBe(201);
      expect(ok.json().name).toBe('weather 🌦️');
    });

    it('a query parameter holding %00 is 400', async () => {
      const r = await t.call({ method: 'GET', url: '/api/v1/projects?cursor=a%00b' });
      expect(r.statusCode).toBe(400);
      expect(r.json().message).toContain('NUL');
    });
  });
});
