import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startCliTestEnv, stopCliTestEnv, type CliTestEnv } from '../testing/cli-test-env.js';
import { runInProcess, stderrJson } from '../testing/fake-api.js';
import { contextSummary, formatCostUsd, renderStepTree, type Step } from './agent-runs.js';

const NOW = new Date('2024-06-01T12:00:00.000Z');
const RUN_A = 'a'.repeat(32);
const RUN_B = 'b'.repeat(32);

const run = (over: Record<string, unknown> = {}) => ({
  run_id: RUN_A,
  root_step_id: '1111111111111111',
  agent_name: 'planner',
  observation_key: 'agent:planner',
  status: 'completed',
  started_at: '2024-06-01T11:00:00.000000Z',
  ended_at: '2024-06-01T11:00:01.500000Z',
  duration_ms: 1500.25,
  step_count: 3,
  error_steps: 1,
  tool_calls: 1,
  model_calls: 2,
  cost_nanos: 1_234_567,
  ...over,
});

let t: CliTestEnv;
beforeEach(async () => {
  t = await startCliTestEnv();
});
afterEach(() => stopCliTestEnv(t));

const svc = (args: string[], opts: { stdoutTTY?: boolean; env?: Record<string, string> } = {}) =>
  runInProcess(args, { env: opts.env ?? t.env, now: NOW, stdoutTTY: opts.stdoutTTY });

describe('svc agent-runs list', () => {
  it('sends the filters (status repeated, durations as RFC 3339) with project_id and prints the page', async () => {
    const body = { runs: [run()], next_cursor: 'c2' };
    t.api.on('GET', '/agent-runs', { body });
    const r = await svc([
      'agent-runs', 'list', '--project', 'p1', '--status', 'failed', '--status', 'timed_out,max_steps', '--session', 's 1',
      '--agent', 'agent:planner', '--since', '6h', '--until', '2024-06-01T11:30:00+02:00', '--limit', '20', '--cursor', 'c1',
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(body);
    const req = t.api.requests[0];
    expect(req.method).toBe('GET');
    expect(req.path).toBe('/api/v1/agent-runs');
    expect(req.query).toEqual({
      project_id: ['p1'],
      status: ['failed', 'timed_out', 'max_steps'],
      session_key: ['s 1'],
      observation_key: ['agent:planner'],
      since: ['2024-06-01T06:00:00.000Z'],
      until: ['2024-06-01T11:30:00+02:00'],
      cursor: ['c1'],
      limit: ['20'],
    });
    await svc(['agent-runs', 'list']);
    expect(t.api.requests[1].search).toBe('');
  });

  it('prints a table with the cost in dollars, — when there is none', async () => {
    t.api.on('GET', '/agent-runs', {
      body: {
        runs: [
          run(),
          run({ run_id: RUN_B, agent_name: undefined, status: undefined, cost_nanos: undefined, cost_unavailable_reason: 'unpriced_model', duration_ms: 12 }),
        ],
        next_cursor: null,
      },
    });
    const r = await svc(['agent-runs', 'list', '--no-color'], { stdoutTTY: true });
    expect(r.stdout).toBe(
      [
        'RUN_ID                            AGENT          STATUS     STARTED_AT                   DURATION_MS  STEPS  ERRORS  TOOLS  MODELS  COST_USD',
        `${RUN_A}  planner        completed  2024-06-01T11:00:00.000000Z  1500.25      3      1       1      2       0.001234567`,
        `${RUN_B}  agent:planner  -          2024-06-01T11:00:00.000000Z  12           3      1       1      2       —`,
        '',
      ].join('\n'),
    );
    const json = await svc(['agent-runs', 'list']);
    expect(JSON.parse(json.stdout).runs[1].cost_unavailable_reason).toBe('unpriced_model');
  });

  it('--all follows next_cursor with the same filters', async () => {
    t.api.on('GET', '/agent-runs', (req) =>
      req.query.cursor?.[0] === 'c2' ? { body: { runs: [run({ run_id: RUN_B })], next_cursor: null } } : { body: { runs: [run()], next_cursor: 'c2' } },
    );
    const r = await svc(['agent-runs', 'list', '--all', '--status', 'failed', '--limit', '1']);
    expect(JSON.parse(r.stdout)).toEqual({ runs: [run(), run({ run_id: RUN_B })], next_cursor: null });
    expect(t.api.requests.map((q) => q.search)).toEqual(['status=failed&limit=1', 'status=failed&limit=1&cursor=c2']);
  });

  it('refuses bad flag values before sending anything (exit 2)', async () => {
    const cases: [string[], RegExp][] = [
      [['agent-runs', 'list', '--status', 'done'], /completed, failed, timed_out, cancelled, max_steps/],
      [['agent-runs', 'list', '--status', 'failed,ok'], /"ok"/],
      [['agent-runs', 'list', '--limit', '201'], /at most 200/],
      [['agent-runs', 'list', '--limit', '0'], /positive integer/],
      [['agent-runs', 'list', '--since', 'yesterday'], /--since/],
      [['agent-runs', 'list', '--since', '1h', '--until', '2h'], /before/],
      [['agent-runs', 'list', '--session', ' '], /must not be empty/],
    ];
    for (const [args, message] of cases) {
      const r = await svc(args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(stderrJson(r)).toMatchObject({ error: 'usage_error', message: expect.stringMatching(message) });
    }
    expect(t.api.requests).toHaveLength(0);
  });

  it('keeps the HTTP error (404 exits 5)', async () => {
    t.api.on('GET', `/agent-runs/${RUN_A}`, { status: 404, body: { error: 'not_found', message: 'run not found' } });
    const r = await svc(['agent-runs', 'get', RUN_A, '--project', 'p2']);
    expect(r.code).toBe(5);
    expect(stderrJson(r)).toEqual({ error: 'not_found', message: 'run not found', exit_code: 5, status: 404 });
  });
});

describe('svc agent-runs get', () => {
  it('reads one run and prints it as FIELD/VALUE rows', async () => {
    t.api.on('GET', `/agent-runs/${RUN_A}`, { body: run() });
    const r = await svc(['agent-runs', 'get', RUN_A, '--project', 'p1']);
    expect(JSON.parse(r.stdout)).toEqual(run());
    expect(`${t.api.requests[0].path}?${t.api.requests[0].search}`).toBe(`/api/v1/agent-runs/${RUN_A}?project_id=p1`);
    const table = await svc(['agent-runs', 'get', RUN_A, '-o', 'table']);
    const lines = table.stdout.split('\n');
    expect(lines[0]).toBe('FIELD            VALUE');
    expect(lines).toContain(`run_id           ${RUN_A}`);
    expect(lines).toContain('duration_ms      1500.25');
    expect(lines).toContain('cost_usd         0.001234567');
    expect(lines.some((l) => l.startsWith('cost_nanos'))).toBe(false);
  });

  it('a run id that is not 32 hex digits is a usage error (exit 2) and sends nothing', async () => {
    for (const args of [['get', 'nothex'], ['get', 'nothex', '--graph'], ['context', `${RUN_A}0`]]) {
      const r = await svc(['agent-runs', ...args, '--project', 'p1']);
      expect(r.code, args.join(' ')).toBe(2);
      expect(JSON.parse(r.stderr.trim())).toMatchObject({ error: 'usage_error', message: expect.stringContaining('the run id must be 32 hexadecimal characters') });
    }
    expect(t.api.requests).toHaveLength(0);
  });

  it('--graph reads the graph and prints the steps as a tree by parent', async () => {
    const steps = [
      { step_id: 'r', name: 'invoke_agent planner', canonical_operation: 'invoke_agent', started_at: 'x', ended_at: 'x', duration_ms: 1500, attributes: {}, instrumented: false },
      { step_id: 'm1', parent_step_id: 'r', name: 'chat gpt-4o', canonical_operation: 'chat', outcome: 'OUTCOME_OK', model: 'gpt-4o', provider: 'openai', started_at: 'x', ended_at: 'x', duration_ms: 700.1234, attributes: {}, instrumented: true },
      { step_id: 't1', parent_step_id: 'm1', name: 'execute_tool search', canonical_operation: 'execute_tool', outcome: 'OUTCOME_ERROR', tool_name: 'search', started_at: 'x', ended_at: 'x', duration_ms: 20, attributes: {}, instrumented: false },
      { step_id: 'm2', parent_step_id: 'r', name: 'chat', canonical_operation: 'chat', model: 'm', started_at: 'x', ended_at: 'x', duration_ms: 300, attributes: {}, instrumented: false },
      { step_id: 'o', parent_step_id: 'missing', name: 'orphan', canonical_operation: 'other', started_at: 'x', ended_at: 'x', duration_ms: 1, attributes: {}, instrumented: false },
    ];
    const graph = { run: run(), steps, counts: { steps: 4 }, action_receipts: [] };
    t.api.on('GET', `/agent-runs/${RUN_A}/graph`, { body: graph });
    const r = await svc(['agent-runs', 'get', RUN_A, '--graph']);
    expect(JSON.parse(r.stdout)).toEqual(graph);
    expect(t.api.requests[0].path).toBe(`/api/v1/agent-runs/${RUN_A}/graph`);
    expect(t.api.requests).toHaveLength(1);
    const table = await svc(['agent-runs', 'get', RUN_A, '--graph', '-o', 'table']);
    const tree = table.stdout.slice(table.stdout.indexOf('STEP '));
    expect(tree).toBe(
      [
        'STEP                     STEP_ID  OPERATION     OUTCOME  DURATION_MS  TOOL/MODEL',
        'invoke_agent planner     r        invoke_agent  -        1500         -',
        '  chat gpt-4o            m1       chat          ok       700.123      openai/gpt-4o',
        '    execute_tool search  t1       execute_tool  error    20           search',
        '  chat                   m2       chat          -        300          m',
        'orphan                   o        other         -        1            -',
        '',
      ].join('\n'),
    );
  });
});

describe('svc agent-runs context', () => {
  const ev = (over: Record<string, unknown>) => ({
    event_id: 's1:0',
    run_id: RUN_A,
    span_id: 's1',
    canonical_operation: 'chat',
    category: 'context',
    name: 'context.assembly',
    occurred_at: '2024-06-01T11:00:00.100000Z',
    ...over,
  });

  it('reads every page of the run\'s context events and summarises each kind', async () => {
    const e1 = ev({ context: { kind: 'assembly', assembly: { budget_tokens: 8000, assembled_tokens: 6100, overflow: false, sources: [{ id: 'a' }, { id: 'b' }] } } });
    const e2 = ev({ event_id: 's2:0', span_id: 's2', context: { kind: 'compaction', compaction: { before_count: 40, after_count: 10, ratio: 0.25 } } });
    const e3 = ev({ event_id: 's3:0', span_id: 's3', context: { kind: 'cache', cache: { provider: 'anthropic', outcome: 'hit', reused_tokens: 5000 } } });
    t.api.on('GET', '/agent-events', (req) =>
      req.query.cursor?.[0] === 'n2' ? { body: { events: [e3], next_cursor: null } } : { body: { events: [e1, e2], next_cursor: 'n2' } },
    );
    const r = await svc(['agent-runs', 'context', RUN_A, '--project', 'p1', '--source', 'doc-7']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ events: [e1, e2, e3], next_cursor: null });
    expect(t.api.requests.map((q) => `${q.path}?${q.search}`)).toEqual([
      `/api/v1/agent-events?project_id=p1&run_id=${RUN_A}&category=context&context_source_id=doc-7&limit=500`,
      `/api/v1/agent-events?project_id=p1&run_id=${RUN_A}&category=context&context_source_id=doc-7&limit=500&cursor=n2`,
    ]);
    const table = await svc(['agent-runs', 'context', RUN_A, '-o', 'table']);
    expect(table.stdout.split('\n')).toEqual([
      'TIME                         STEP  KIND        SUMMARY',
      '2024-06-01T11:00:00.100000Z  s1    assembly    assembled 6100/8000 tokens, no overflow, 2 sources',
      '2024-06-01T11:00:00.100000Z  s2    compaction  40→10, ratio 0.25',
      '2024-06-01T11:00:00.100000Z  s3    cache       anthropic hit, reused 5000 tokens',
      '',
    ]);
  });
});

describe('formatting helpers', () => {
  it('formats nanos as dollars with up to 9 decimals', () => {
    expect(formatCostUsd(1)).toBe('0.000000001');
    expect(formatCostUsd(1_500_000_000)).toBe('1.5');
    expect(formatCostUsd(2_000_000_000)).toBe('2');
    expect(formatCostUsd(0)).toBe('0');
    expect(formatCostUsd(123_456_789_012)).toBe('123.456789012');
    expect(formatCostUsd(undefined)).toBe('—');
  });

  it('summaries tolerate missing members; a parent cycle still lists every step', () => {
    expect(contextSummary({ context: { kind: 'assembly', assembly: { overflow: true, sources_truncated: true, sources: [{}] } } } as never)).toBe(
      'assembled ?/? tokens, overflow, 1+ sources',
    );
    expect(contextSummary({ context: { kind: 'compaction', compaction: {} } } as never)).toBe('?→?');
    const s = (id: string, parent: string): Step => ({ step_id: id, parent_step_id: parent, name: id, canonical_operation: 'x', started_at: '', ended_at: '', duration_ms: 1 });
    const out = renderStepTree([s('a', 'b'), s('b', 'a')], false);
    expect(out.split('\n').filter(Boolean)).toHaveLength(3);
  });
});
