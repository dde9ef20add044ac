/**
 * Deployments and configuration snapshots, and the drift review signals (spec 2 "Review signal" kinds
 * ABOM_DRIFT and CONFIG_UNREGISTERED; "The drift kinds clear when a matching configuration is registered").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../../testing/app.js';
import { type Json, projectWithAsset, sha256hex } from '../abom/testing.js';
import { secondOrganization } from '../../testing/people.js';
import { firstDrift } from './service.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

const H = sha256hex;
const MODEL = { kind: 'ASSET_KIND_MODEL', ref: 'gpt-x', version: '2026-01', content_sha256: H('model') };
const TOOL = { kind: 'ASSET_KIND_TOOL', ref: 'search', version: '2', content_sha256: H('search') };
const PROMPT = { kind: 'ASSET_KIND_PROMPT', ref: 'system', version: '', content_sha256: H('prompt') };

async function project() {
  const p = await projectWithAsset(t);
  const { call, ok, assetId } = p;
  const manifest = (extra: Json = {}) =>
    ok('POST', '/abom-manifests', {
      scope: { environment: 'prod' },
      asset_id: assetId,
      generated_at: '2026-03-10T12:00:00Z',
      components: [{ ...MODEL, declared_by: 'ml-team' }, TOOL, PROMPT],
      release: '1.0.0',
      ...extra,
    });
  const signals = async (kind?: string) =>
    ((await ok('GET', `/review-signals?status=REVIEW_SIGNAL_STATUS_OPEN,REVIEW_SIGNAL_STATUS_ACKNOWLEDGED,REVIEW_SIGNAL_STATUS_RESOLVED${kind ? `&kind=${kind}` : ''}`)).review_signals as Json[]);
  const deploy = async (manifestId: string, extra: Json = {}) => ok('POST', '/deployments', { asset_id: assetId, manifest_id: manifestId, environment: 'prod', ...extra });
  const register = (deploymentId: string, components: Json[]) => call('POST', '/config-snapshots', { deployment_id: deploymentId, components });
  return { ...p, manifest, signals, deploy, register };
}

const UNREG = 'REVIEW_SIGNAL_KIND_CONFIG_UNREGISTERED';
const DRIFT = 'REVIEW_SIGNAL_KIND_ABOM_DRIFT';

describe('deployments and configuration snapshots', () => {
  it('"CONFIG_UNREGISTERED: attested deployment has no registered configuration" opens at once; "the drift kinds clear when a matching configuration is registered"', async () => {
    const p = await project();
    const m = await p.manifest();
    const d = await p.deploy(m.manifest_id);
    expect(d).toMatchObject({ asset_id: p.assetId, manifest_id: m.manifest_id, environment: 'prod', release: '1.0.0', config_state: 'unregistered', current_snapshot_id: null });
    const [open] = await p.signals(UNREG);
    expect(open).toMatchObject({ kind: UNREG, status: 'REVIEW_SIGNAL_STATUS_OPEN', subject_ref: d.id, asset_id: p.assetId, evidence_ref: m.manifest_id, detail_code: 'no_configuration_registered' });
    // order and declared_by do not matter
    const res = await p.register(d.id, [PROMPT, TOOL, MODEL]);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ deployment_id: d.id, matches: true, deployment: { config_state: 'matching', current_snapshot_id: res.json().id } });
    expect(res.json().drift).toBeUndefined();
    const [cleared] = await p.signals(UNREG);
    expect(cleared).toMatchObject({ id: open.id, status: 'REVIEW_SIGNAL_STATUS_RESOLVED' });
    expect(await p.signals(DRIFT)).toEqual([]);
  });

  it('"ABOM_DRIFT: field configuration no longer matches its attesting manifest": detail_code names the first differing component; repeats refresh one signal; a match clears it; a later drift opens a new one', async () => {
    const p = await project();
    const m = await p.manifest();
    const d = await p.deploy(m.manifest_id);
    const first = await p.register(d.id, [MODEL, { ...TOOL, version: '3' }, PROMPT]);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({ matches: false, drift: { reason: 'version_differs', detail_code: 'version_differs:tool', expected: TOOL, found: { ...TOOL, version: '3' } } });
    expect((await p.ok('GET', `/deployments/${d.id}`)).drift).toMatchObject({ reason: 'version_differs', expected: { ref: 'search' } });
    let drift = await p.signals(DRIFT);
    expect(drift).toHaveLength(1);
    expect(drift[0]).toMatchObject({ status: 'REVIEW_SIGNAL_STATUS_OPEN', subject_ref: d.id, asset_id: p.assetId, detail_code: 'version_differs:tool', evidence_ref: first.json().id });
    // CONFIG_UNREGISTERED stays until a matching configuration: only a match clears the drift kinds
    expect((await p.signals(UNREG))[0].status).toBe('REVIEW_SIGNAL_STATUS_OPEN');
    // a repeated (even different) drifting configuration refreshes the same signal
    const second = await p.register(d.id, [MODEL, TOOL]);
    expect(second.json().drift).toMatchObject({ reason: 'component_missing', detail_code: 'component_missing:prompt' });
    drift = await p.signals(DRIFT);
    expect(drift).toHaveLength(1);
    const outbox = (await p.ok('GET', '/notification-outbox')).notifications as Json[];
    expect(outbox.filter((n) => n.kind === DRIFT && n.event === 'opened')).toHaveLength(1);
    // the match clears both
    expect((await p.register(d.id, [MODEL, TOOL, PROMPT])).json().matches).toBe(true);
    for (const s of [...(await p.signals(DRIFT)), ...(await p.signals(UNREG))]) expect(s.status).toBe('REVIEW_SIGNAL_STATUS_RESOLVED');
    // a new episode
    const third = await p.register(d.id, [MODEL, TOOL, PROMPT, { kind: 'ASSET_KIND_MCP_SERVER', ref: 'files', content_sha256: H('mcp') }]);
    expect(third.json().drift.detail_code).toBe('component_unexpected:mcp_server');
    drift = await p.signals(DRIFT);
    expect(drift.map((s) => s.status).sort()).toEqual(['REVIEW_SIGNAL_STATUS_OPEN', 'REVIEW_SIGNAL_STATUS_RESOLVED']);
    const snaps = (await p.ok('GET', `/config-snapshots?deployment_id=${d.id}&limit=2`)) as Json;
    expect(snaps.config_snapshots).toHaveLength(2);
    expect(snaps.config_snapshots[0].id).toBe(third.json().id);
    const rest = await p.ok('GET', `/config-snapshots?deployment_id=${d.id}&cursor=${encodeURIComponent(snaps.next_cursor)}`);
    expect(rest.config_snapshots).toHaveLength(2);
    expect(rest.next_cursor).toBeNull();
  });

  it('"a resolved signal is never reopened by a later sighting": a dismissed drift stays dismissed while the episode lasts', async () => {
    const p = await project();
    const d = await p.deploy((await p.manifest()).manifest_id);
    await p.register(d.id, [MODEL]);
    const [s] = await p.signals(DRIFT);
    expect((await p.call('POST', `/review-signals/${s.id}/dismiss`, { reason: 'known' })).statusCode).toBe(200);
    await p.register(d.id, [MODEL, TOOL]);
    const all = (await p.ok('GET', `/review-signals?kind=${DRIFT}&status=REVIEW_SIGNAL_STATUS_DISMISSED,REVIEW_SIGNAL_STATUS_OPEN`)).review_signals as Json[];
    expect(all.map((x) => x.status)).toEqual(['REVIEW_SIGNAL_STATUS_DISMISSED']);
  });

  it('the first difference walks components in order: missing, unexpected, version, content', () => {
    const c = (kind: number, ref: string, version = '', content = 'a') => ({ kind, ref, version, content_sha256: content });
    expect(firstDrift([c(2, 'm')], [c(2, 'm')])).toBeUndefined();
    expect(firstDrift([c(2, 'm'), c(2, 'm')], [c(2, 'm')])).toBeUndefined();
    expect(firstDrift([c(2, 'm'), c(4, 't')], [c(4, 't')])).toMatchObject({ reason: 'component_missing', expected: c(2, 'm') });
    expect(firstDrift([c(4, 't')], [c(2, 'm'), c(4, 't')])).toMatchObject({ reason: 'component_unexpected', found: c(2, 'm') });
    expect(firstDrift([c(2, 'm', '1')], [c(2, 'm', '2')])).toMatchObject({ reason: 'version_differs' });
    expect(firstDrift([c(2, 'm', '1', 'a')], [c(2, 'm', '1', 'b')])).toMatchObject({ reason: 'content_differs' });
    expect(firstDrift([], [])).toBeUndefined();
  });

  it('a deployment must be attested by a valid manifest of the same asset, environment and release', async () => {
    const p = await project();
    const m = await p.manifest();
    const other = await p.ok('POST', '/assets', { name: `other-${Math.random()}` });
    expect((await p.call('POST', '/deployments', { asset_id: other.id, manifest_id: m.manifest_id, environment: 'prod' })).statusCode).toBe(400);
    expect((await p.call('POST', '/deployments', { asset_id: p.assetId, manifest_id: m.manifest_id, environment: 'staging' })).statusCode).toBe(400);
    expect((await p.call('POST', '/deployments', { asset_id: p.assetId, manifest_id: m.manifest_id, environment: 'prod', release: '' })).statusCode).toBe(400);
    expect((await p.call('POST', '/deployments', { asset_id: p.assetId, manifest_id: 'nope', environment: 'prod' })).statusCode).toBe(404);
    // a manifest that no longer verifies attests nothing
    const row = (await t.ctx.control.manifests.find(m.manifest_id))!;
    await t.ctx.control.manifests.insert({ ...row, id: 'broken-m', canonicalForm: '{' });
    const broken = await p.call('POST', '/deployments', { asset_id: p.assetId, manifest_id: 'broken-m', environment: 'prod' });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().details).toEqual({ defect: 'canonical_form_unreadable' });
    // a manifest naming no release: the deployment names its own
    const free = await p.manifest({ release: null });
    expect((await p.deploy(free.manifest_id, { release: '2.0' })).release).toBe('2.0');
  });

  it('lists: newest first, filters, cursor; another project or organization sees 404 / nothing', async () => {
    const p = await project();
    const m = await p.manifest();
    const ds = [];
    for (let i = 0; i < 3; i++) ds.push(await p.deploy(m.manifest_id));
    const page = await p.ok('GET', '/deployments?limit=2');
    expect(page.deployments).toHaveLength(2);
    const rest = await p.ok('GET', `/deployments?limit=2&cursor=${encodeURIComponent(page.next_cursor)}`);
    expect([...page.deployments, ...rest.deployments].map((d: Json) => d.id).sort()).toEqual(ds.map((d) => d.id).sort());
    expect((await p.ok('GET', `/deployments?asset_id=${p.assetId}&environment=prod`)).deployments).toHaveLength(3);
    expect((await p.ok('GET', '/deployments?environment=staging')).deployments).toHaveLength(0);
    expect((await p.call('GET', `/deployments?limit=2&asset_id=x&cursor=${encodeURIComponent(page.next_cursor)}`)).statusCode).toBe(400);
    const q = await project();
    const missing = await q.call('GET', '/deployments/nope');
    const foreign = await q.call('GET', `/deployments/${ds[0].id}`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(missing.json());
    expect((await q.register(ds[0].id, [MODEL])).statusCode).toBe(404);
    expect((await q.call('GET', `/config-snapshots?deployment_id=${ds[0].id}`)).statusCode).toBe(404);
    const other = await secondOrganization(t);
    expect((await t.call({ method: 'GET', url: `/api/v1/deployments/${ds[0].id}?project_id=${p.projectId}`, key: other.ownerKey })).statusCode).toBe(404);
  });

  it('bad input is a 4xx in the error shape, never 5xx, and changes nothing; concurrent identical registrations all land in order', async () => {
    const p = await project();
    const d = await p.deploy((await p.manifest()).manifest_id);
    const nested: Json = {};
    let cur = nested;
    for (let i = 0; i < 2000; i++) cur = cur.a = {};
    const bad: [string, string, unknown][] = [
      ['POST', '/deployments', 'nope'],
      ['POST', '/deployments', { asset_id: p.assetId }],
      ['POST', '/deployments', { asset_id: p.assetId, manifest_id: 'x', environment: '' }],
      ['POST', '/deployments', { asset_id: p.assetId, manifest_id: 'x', environment: 'prod', created_by: 'me' }],
      ['POST', '/deployments', { asset_id: p.assetId, manifest_id: 'x', environment: 'prod', nested }],
      ['POST', '/config-snapshots', { deployment_id: d.id, components: [{ ...MODEL, kind: 'ASSET_KIND_UNSPECIFIED' }] }],
      ['POST', '/config-snapshots', { deployment_id: d.id, components: [MODEL, MODEL] }],
      ['POST', '/config-snapshots', { deployment_id: d.id, components: [{ ...MODEL, declared_by: 'x' }] }],
      ['POST', '/config-snapshots', { deployment_id: d.id, components: Array.from({ length: 1001 }, (_, i) => ({ ...MODEL, ref: `m${i}` })) }],
      ['POST', '/config-snapshots', { deployment_id: d.id, components: [MODEL], matches: true }],
      ['POST', '/config-snapshots', { deployment_id: d.id }],
      ['GET', '/config-snapshots', undefined],
      ['GET', '/deployments?limit=0', undefined],
      ['GET', '/deployments?limit=201', undefined],
      ['GET', '/deployments?cursor=garbage', undefined],
      ['GET', '/deployments?environment=a&environment=b', undefined],
    ];
    for (const [method, url, body] of bad) {
      const res = await t.call({ method: method as 'GET', url: `/api/v1${url}`, key: p.key, ...(body !== undefined ? { payload: typeof body === 'string' ? body : JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, `${method} ${url}`).toBeLessThan(500);
      expect(res.json()).toMatchObject({ error: expect.any(String), message: expect.any(String) });
    }
    expect((await p.ok('GET', `/deployments/${d.id}`)).config_state).toBe('unregistered');
    const all = await Promise.all(Array.from({ length: 6 }, () => p.register(d.id, [MODEL, TOOL, PROMPT])));
    expect(all.every((r) => r.statusCode === 201 || r.statusCode === 409)).toBe(true);
    const landed = all.filter((r) => r.statusCode === 201).length;
    expect(landed).toBeGreaterThan(0);
    expect((await p.ok('GET', `/config-snapshots?deployment_id=${d.id}`)).config_snapshots).toHaveLength(landed);
    expect((await p.ok('GET', `/deployments/${d.id}`)).config_state).toBe('matching');
  });
});
