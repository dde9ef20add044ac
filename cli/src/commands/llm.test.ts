import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from '../testing/cli-test-env.js';
import { runInProcess, stderrJson } from '../testing/fake-api.js';

const by = { user_id: null, api_key_id: 'k1' };
const P1 = { project_id: 'p1', model: 'claude', provider: null, input_usd_per_million_tokens: 3, output_usd_per_million_tokens: 15, updated_at: '2026-01-01T00:00:00Z', updated_by: by };
const P2 = { ...P1, provider: 'aws.bedrock', input_usd_per_million_tokens: 3.3, output_usd_per_million_tokens: 16.5 };

let t: CliTestEnv;
beforeEach(async () => {
  t = await startCliTestEnv();
});
afterEach(() => stopCliTestEnv(t));

describe('svc llm pricing list', () => {
  it('sends project_id, --model, --limit and --cursor, and prints the page as JSON when piped', async () => {
    t.api.on('GET', '/llm/pricing', { body: { prices: [P1], next_cursor: 'c2' } });
    const r = await runInProcess(['llm', 'pricing', 'list', '--project', 'p1', '--model', 'claude', '--limit', '1', '--cursor', 'c1'], { env: t.env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ prices: [P1], next_cursor: 'c2' });
    expect(t.api.requests[0].query).toEqual({ project_id: ['p1'], model: ['claude'], limit: ['1'], cursor: ['c1'] });
  });

  it('--all follows next_cursor; the table names the any-provider entry', async () => {
    t.api.on('GET', '/llm/pricing', (req) =>
      req.query.cursor?.[0] === 'c2' ? { body: { prices: [P2], next_cursor: null } } : { body: { prices: [P1], next_cursor: 'c2' } },
    );
    const all = await runInProcess(['llm', 'pricing', 'list', '--all'], { env: t.env });
    expect(JSON.parse(all.stdout)).toEqual({ prices: [P1, P2], next_cursor: null });
    expect(t.api.requests.map((q) => q.search)).toEqual(['', 'cursor=c2']);
    const table = await runInProcess(['llm', 'pricing', 'list', '--all', '-o', 'table'], { env: t.env });
    const lines = table.stdout.trim().split('\n');
    expect(lines[0].split(/\s+/)).toEqual(['MODEL', 'PROVIDER', 'INPUT_USD_PER_MTOK', 'OUTPUT_USD_PER_MTOK', 'UPDATED_AT']);
    expect(lines[1].split(/\s+/)).toEqual(['claude', '(any)', '3', '15', '2026-01-01T00:00:00Z']);
    expect(lines[2].split(/\s+/)).toEqual(['claude', 'aws.bedrock', '3.3', '16.5', '2026-01-01T00:00:00Z']);
  });

  it('a missing scope (403) exits 4 with the server error', async () => {
    t.api.on('GET', '/llm/pricing', { status: 403, body: { error: 'permission_denied', message: 'this request needs scope llm:read' } });
    const r = await runInProcess(['llm', 'pricing', 'list'], { env: t.env });
    expect(r.code).toBe(4);
    expect(stderrJson(r)).toMatchObject({ error: 'permission_denied', status: 403 });
  });
});

describe('svc llm pricing set', () => {
  it('PUTs {model, input, output} (provider only when given) to the active project', async () => {
    t.api.on('PUT', '/llm/pricing', (req) => ({ body: { ...P1, ...(req.body as object) } }));
    const r = await runInProcess(['llm', 'pricing', 'set', 'claude', '--input-price', '3', '--output-price', '15.000001', '--project', 'p1'], { env: t.env });
    expect(r.code).toBe(0);
    expect(t.api.requests[0]).toMatchObject({ method: 'PUT', search: 'project_id=p1' });
    expect(t.api.requests[0].body).toEqual({ model: 'claude', input_usd_per_million_tokens: 3, output_usd_per_million_tokens: 15.000001 });
    expect(JSON.parse(r.stdout).output_usd_per_million_tokens).toBe(15.000001);
    await runInProcess(['llm', 'pricing', 'set', 'claude', '--input-price', '3.3', '--output-price', '16.5', '--provider', 'aws.bedrock'], { env: t.env });
    expect(t.api.requests[1].body).toEqual({ model: 'claude', provider: 'aws.bedrock', input_usd_per_million_tokens: 3.3, output_usd_per_million_tokens: 16.5 });
    expect(t.api.requests[1].search).toBe('');
    // The global --output (format) still works next to --output-price.
    const table = await runInProcess(['llm', 'pricing', 'set', 'claude', '--input-price', '3', '--output-price', '15', '--output', 'table'], { env: t.env });
    expect(table.stdout.split('\n')[1].split(/\s+/).slice(0, 4)).toEqual(['claude', '(any)', '3', '15']);
  });

  it('refuses bad prices before sending anything (exit 2)', async () => {
    for (const bad of ['-1', '1.1234567', '10000.5', 'abc', '', '1e3', 'Infinity']) {
      const r = await runInProcess(['llm', 'pricing', 'set', 'claude', '--input-price', bad, '--output-price', '1'], { env: t.env });
      expect(r.code, bad).toBe(2);
      expect(stderrJson(r)).toMatchObject({ error: 'usage_error' });
    }
    expect((await runInProcess(['llm', 'pricing', 'set', 'claude', '--input-price', '1'], { env: t.env })).code).toBe(2);
    expect((await runInProcess(['llm', 'pricing', 'set', 'claude', '--input-price', '1', '--output-price', '2.0000001'], { env: t.env })).code).toBe(2);
    expect(t.api.requests).toHaveLength(0);
  });

  it("the server's 400 keeps its status and exits 1", async () => {
    t.api.on('PUT', '/llm/pricing', { status: 400, body: { error: 'invalid_request', message: 'provider must not be empty' } });
    const r = await runInProcess(['llm', 'pricing', 'set', 'claude', '--input-price', '1', '--output-price', '1'], { env: t.env });
    expect(r.code).toBe(1);
    expect(stderrJson(r)).toMatchObject({ error: 'invalid_request', status: 400, exit_code: 1 });
  });
});

describe('svc llm pricing delete', () => {
  it('is destructive: it needs --yes, then sends DELETE with model and provider', async () => {
    t.api.on('DELETE', '/llm/pricing', { status: 204 });
    const refused = await runInProcess(['llm', 'pricing', 'delete', 'claude'], { env: t.env });
    expect(refused.code).toBe(2);
    expect(t.api.requests).toHaveLength(0);
    const ok = await runInProcess(['llm', 'pricing', 'delete', 'claude', '--provider', 'aws.bedrock', '--yes', '--project', 'p1'], { env: t.env });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toEqual({ deleted: true, model: 'claude', provider: 'aws.bedrock' });
    expect(t.api.requests[0]).toMatchObject({ method: 'DELETE', path: '/api/v1/llm/pricing' });
    expect(t.api.requests[0].query).toEqual({ project_id: ['p1'], model: ['claude'], provider: ['aws.bedrock'] });
    const any = await runInProcess(['llm', 'pricing', 'delete', 'claude', '--yes'], { env: t.env });
    expect(JSON.parse(any.stdout)).toEqual({ deleted: true, model: 'claude', provider: null });
    expect(t.api.requests[1].search).toBe('model=claude');
  });

  it('an absent price (404) exits 5', async () => {
    t.api.on('DELETE', '/llm/pricing', { status: 404, body: { error: 'not_found', message: 'model price not found' } });
    const r = await runInProcess(['llm', 'pricing', 'delete', 'nothing', '--yes'], { env: t.env });
    expect(r.code).toBe(5);
    expect(stderrJson(r)).toMatchObject({ error: 'not_found', status: 404 });
  });

  it('model names are sent exactly, also with spaces and slashes', async () => {
    t.api.on('DELETE', '/llm/pricing', { status: 204 });
    await runInProcess(['llm', 'pricing', 'delete', 'models/gemini 1.5+pro', '--yes'], { env: t.env });
    expect(t.api.requests[0].query.model).toEqual(['models/gemini 1.5+pro']);
  });
});

const NOW = new Date('2024-06-01T12:00:00.000Z');
const svc = (args: string[], opts: { stdoutTTY?: boolean; stderrTTY?: boolean } = {}) => runInProcess(args, { env: t.env, now: NOW, ...opts });

const CALL = {
  trace_id: 'a'.repeat(32),
  span_id: '1'.repeat(16),
  started_at: '2024-06-01T11:00:00.123456Z',
  duration_ms: 812.5,
  canonical_operation: 'CANONICAL_OPERATION_CHAT',
  service_name: 'bare-openai',
  provider: 'openai',
  model: 'gpt-4o',
  input_tokens: 1200,
  output_tokens: 300,
  cost_nanos: 6_000_000,
  span_status: 'ok',
};
const UNPRICED = { ...CALL, span_id: '2'.repeat(16), model: 'mystery', output_tokens: undefined, cost_nanos: undefined, cost_unavailable_reason: 'unpriced_model' };
const SUMS = { model_calls: 2, input_tokens: 2400, output_tokens: 300, calls_without_usage: 0 };
const USAGE = {
  groups: [
    { provider: 'openai', model: 'gpt-4o', ...SUMS, model_calls: 1, input_tokens: 1200, cost_nanos: 6_000_000 },
    { provider: 'openai', model: 'mystery', ...SUMS, model_calls: 1, input_tokens: 1200, output_tokens: 0, cost_unavailable_reason: 'unpriced_model' },
  ],
  totals: { ...SUMS, cost_unavailable_reason: 'unpriced_model' },
  truncated: false,
  since: '2024-05-31T12:00:00.000000Z',
  until: '2024-06-01T12:00:00.000000Z',
};

describe('svc llm calls', () => {
  it('sends the filters (durations as RFC 3339) with project_id, --limit and --cursor, and prints the page as JSON when piped', async () => {
    const body = { calls: [CALL], next_cursor: 'c2' };
    t.api.on('GET', '/llm/calls', { body });
    const r = await svc([
      'llm', 'calls', '--project', 'p1', '--since', '6h', '--until', '2024-06-01T11:30:00+02:00', '--model', 'gpt-4o', '--provider', 'openai',
      '--service', 'bare openai', '--limit', '20', '--cursor', 'c1',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(body);
    expect(t.api.requests[0].path).toBe('/api/v1/llm/calls');
    expect(t.api.requests[0].query).toEqual({
      project_id: ['p1'],
      since: ['2024-06-01T06:00:00.000Z'],
      until: ['2024-06-01T11:30:00+02:00'],
      model: ['gpt-4o'],
      provider: ['openai'],
      service_name: ['bare openai'],
      limit: ['20'],
      cursor: ['c1'],
    });
    // Nothing given: nothing sent but the page (the server's default window applies).
    await svc(['llm', 'calls']);
    expect(t.api.requests[1].search).toBe('');
  });

  it('--all follows next_cursor; the table shows the cost in dollars, or why there is none', async () => {
    t.api.on('GET', '/llm/calls', (req) =>
      req.query.cursor?.[0] === 'c2' ? { body: { calls: [UNPRICED], next_cursor: null } } : { body: { calls: [CALL], next_cursor: 'c2' } },
    );
    const all = await svc(['llm', 'calls', '--all']);
    expect(JSON.parse(all.stdout)).toEqual({ calls: [CALL, JSON.parse(JSON.stringify(UNPRICED))], next_cursor: null });
    expect(t.api.requests.map((q) => q.search)).toEqual(['', 'cursor=c2']);
    const table = await svc(['llm', 'calls', '--all', '-o', 'table']);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0].split(/\s+/)).toEqual(['STARTED_AT', 'TRACE_ID', 'SPAN_ID', 'OPERATION', 'SERVICE', 'PROVIDER', 'MODEL', 'INPUT_TOKENS', 'OUTPUT_TOKENS', 'COST_USD', 'DURATION_MS', 'STATUS']);
    expect(lines[1]).toMatch(/chat\s+bare-openai\s+openai\s+gpt-4o\s+1200\s+300\s+0\.006\s+812\.5\s+ok/);
    expect(lines[2]).toMatch(/mystery\s+1200\s+-\s+— \(unpriced_model\)\s+812\.5\s+ok/); // no output tokens reported
  });

  it('refuses bad flags before sending anything (exit 2)', async () => {
    for (const bad of [['--limit', '0'], ['--limit', '201'], ['--since', 'yesterday'], ['--model', ''], ['--since', '1h', '--until', '2h']]) {
      const r = await svc(['llm', 'calls', ...bad]);
      expect(r.code, bad.join(' ')).toBe(2);
      expect(stderrJson(r)).toMatchObject({ error: 'usage_error' });
    }
    expect(t.api.requests).toHaveLength(0);
  });

  it('a missing scope (403) exits 4 with the server error', async () => {
    t.api.on('GET', '/llm/calls', { status: 403, body: { error: 'permission_denied', message: 'this request needs scope llm:read' } });
    const r = await svc(['llm', 'calls']);
    expect(r.code).toBe(4);
    expect(stderrJson(r)).toMatchObject({ error: 'permission_denied', status: 403 });
  });
});

describe('svc llm usage', () => {
  it('sends the same filters (no paging) and prints the answer as JSON when piped', async () => {
    t.api.on('GET', '/llm/usage', { body: USAGE });
    const r = await svc(['llm', 'usage', '--project', 'p1', '--since', '7d', '--provider', 'openai', '--service', 'svc-a']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(USAGE);
    expect(t.api.requests[0].path).toBe('/api/v1/llm/usage');
    expect(t.api.requests[0].query).toEqual({ project_id: ['p1'], since: ['2024-05-25T12:00:00.000Z'], provider: ['openai'], service_name: ['svc-a'] });
    expect((await svc(['llm', 'usage', '--limit', '5'])).code).toBe(2);
  });

  it('the table has a row per provider and model and a TOTAL row; a cut list is noted at a terminal', async () => {
    t.api.on('GET', '/llm/usage', { body: { ...USAGE, truncated: true } });
    const r = await svc(['llm', 'usage', '-o', 'table'], { stderrTTY: true });
    const lines = r.stdout.trim().split('\n');
    expect(lines[0].split(/\s+/)).toEqual(['PROVIDER', 'MODEL', 'CALLS', 'INPUT_TOKENS', 'OUTPUT_TOKENS', 'CALLS_WITHOUT_USAGE', 'COST_USD']);
    expect(lines[1].split(/\s+/)).toEqual(['openai', 'gpt-4o', '1', '1200', '300', '0', '0.006']);
    expect(lines[2]).toMatch(/^openai\s+mystery\s+1\s+1200\s+0\s+0\s+— \(unpriced_model\)$/);
    expect(lines[3]).toMatch(/^TOTAL\s+2\s+2400\s+300\s+0\s+— \(unpriced_model\)$/);
    expect(r.stderr).toContain('the list is cut');
  });
});
