/**
 * Deleting a project makes its governance records unreachable at once: receipts, the receipt chain and
 * its signed artifacts, memory labels and propagation, erasure records, authority edges, manifests and
 * the content policy all answer like a missing project (404), and nothing new can be written there.
 * (The records are kept, not erased: docs/limitations.md.)
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../testing/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t?.close());

type Obj = Record<string, any>;
const newTraceId = () => randomBytes(16).toString('hex');

describe('a deleted project', () => {
  it('answers 404 on every governance read and write, with the organization credential that deleted it', async () => {
    const created = await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'doomed' } });
    expect(created.statusCode, created.body).toBe(201);
    const projectId = created.json().id as string;
    const call = (method: 'GET' | 'POST' | 'PUT', url: string, payload?: Obj) => {
      const sep = url.includes('?') ? '&' : '?';
      return t.call({ method, url: `/api/v1${url}${url.startsWith('/projects/') ? '' : `${sep}project_id=${projectId}`}`, ...(payload ? { payload } : {}) });
    };
    const ok = async (method: 'GET' | 'POST' | 'PUT', url: string, payload?: Obj) => {
      const r = await call(method, url, payload);
      expect(r.statusCode, `${method} ${url}: ${r.body}`).toBeLessThan(300);
      return r.json() as Obj;
    };

    await ok('PUT', `/projects/${projectId}/content-policy`, { rules: [{ content_class: 'model_transcript', sink: 'store', decision: 'allow' }] });
    await ok('PUT', `/projects/${projectId}/content-policy/retention`, { windows: [{ content_class: 'model_transcript', retention_days: 3 }] });
    await ok('PUT', '/memory-items/doc-1/label', { label: 'MEMORY_TRUST_LABEL_QUARANTINED', reason: 'poisoned' });
    const reported = await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', payload: {
      project_id: projectId,
      entries: [{ action_id: 'a1', state: 'RECEIPT_STATE_AUTHORIZED', occurred_at: '2026-09-01T10:00:00Z', effect_class: 'EFFECT_CLASS_NONE', requester_principal: 'user:ann', purpose: 'p', tool: 'x' }],
    } });
    expect(reported.statusCode, reported.body).toBe(200);
    const erasure = await ok('POST', `/projects/${projectId}/content-erasures`, { subject_kind: 'trace_id', subject_id: newTraceId(), reason: 'asked' });
    const checkpoint = await ok('POST', '/receipt-chains/actions/checkpoints');
    const edges = (await ok('GET', '/authority-edges')).authority_edges as Obj[];
    const asset = await ok('POST', '/assets', { name: 'bot' });
    const declared = await t.call({ method: 'POST', url: '/api/v1/abom-manifests', payload: {
      scope: { environment: 'prod', project_id: projectId },
      asset_id: asset.id,
      generated_at: '2026-03-10T14:00:00Z',
      components: [{ kind: 'ASSET_KIND_TOOL', ref: 'search', content_sha256: 'a'.repeat(64) }],
    } });
    expect(declared.statusCode, declared.body).toBe(201);
    const manifest = declared.json();

    const reads: [string, string][] = [
      ['GET', `/projects/${projectId}/content-policy`],
      ['GET', `/projects/${projectId}/content-policy/retention`],
      ['GET', `/projects/${projectId}/content-policy/refusals`],
      ['GET', `/projects/${projectId}/content-erasures`],
      ['GET', `/projects/${projectId}/content-erasures/${erasure.id}`],
      ['GET', '/memory-items/doc-1/label'],
      ['GET', '/memory-item-labels'],
      ['GET', '/memory-items/doc-1/propagation'],
      ['GET', '/action-receipts'],
      ['GET', '/action-receipts/a1'],
      ['GET', '/receipt-chains/actions/verify'],
      ['GET', '/receipt-chains/actions/checkpoints'],
      ['GET', `/receipt-chains/actions/checkpoints/${checkpoint.checkpoint_id ?? checkpoint.id}`],
      ['GET', '/receipt-chains/actions/entries'],
      ['GET', '/authority-edges'],
      ['GET', `/abom-manifests/${manifest.manifest_id}`],
    ];
    for (const [method, url] of reads) expect((await call(method as 'GET', url)).statusCode, `${method} ${url} before`).toBe(200);

    expect((await t.call({ method: 'DELETE', url: `/api/v1/projects/${projectId}` })).statusCode).toBe(204);

    for (const [method, url] of reads) {
      const r = await call(method as 'GET', url);
      expect(r.statusCode, `${method} ${url} after: ${r.body}`).toBe(404);
      expect(r.json()).toMatchObject({ error: 'not_found' });
    }
    const writes: [string, string, Obj | undefined][] = [
      ['PUT', `/projects/${projectId}/content-policy`, { rules: [] }],
      ['PUT', '/memory-items/doc-1/label', { label: 'MEMORY_TRUST_LABEL_TRUSTED', reason: 'fine' }],
      ['POST', `/projects/${projectId}/content-erasures`, { subject_kind: 'trace_id', subject_id: newTraceId(), reason: 'asked' }],
      ['POST', '/receipt-chains/actions/checkpoints', undefined],
      ['POST', `/authority-edges/${edges[0].id}/revoke`, { reason: 'gone' }],
    ];
    for (const [method, url, body] of writes) {
      const r = await call(method as 'PUT', url, body);
      expect(r.statusCode, `${method} ${url} after: ${r.body}`).toBe(404);
    }
    const again = await t.call({ method: 'POST', url: '/api/v1/action-receipts/entries', payload: { project_id: projectId, entries: [{ action_id: 'a2', state: 'RECEIPT_STATE_INTENDED', occurred_at: '2026-09-01T10:00:00Z', effect_class: 'EFFECT_CLASS_NONE' }] } });
    expect(again.statusCode, again.body).toBe(404);
    const redeclared = await t.call({ method: 'POST', url: '/api/v1/abom-manifests', payload: { scope: { environment: 'prod', project_id: projectId }, asset_id: asset.id, generated_at: '2026-03-10T14:00:00Z', components: [] } });
    expect(redeclared.statusCode, redeclared.body).toBe(404);
  });
});
