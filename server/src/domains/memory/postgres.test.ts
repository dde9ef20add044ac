/** Memory labels through HTTP on PostgreSQL: concurrent writes, the signal episodes and the propagation read (the SQLite runs are in labels.test.ts). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp({ dialect: 'postgres' });
});
afterAll(async () => t.close());

describe('memory labels on PostgreSQL', () => {
  it('"concurrent PUTs both land as distinct revisions"; quarantined opens one signal, trusted resolves it, quarantined again opens a new one', async () => {
    const p = await projectWithKey(t, ['agents:read', 'agents:write']);
    const put = (label: string) => t.call({ method: 'PUT', url: '/api/v1/memory-items/pg-item/label', key: p.key, payload: { label: `MEMORY_TRUST_LABEL_${label}`, reason: 'r' } });
    const results = await Promise.all(Array.from({ length: 8 }, () => put('QUARANTINED')));
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(results.map((r) => r.json().revision).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(results.filter((r) => r.json().review_signal_opened)).toHaveLength(1);
    expect((await put('TRUSTED')).json()).toMatchObject({ revision: 9, review_signal_resolved: true });
    expect((await put('QUARANTINED')).json()).toMatchObject({ revision: 10, review_signal_opened: true });
    const outbox = (await t.call({ method: 'GET', url: '/api/v1/notification-outbox', key: p.key })).json().notifications;
    expect(outbox.map((o: { event: string }) => o.event)).toEqual(['opened', 'resolved', 'opened']);
    const prop = await t.call({ method: 'GET', url: '/api/v1/memory-items/pg-item/propagation', key: p.key });
    expect(prop.statusCode, prop.body).toBe(200);
    expect(prop.json()).toMatchObject({ entries: [], current_label: 'MEMORY_TRUST_LABEL_QUARANTINED', current_label_record: { revision: 10 } });
    const page = (await t.call({ method: 'GET', url: '/api/v1/memory-item-labels?limit=3', key: p.key })).json();
    expect(page.memory_item_labels.map((l: { revision: number }) => l.revision)).toEqual([10, 9, 8]);
    const next = (await t.call({ method: 'GET', url: `/api/v1/memory-item-labels?limit=3&cursor=${encodeURIComponent(page.next_cursor)}`, key: p.key })).json();
    expect(next.memory_item_labels.map((l: { revision: number }) => l.revision)).toEqual([7, 6, 5]);
  });

  it('a NUL character never reaches PostgreSQL: 400, not 5xx', async () => {
    const p = await projectWithKey(t, ['agents:read', 'agents:write']);
    for (const [method, url, payload] of [
      ['PUT', '/api/v1/memory-items/a%00b/label', { label: 'MEMORY_TRUST_LABEL_SUSPECT', reason: 'r' }],
      ['PUT', '/api/v1/memory-items/ok/label', { label: 'MEMORY_TRUST_LABEL_SUSPECT', reason: 'a\u0000b' }],
      ['GET', '/api/v1/memory-items/a%00b/label', undefined],
      ['GET', '/api/v1/memory-items/a%00b/propagation', undefined],
      ['GET', '/api/v1/memory-item-labels?memory_item_key=a%00b', undefined],
    ] as const) {
      const res = await t.call({ method, url, key: p.key, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url} ${res.body}`).toBe(400);
    }
  });
});
