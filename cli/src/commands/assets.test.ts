import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from '../testing/cli-test-env.js';
import { runInProcess, stderrJson } from '../testing/fake-api.js';
import { enumValue, renderAttribution, TIER } from './assets.js';

const NOW = new Date('2026-06-01T12:00:00.000Z');
const asset = (over: Record<string, unknown> = {}) => ({
  id: 'a1',
  name: 'Support bot',
  shadow: false,
  observation_keys: ['svc/support'],
  approval_state: 'APPROVAL_STATE_APPROVED',
  risk_tier: 'RISK_TIER_HIGH',
  data_classification: 'DATA_CLASSIFICATION_INTERNAL',
  owner_team: 'platform',
  owner_principal: null,
  version: 3,
  created_at: '2026-05-01T00:00:00.000Z',
  ...over,
});

let t: CliTestEnv;
beforeEach(async () => {
  t = await startCliTestEnv();
});
afterEach(() => stopCliTestEnv(t));

const svc = (args: string[], opts: { stdoutTTY?: boolean } = {}) => runInProcess(args, { env: t.env, now: NOW, stdoutTTY: opts.stdoutTTY });

describe('svc assets', () => {
  it('list sends the filters (short or full enum names, repeated or comma-separated) with project_id and prints the page', async () => {
    const body = { assets: [asset()], next_cursor: null };
    t.api.on('GET', '/assets', { body });
    const r = await svc(['assets', 'list', '--project', 'p1', '--shadow', '--risk-tier', 'high,RISK_TIER_LOW', '--risk-tier', 'critical', '--approval', 'unreviewed', '--unowned', '--limit', '50']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(body);
    expect(t.api.requests[0].query).toEqual({
      project_id: ['p1'],
      shadow: ['true'],
      risk_tier: ['RISK_TIER_HIGH', 'RISK_TIER_LOW', 'RISK_TIER_CRITICAL'],
      approval_state: ['APPROVAL_STATE_UNREVIEWED'],
      owned: ['false'],
      limit: ['50'],
    });
  });

  it('list prints a table with short enum names', async () => {
    t.api.on('GET', '/assets', { body: { assets: [asset(), asset({ id: 'a2', name: 'ghost', shadow: true, owner_team: null, risk_tier: 'RISK_TIER_UNASSESSED' })], next_cursor: null } });
    const r = await svc(['assets', 'list', '--project', 'p1', '--no-color'], { stdoutTTY: true });
    expect(r.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+SHADOW\s+APPROVAL\s+RISK\s+CLASSIFICATION\s+OWNER\s+KEYS$/);
    expect(r.stdout).toContain('approved');
    expect(r.stdout).toMatch(/a2\s+ghost\s+yes\s+approved\s+unassessed/);
  });

  it('usage errors exit 2 and send nothing: unknown enum value, contradicting flags, missing review fields, nothing to own', async () => {
    for (const args of [
      ['assets', 'list', '--risk-tier', 'extreme'],
      ['assets', 'list', '--shadow', '--declared'],
      ['assets', 'review', 'a1', '--state', 'approved', '--risk-tier', 'low'],
      ['assets', 'review', 'a1', '--state', 'APPROVAL_STATE_UNSPECIFIED', '--risk-tier', 'low', '--reason', 'r'],
      ['assets', 'own', 'a1'],
      ['assets', 'own', 'a1', '--team', 't', '--clear-team'],
      ['assets', 'attribution'],
      ['assets', 'attribution', 'k', '--asset', 'a1'],
      ['signals', 'list', '--kind', 'bogus'],
    ]) {
      const r = await svc(['--project', 'p1', ...args]);
      expect(r.code, args.join(' ')).toBe(2);
    }
    expect(t.api.requests).toHaveLength(0);
  });

  it('declare posts name, keys and project; review posts the decision (never an approver)', async () => {
    t.api.on('POST', '/assets', { status: 201, body: asset() });
    t.api.on('POST', '/assets/a1/reviews', { body: asset() });
    expect((await svc(['assets', 'declare', 'Support bot', '--project', 'p1', '--key', 'svc/support', '--key', 'svc/b', '--description', 'd'])).code).toBe(0);
    expect(t.api.requests[0].body).toEqual({ project_id: 'p1', name: 'Support bot', observation_keys: ['svc/support', 'svc/b'], description: 'd' });
    const r = await svc(['assets', 'review', 'a1', '--project', 'p1', '--state', 'approved', '--risk-tier', 'HIGH', '--reason', 'checked']);
    expect(r.code, r.stderr).toBe(0);
    expect(t.api.requests[1].body).toEqual({ project_id: 'p1', approval_state: 'APPROVAL_STATE_APPROVED', risk_tier: 'RISK_TIER_HIGH', reason: 'checked' });
  });

  it('classify and own send PUTs; --clear-team sends null', async () => {
    t.api.on('PUT', '/assets/a1/data-classification', { body: asset() });
    t.api.on('PUT', '/assets/a1/ownership', { body: asset() });
    expect((await svc(['assets', 'classify', 'a1', '--project', 'p1', '--classification', 'restricted', '--reason', 'pii'])).code).toBe(0);
    expect(t.api.requests[0]).toMatchObject({ method: 'PUT', body: { project_id: 'p1', data_classification: 'DATA_CLASSIFICATION_RESTRICTED', reason: 'pii' } });
    expect((await svc(['assets', 'own', 'a1', '--project', 'p1', '--principal', 'user:bob', '--clear-team'])).code).toBe(0);
    expect(t.api.requests[1].body).toEqual({ project_id: 'p1', owner_team: null, owner_principal: 'user:bob' });
  });

  it('a server refusal exits non-zero with the error on stderr', async () => {
    t.api.on('POST', '/assets', { status: 409, body: { error: 'conflict', message: 'observation key "k" already maps to asset a9' } });
    const r = await svc(['assets', 'declare', 'x', '--project', 'p1', '--key', 'k']);
    expect(r.code).not.toBe(0);
    expect(stderrJson(r)).toMatchObject({ error: 'conflict' });
  });

  it('attribution repeats observation_key, or reads one asset', async () => {
    const body = { availability: 'answered', mappings: [{ observation_key: 'k1', asset_id: 'a1', credentials: [] }] };
    t.api.on('GET', '/assets/attribution', { body });
    t.api.on('GET', '/assets/a1/attribution', { body: { ...body, asset_id: 'a1' } });
    expect((await svc(['assets', 'attribution', 'k1', 'k2', '--project', 'p1'])).code).toBe(0);
    expect(t.api.requests[0].query).toEqual({ project_id: ['p1'], observation_key: ['k1', 'k2'] });
    expect((await svc(['assets', 'attribution', '--asset', 'a1', '--project', 'p1'])).code).toBe(0);
    expect(t.api.requests[1].path).toBe('/api/v1/assets/a1/attribution');
  });

  it('renderAttribution tells an unanswerable lookup from an answered empty match', () => {
    expect(renderAttribution({ availability: 'unavailable', unavailable_reason: 'telemetry_unreadable', mappings: [] }, false)).toContain('unavailable');
    const answered = renderAttribution({ availability: 'answered', mappings: [{ observation_key: 'k', asset_id: null, credentials: [] }] }, false);
    expect(answered).toContain('none recorded');
  });

  it('enumValue accepts short and full names, any case', () => {
    expect(enumValue('--t', TIER, 'Low')).toBe('RISK_TIER_LOW');
    expect(enumValue('--t', TIER, 'RISK_TIER_CRITICAL')).toBe('RISK_TIER_CRITICAL');
    expect(() => enumValue('--t', TIER, 'RISK_TIER_UNSPECIFIED')).toThrow(/must be one of/);
  });
});

describe('svc signals list', () => {
  it('sends status, kind, severity (short names become full ones) and asset_id', async () => {
    const body = {
      review_signals: [{ id: 's1', kind: 'REVIEW_SIGNAL_KIND_SHADOW_ASSET', status: 'REVIEW_SIGNAL_STATUS_OPEN', severity: 'REVIEW_SIGNAL_SEVERITY_HIGH', subject_ref: 'k', asset_id: 'a1', last_seen_at: '2026-06-01T00:00:00.000Z' }],
      next_cursor: null,
    };
    t.api.on('GET', '/review-signals', { body });
    const r = await svc(['signals', 'list', '--project', 'p1', '--status', 'open,acknowledged', '--kind', 'shadow_asset', '--severity', 'high', '--asset', 'a1']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(body);
    expect(t.api.requests[0].query).toEqual({
      project_id: ['p1'],
      status: ['REVIEW_SIGNAL_STATUS_OPEN', 'REVIEW_SIGNAL_STATUS_ACKNOWLEDGED'],
      kind: ['REVIEW_SIGNAL_KIND_SHADOW_ASSET'],
      severity: ['REVIEW_SIGNAL_SEVERITY_HIGH'],
      asset_id: ['a1'],
    });
    const table = await svc(['signals', 'list', '--project', 'p1', '--no-color'], { stdoutTTY: true });
    expect(table.stdout).toMatch(/s1\s+shadow_asset\s+high\s+open\s+k\s+a1/);
  });
});

describe('svc signals get|acknowledge|dismiss', () => {
  it('reach their routes; dismiss sends the reason and needs one', async () => {
    const s = { id: 's1', kind: 'REVIEW_SIGNAL_KIND_SHADOW_ASSET', status: 'REVIEW_SIGNAL_STATUS_OPEN', severity: 'REVIEW_SIGNAL_SEVERITY_HIGH', subject_ref: 'k', asset_id: 'a1' };
    t.api.on('GET', '/review-signals/s1', { body: s });
    t.api.on('POST', '/review-signals/s1/acknowledge', { body: { ...s, status: 'REVIEW_SIGNAL_STATUS_ACKNOWLEDGED' } });
    t.api.on('POST', '/review-signals/s1/dismiss', { body: { ...s, status: 'REVIEW_SIGNAL_STATUS_DISMISSED' } });
    expect((await svc(['signals', 'dismiss', 's1'])).code).toBe(2);
    expect(t.api.requests).toEqual([]);
    for (const args of [['signals', 'get', 's1'], ['signals', 'acknowledge', 's1'], ['signals', 'dismiss', 's1', '--reason', 'known agent']]) {
      const r = await svc(args);
      expect(r.code, r.stderr).toBe(0);
    }
    expect(t.api.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /api/v1/review-signals/s1', 'POST /api/v1/review-signals/s1/acknowledge', 'POST /api/v1/review-signals/s1/dismiss']);
    expect(t.api.requests[2].body).toEqual({ reason: 'known agent' });
  });
});
