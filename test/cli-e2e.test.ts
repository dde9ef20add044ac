/**
 * End to end over real HTTP: the server started as a user starts it, the real `svc` binary (stdout and
 * stderr are pipes, so JSON) and the official OpenTelemetry trace SDK. `svc api-keys create` mints the
 * key the SDK sends with; `svc traces list|get`, `svc services` and `svc agent-sessions list|get` read
 * the run back; `svc api-keys list` shows the key and `svc api-keys revoke --yes` ends it (exit 3 after).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSvc, tempConfigHome } from '../cli/src/testing/fake-api.js';
import { startServer, stopServer, type ServerProcess } from '../server/src/testing/server-process.js';
import { sendAgentRun, type AgentRunSpans } from '../server/src/testing/otel-agent-run.js';

const OWNER_KEY = 'svc_cli_e2e_owner_key_0123456789abcdef';
const PROJECT = '7d2e4f60-1a3b-4c5d-8e9f-0a1b2c3d4e5f';
const SERVICE = 'support-bot';
const DAY_MS = 86_400_000;

describe('svc api-keys, traces, services, agent-sessions against the real server', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-cli-e2e-'));
  const home = tempConfigHome();
  let server: ServerProcess;
  /** The owner key is organization-wide; SVC_PROJECT selects the project. */
  let env: Record<string, string>;
  let minted: { id: string; key: string; expires_at: string; project_id: string | null; scopes: string[] };
  let run: AgentRunSpans;
  let traceId: string;

  async function svc(args: string[], extraEnv: Record<string, string> = {}) {
    const r = await spawnSvc(args, { ...env, ...extraEnv });
    expect(r.code, `svc ${args.join(' ')}: ${r.stderr}`).toBe(0);
    return JSON.parse(r.stdout);
  }

  beforeAll(async () => {
    server = await startServer({ SVC_DATA_DIR: dataDir, SVC_INIT_API_KEY: OWNER_KEY, SVC_INIT_PROJECT_ID: PROJECT });
    env = { ...home.env, SVC_API_URL: server.base, SVC_API_KEY: OWNER_KEY, SVC_PROJECT: PROJECT };
    const before = Date.now();
    minted = await svc(['api-keys', 'create', 'cli-e2e ingest', '--scope', 'ingest:write,traces:read', '--scope', 'agents:read']);
    // default expiry: 30 days
    const expires = Date.parse(minted.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 30 * DAY_MS - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 30 * DAY_MS + 1000);
    run = await sendAgentRun({ base: server.base, format: 'protobuf', key: minted.key, serviceName: SERVICE, agentId: 'support-v2' });
    traceId = run.root.spanContext().traceId;
  });

  afterAll(async () => {
    await stopServer(server, dataDir);
    home.cleanup();
  });

  it('svc api-keys create printed the secret once, bound to the active project, with the scopes asked for', () => {
    expect(minted.key).toMatch(/^svc_/);
    expect(minted.project_id).toBe(PROJECT);
    expect([...minted.scopes].sort()).toEqual(['agents:read', 'ingest:write', 'traces:read']);
  });

  it('svc traces list finds the trace with its filters; svc traces get returns the span tree', async () => {
    const list = await svc(['traces', 'list', '--since', '1h', '--service', SERVICE]);
    expect(list.next_cursor).toBeNull();
    expect(list.traces).toHaveLength(1);
    expect(list.traces[0]).toMatchObject({ trace_id: traceId, root_span_name: 'invoke_agent support', root_service_name: SERVICE, span_count: 6, error_count: 1 });
    expect((await svc(['traces', 'list', '--status', 'error', '--name', 'execute_tool send_email'])).traces.map((t: { trace_id: string }) => t.trace_id)).toEqual([traceId]);
    expect((await svc(['traces', 'list', '--service', 'nobody'])).traces).toEqual([]);
    expect((await svc(['traces', 'list', '--attr', 'gen_ai.tool.name=search', '--min-duration', '0'])).traces).toHaveLength(1);

    const tree = await svc(['traces', 'get', traceId]);
    expect(tree).toMatchObject({ trace_id: traceId, span_count: 6, error_count: 1, services: [SERVICE] });
    expect(tree.spans[0]).toMatchObject({ span_id: run.root.spanContext().spanId, depth: 0 });
    expect(tree.spans.slice(1).every((s: { depth: number }) => s.depth === 1)).toBe(true);
    expect((await spawnSvc(['traces', 'get', 'f'.repeat(32)], env)).code).toBe(5);
  });

  it('svc services lists the service with its span counts', async () => {
    const res = await svc(['services', '--since', '1h']);
    expect(res.services).toEqual([expect.objectContaining({ name: SERVICE, span_count: 6, error_span_count: 1 })]);
  });

  it('svc agent-sessions list and get read the session of the run', async () => {
    const list = await svc(['agent-sessions', 'list', '--since', '1h']);
    expect(list).toEqual({ sessions: [expect.objectContaining({ session_key: 'conv-42', run_count: 1 })], next_cursor: null });
    expect(await svc(['agent-sessions', 'get', 'conv-42'])).toMatchObject({ session_key: 'conv-42', run_count: 1 });
    expect((await spawnSvc(['agent-sessions', 'get', 'no-such-session'], env)).code).toBe(5);
  });

  it('svc metrics histogram reaches the histogram endpoint (project_id in the query string)', async () => {
    // No histogram metric was sent here: the server answers for an unknown metric without cells.
    const r = await spawnSvc(['metrics', 'histogram', 'nothing.here', '--step', '1m', '--since', '10m'], env);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(JSON.parse(r.stdout)).toMatchObject({ metric_name: 'nothing.here', step: '1m', cells: [] });
  });

  it('an org-wide key without a project: exit 2 and how to choose one', async () => {
    const r = await spawnSvc(['traces', 'list'], { ...env, SVC_PROJECT: '' });
    expect(r.code).toBe(2);
    const err = JSON.parse(r.stderr);
    expect(err).toMatchObject({ error: 'project_required', status: 400, exit_code: 2 });
    expect(err.message).toContain('svc projects use');
  });

  it('svc projects create NAME creates a project', async () => {
    const p = await svc(['projects', 'create', 'cli e2e']);
    expect(p.name).toBe('cli e2e');
    const keyInOther = await spawnSvc(['traces', 'list'], { ...env, SVC_API_KEY: minted.key, SVC_PROJECT: p.id });
    expect(keyInOther.code).toBe(4); // a project-bound key conflicting with the active project
  });

  it('usage errors send nothing: over 365 days, unknown scope, revoke without --yes', async () => {
    for (const args of [
      ['api-keys', 'create', 'x', '--scope', 'traces:read', '--expires-in', '366d'],
      ['api-keys', 'create', 'x', '--scope', 'traces:write'],
      ['api-keys', 'revoke', minted.id],
    ]) {
      const r = await spawnSvc(args, env);
      expect(r.code, args.join(' ')).toBe(2);
    }
    // ... and what only the server can judge comes back as its 400 (exit 1), creating nothing either
    const huge = await spawnSvc(['api-keys', 'create', 'x'.repeat(5000), '--scope', 'traces:read'], env);
    expect(huge.code).toBe(1);
    expect(JSON.parse(huge.stderr)).toMatchObject({ error: 'invalid_request', status: 400, exit_code: 1 });
    const list = await svc(['api-keys', 'list']);
    expect(list.api_keys.filter((k: { name: string }) => k.name.startsWith('x'))).toEqual([]);
    expect(list.api_keys.find((k: { id: string }) => k.id === minted.id)).toMatchObject({ status: 'active' });
  });

  it('svc api-keys list shows the key; revoke --yes ends it (the key then exits 3)', async () => {
    const list = await svc(['api-keys', 'list']);
    expect(list.next_cursor).toBeNull();
    expect(list.api_keys.find((k: { id: string }) => k.id === minted.id)).toMatchObject({ name: 'cli-e2e ingest', status: 'active', project_id: PROJECT });
    expect(JSON.stringify(list)).not.toContain(minted.key);
    const revoked = await svc(['api-keys', 'revoke', minted.id, '--yes']);
    expect(revoked).toMatchObject({ id: minted.id, status: 'revoked' });
    const after = await spawnSvc(['traces', 'list'], { ...env, SVC_API_KEY: minted.key });
    expect(after.code).toBe(3);
    expect(JSON.parse(after.stderr)).toMatchObject({ status: 401, exit_code: 3 });
  });
});
