import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useCliTestEnv } from '../testing/cli-test-env.js';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const { t, svc } = useCliTestEnv(NOW);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-abom-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const M = {
  manifest_id: 'm1',
  asset_id: 'a1',
  release: null,
  authority: 'declared',
  signing_key_id: 'k1',
  components: [],
  canonical_form: '{}',
  manifest_sha256: '00',
  signature: 'sig',
  valid: true,
  defect: '',
};
const BODY = { asset_id: 'a1', generated_at: '2026-03-10T12:00:00Z', components: [] };

describe('svc abom', () => {
  it('declare posts the file with scope.project_id from the active project; get reads with project_id; JSON is the answer', async () => {
    t.api.on('POST', '/abom-manifests', { status: 201, body: M });
    t.api.on('GET', '/abom-manifests/m1', { status: 200, body: M });
    const file = path.join(dir, 'm.json');
    fs.writeFileSync(file, JSON.stringify({ ...BODY, scope: { environment: 'prod' } }));
    const r = await svc(['abom', 'declare', '--file', file, '--project', 'p1']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(M);
    expect(t.api.requests[0].body).toEqual({ ...BODY, scope: { environment: 'prod', project_id: 'p1' } });
    const g = await svc(['abom', 'get', 'm1', '--project', 'p1']);
    expect(g.code, g.stderr).toBe(0);
    expect(t.api.requests[1]).toMatchObject({ method: 'GET', path: '/api/v1/abom-manifests/m1', search: 'project_id=p1' });
  });

  it('keys prints a JWK Set built from /signing-keys', async () => {
    t.api.on('GET', '/signing-keys', { status: 200, body: { signing_keys: [{ kid: 'k1', x: 'xx', status: 'current', created_at: 'now', created_by: 'platform' }] } });
    const r = await svc(['abom', 'keys']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ keys: [{ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig', kid: 'k1', x: 'xx' }] });
  });

  it('usage errors exit 2 and send nothing: no file, a file that is not JSON, derived members in the file, no project', async () => {
    const notJson = path.join(dir, 'bad.json');
    fs.writeFileSync(notJson, 'nope');
    const derived = path.join(dir, 'derived.json');
    fs.writeFileSync(derived, JSON.stringify({ ...BODY, signature: 'x', authority: 'declared' }));
    const ok = path.join(dir, 'ok.json');
    fs.writeFileSync(ok, JSON.stringify(BODY));
    for (const args of [
      ['abom', 'declare', '--project', 'p1'],
      ['abom', 'declare', '--file', path.join(dir, 'missing.json'), '--project', 'p1'],
      ['abom', 'declare', '--file', notJson, '--project', 'p1'],
      ['abom', 'declare', '--file', derived, '--project', 'p1'],
      ['abom', 'declare', '--file', ok],
      ['abom', 'get', 'm1'],
    ]) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
    }
    expect(t.api.requests).toEqual([]);
  });

  it('server errors keep their exit codes: 403 -> 4, 404 -> 5', async () => {
    t.api.on('GET', '/abom-manifests/gone', { status: 404, body: { error: 'not_found', message: 'manifest not found' } });
    expect((await svc(['abom', 'get', 'gone', '--project', 'p1'])).code).toBe(5);
    t.api.on('POST', '/abom-manifests', { status: 403, body: { error: 'permission_denied', message: 'owner or admin' } });
    const ok = path.join(dir, 'ok2.json');
    fs.writeFileSync(ok, JSON.stringify(BODY));
    expect((await svc(['abom', 'declare', '--file', ok, '--project', 'p1'])).code).toBe(4);
  });
});
