/**
 * Containment end to end through the real server process (issue 10 "Tests"): an agent sends spans with
 * key A through the OpenTelemetry trace SDK; one person requests `freeze_writes` on the agent, a second
 * approves; the next export from key A is refused; the lift restores it; no span acknowledged before the
 * freeze is lost.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SpanKind } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, stopServer, type ServerProcess } from '../server/src/testing/server-process.js';

const OWNER_KEY = 'svc_quarantine_e2e_owner_key_0123456789ab';
const PROJECT = '7d1e4b2a-3c5f-4e6a-8b9c-0d1e2f3a4b5c';
const AGENT_ID = 'agent-under-watch';
/** The SDK's ExportResultCode values (@opentelemetry/core): SUCCESS, FAILED. */
const SUCCESS = 0;
const FAILED = 1;
type ExportResult = { code: number; error?: Error };

describe('containment of an agent through the real server: OpenTelemetry SDK exports refused while frozen, restored by the lift', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-quarantine-e2e-'));
  let server: ServerProcess;
  const api = (p: string, init: { method?: string; key?: string; cookie?: string; body?: unknown } = {}) =>
    fetch(`${server.base}/api/v1${p}`, {
      method: init.method ?? 'GET',
      headers: {
        ...(init.cookie ? { cookie: init.cookie, 'x-svc-csrf': '1' } : { 'x-svc-api-key': init.key ?? OWNER_KEY }),
        ...(init.body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });

  /** A person invited as admin, signed in, holding a key of their own for the project. */
  async function person(label: string): Promise<string> {
    const email = `${label}-${Date.now()}@example.com`;
    const password = 'correct horse battery staple';
    const inv = await api('/invitations', { method: 'POST', body: { email, role: 'admin' } });
    expect(inv.status).toBe(201);
    const acc = await api('/invitations/accept', { method: 'POST', key: '', body: { token: (await inv.json()).token, name: label, password } });
    expect(acc.status, await acc.clone().text()).toBe(201);
    const login = await fetch(`${server.base}/api/v1/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-svc-csrf': '1' }, body: JSON.stringify({ email, password }) });
    expect(login.status).toBe(200);
    const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
    const key = await api('/account/api-keys', { method: 'POST', cookie, body: { name: label, scopes: ['quarantine:request', 'quarantine:approve', 'traces:read'], project_id: PROJECT } });
    expect(key.status, await key.clone().text()).toBe(201);
    return (await key.json()).key;
  }

  beforeAll(async () => {
    server = await startServer({ SVC_DATA_DIR: dataDir, SVC_INIT_API_KEY: OWNER_KEY, SVC_INIT_PROJECT_ID: PROJECT });
  });
  afterAll(async () => stopServer(server, dataDir));

  it('freeze, refused export, lift, accepted export; every acknowledged span kept', async () => {
    const agentKey = await (await api('/account/api-keys', { method: 'POST', body: { name: 'agent A', scopes: ['ingest:write'], project_id: PROJECT } })).json();
    const alice = await person('alice');
    const bob = await person('bob');

    // The agent's own SDK: every export's result is recorded (a refused export is a failed result).
    const results: ExportResult[] = [];
    const inner = new OTLPTraceExporter({ url: `${server.base}/v1/traces`, headers: { 'x-svc-api-key': agentKey.key } });
    const exporter: SpanExporter = {
      export: (spans: ReadableSpan[], done: (r: ExportResult) => void) => inner.export(spans, (r) => (results.push(r), done(r))),
      shutdown: () => inner.shutdown(),
      forceFlush: () => inner.forceFlush(),
    };
    const provider = new BasicTracerProvider({ resource: resourceFromAttributes({ 'service.name': 'watched' }), spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const tracer = provider.getTracer('agent');
    const run = async (name: string) => {
      const s = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': AGENT_ID } });
      s.end();
      await provider.forceFlush();
      return s.spanContext().traceId;
    };

    const before = await run('before the freeze');
    expect(results.map((r) => r.code)).toEqual([SUCCESS]);

    const requested = await api(`/quarantines?project_id=${PROJECT}`, { method: 'POST', key: alice, body: { observation_key: AGENT_ID, reason: 'exfiltrating data' } });
    expect(requested.status).toBe(201);
    const q = await requested.json();
    expect((await api(`/quarantines/${q.id}/approve`, { method: 'POST', key: alice })).status).toBe(403);
    const approved = await api(`/quarantines/${q.id}/approve`, { method: 'POST', key: bob });
    expect(await approved.json()).toMatchObject({ status: 'active', credentials: [{ api_key_id: agentKey.id, effect: 'freeze', enforcement: 'verified' }] });

    const during = await run('while frozen');
    expect(results.map((r) => r.code)).toEqual([SUCCESS, FAILED]);

    expect((await api(`/quarantines/${q.id}/lift`, { method: 'POST', key: bob, body: { reason: 'investigated' } })).status).toBe(200);
    const after = await run('after the lift');
    expect(results.map((r) => r.code)).toEqual([SUCCESS, FAILED, SUCCESS]);
    await provider.shutdown();

    const kept = async (traceId: string) => (await api(`/traces/${traceId}?project_id=${PROJECT}`)).status;
    expect([await kept(before), await kept(during), await kept(after)]).toEqual([200, 404, 200]);
  });
});
