import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliTestEnv } from '../testing/cli-test-env.js';

const NOW = new Date('2024-06-01T12:00:00.000Z');
const BUDGET = {
  daily_limit_nano_usd: 2_500_000_000,
  daily_evaluation_limit: 100,
  budget_set: true,
  day: '2024-06-01',
  spent_nano_usd: 500_000_000,
  evaluations: 3,
  remaining_nano_usd: 2_000_000_000,
  remaining_evaluations: 97,
  resets_at: '2024-06-02T00:00:00.000Z',
  updated_at: '2024-06-01T10:00:00.000Z',
  updated_by: 'user:u1',
  version: 4,
};

const { t, svc } = useCliTestEnv(NOW);
const sent = () => t.api.requests.map((r) => `${r.method} ${r.path}${r.search ? `?${r.search}` : ''}`);

describe('svc evals budget', () => {
  it('get reads the organization-wide budget (no project sent, even with --project); JSON is the answer', async () => {
    t.api.on('GET', '/evaluation/budget', { status: 200, body: BUDGET });
    const r = await svc(['evals', 'budget', 'get', '--project', 'p1']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(BUDGET);
    expect(sent()).toEqual(['GET /api/v1/evaluation/budget']);
  });

  it('get as a table shows the limits in nano-dollars and dollars, and says when the default is in force', async () => {
    t.api.on('GET', '/evaluation/budget', { status: 200, body: { ...BUDGET, budget_set: false, daily_limit_nano_usd: 0, daily_evaluation_limit: null, remaining_evaluations: null } });
    const r = await svc(['evals', 'budget', 'get', '--output', 'table']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('0 (0 USD)');
    expect(r.stdout).toContain('model judges refused');
    expect(r.stdout).toMatch(/daily_evaluation_limit\s+none/);
  });

  it('set with both flags PUTs them as they are, without reading first', async () => {
    t.api.on('PUT', '/evaluation/budget', { status: 200, body: BUDGET });
    const r = await svc(['evals', 'budget', 'set', '--daily-limit-nano-usd', '2500000000', '--daily-evaluation-limit', 'none']);
    expect(r.code, r.stderr).toBe(0);
    expect(sent()).toEqual(['PUT /api/v1/evaluation/budget']);
    expect(t.api.requests[0].body).toEqual({ daily_limit_nano_usd: 2_500_000_000, daily_evaluation_limit: null });
  });

  it('set with one flag keeps the other limit at its current value (read first)', async () => {
    t.api.on('GET', '/evaluation/budget', { status: 200, body: BUDGET });
    t.api.on('PUT', '/evaluation/budget', { status: 200, body: BUDGET });
    const r = await svc(['evals', 'budget', 'set', '--daily-evaluation-limit', '50']);
    expect(r.code, r.stderr).toBe(0);
    expect(sent()).toEqual(['GET /api/v1/evaluation/budget', 'PUT /api/v1/evaluation/budget']);
    expect(t.api.requests[1].body).toEqual({ daily_limit_nano_usd: 2_500_000_000, daily_evaluation_limit: 50 });
  });

  it('set takes --body or --file (flags win over the body), and a body field the server refuses comes back as its error', async () => {
    t.api.on('PUT', '/evaluation/budget', { status: 200, body: BUDGET });
    const file = path.join(t.tmp.dir, 'budget.json');
    writeFileSync(file, JSON.stringify({ daily_limit_nano_usd: 7, daily_evaluation_limit: 9 }));
    expect((await svc(['evals', 'budget', 'set', '--file', file])).code).toBe(0);
    expect((await svc(['evals', 'budget', 'set', '--body', '{"daily_limit_nano_usd": 1, "daily_evaluation_limit": 2}', '--daily-limit-nano-usd', '5'])).code).toBe(0);
    expect(t.api.requests.map((r) => r.body)).toEqual([
      { daily_limit_nano_usd: 7, daily_evaluation_limit: 9 },
      { daily_limit_nano_usd: 5, daily_evaluation_limit: 2 },
    ]);
    t.api.on('PUT', '/evaluation/budget', { status: 400, body: { error: 'invalid_request', message: 'version is read-only (the server keeps it) and cannot be sent' } });
    const r = await svc(['evals', 'budget', 'set', '--body', '{"daily_limit_nano_usd": 1, "daily_evaluation_limit": null, "version": 3}']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('version is read-only');
  });

  it('usage errors exit 2 and send nothing: no limit at all, negative, fractional or huge numbers, a zero count, both body flags, a non-object body', async () => {
    const cases: string[][] = [
      ['evals', 'budget', 'set'],
      ['evals', 'budget', 'set', '--daily-limit-nano-usd', '-1'],
      ['evals', 'budget', 'set', '--daily-limit-nano-usd', '1.5'],
      ['evals', 'budget', 'set', '--daily-limit-nano-usd', '9007199254740993'],
      ['evals', 'budget', 'set', '--daily-limit-nano-usd', '1', '--daily-evaluation-limit', '0'],
      ['evals', 'budget', 'set', '--daily-limit-nano-usd', '1', '--daily-evaluation-limit', 'unlimited'],
      ['evals', 'budget', 'set', '--body', '{}', '--file', '-'],
      ['evals', 'budget', 'set', '--body', '[1]'],
      ['evals', 'budget', 'set', '--body', 'not json'],
    ];
    for (const args of cases) expect((await svc(args)).code, args.join(' ')).toBe(2);
    expect(t.api.requests).toEqual([]);
  });

  it('set with only a count limit before any budget exists is a usage error after reading (the cost limit has no current value)', async () => {
    t.api.on('GET', '/evaluation/budget', { status: 200, body: { ...BUDGET, budget_set: false } });
    const r = await svc(['evals', 'budget', 'set', '--daily-evaluation-limit', '5']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--daily-limit-nano-usd');
    expect(sent()).toEqual(['GET /api/v1/evaluation/budget']);
  });
});
