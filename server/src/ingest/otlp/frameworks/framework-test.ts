/**
 * The shared body of the per-framework tests: one app per test file listening on loopback, the setup run
 * for real against the fake model server, exported with the OTLP/HTTP protobuf exporter, then read back
 * through the API: the trace as emitted (span tree, names, the attribute keys the fixture recorded), the
 * content withheld from a reader without agents:content:read, and what the convention layer makes of it
 * (the run, its steps' operations, tools and costs, or no run).
 */
import { allowAllContent } from '../../../testing/content-policy.js';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { FAKE_REQUEST_MODEL, FAKE_RESPONSE_MODEL, WEATHER_CALL_ID } from '../../../testing/fake-openai.js';
import { fixtureSpans, outline, readTrace, runSetup, type FixtureSpan } from './harness.js';
import { isRecordedContentKey } from '../../../domains/content/content-keys.js';
import { setupNamed } from './setups.js';

const here = dirname(fileURLToPath(import.meta.url));

export interface FrameworkExpectations {
  /**
   * The span tree as `outline()` draws it (names indented by depth), in the API's order. It is compared
   * without sibling order: the OpenTelemetry JS SDK stamps span starts in whole milliseconds, so siblings
   * that start in the same millisecond come in span id order, which is random.
   */
  outline: string[];
  /** Instrumentation scope of each span, in the same order. */
  scopes: string[];
  /** Attributes (a subset) that a span of the name carries, as the API answers them. */
  attributes: { span: string; attributes: Record<string, unknown> }[];
  /**
   * What the convention layer makes of the trace: the run as `GET /agent-runs/{id}` answers it (a
   * subset), its steps' canonical operations, and its tool names; or null when the trace holds no agent
   * span in any supported convention (then it is no run: 404).
   */
  run: { fields: Record<string, unknown>; operations: string[]; tools: string[] } | null;
}

/** A list compared without its order. */
const unordered = <T>(xs: T[]) => xs.map((x) => JSON.stringify(x)).sort();

export function describeFramework(name: string, want: FrameworkExpectations): void {
  const setup = setupNamed(name);
  describe(`framework ${name} (${setup.packages.join(', ')}) exported over OTLP/HTTP protobuf`, () => {
    let t: TestApp;
    let base: string;
    beforeAll(async () => {
      t = await testApp();
      base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(async () => {
      await t?.close();
    });

    it('the trace is stored as emitted: span tree, names, scopes, the attributes of fixtures/<setup>.json (a tool loop of two model calls)', async () => {
      const { key, projectId } = await projectWithKey(t, ['ingest:write', 'traces:read', 'agents:read', 'agents:content:read', 'llm:read', 'llm:write'], `fw-${name}`);
      await allowAllContent(t, projectId);
      const run = await runSetup(setup, { base, key });

      // The framework really drove the two-step tool loop against the model server.
      const chats = run.modelRequests.filter((r) => r.path === '/v1/chat/completions');
      expect(chats).toHaveLength(2);
      expect(JSON.stringify(chats[1]!.body)).toContain(WEATHER_CALL_ID);

      expect(run.traceIds).toHaveLength(1);
      const traceId = run.traceIds[0]!;
      const res = await fetch(`${base}/api/v1/traces?service=${run.serviceName}`, { headers: { 'x-svc-api-key': key } });
      const list = (await res.json()) as { traces: { trace_id: string; span_count: number; root_span_name: string; error_count: number }[] };
      expect(res.status, JSON.stringify(list)).toBe(200);
      expect(list.traces.map((x) => [x.trace_id, x.span_count, x.root_span_name, x.error_count])).toEqual([
        [traceId, want.outline.length, want.outline[0], 0],
      ]);

      const tr = await readTrace(base, key, traceId);
      expect(tr.span_count).toBe(run.spanCount);
      const spans = fixtureSpans(tr);
      expect(unordered(outline(spans).map((line, i) => [line, spans[i]!.scope_name]))).toEqual(unordered(want.outline.map((line, i) => [line, want.scopes[i]])));
      expect(spans.every((s) => s.withheld_attribute_keys === undefined)).toBe(true);
      for (const w of want.attributes) expect(spans).toContainEqual(expect.objectContaining({ name: w.span, attributes: expect.objectContaining(w.attributes) }));

      // The committed fixture is what this package version emits: same tree, same attribute keys per span.
      // (A framework upgrade that changes what it emits fails here: rerun capture.ts and review the diff.)
      const fixture = JSON.parse(readFileSync(join(here, 'fixtures', `${name}.json`), 'utf8')) as { traces: { spans: FixtureSpan[] }[] };
      const shape = (ss: FixtureSpan[]) =>
        unordered(ss.map((s) => ({ parent: s.parent === null ? null : ss[s.parent]!.name, name: s.name, kind: s.kind, status: s.status.code, keys: Object.keys(s.attributes).sort() })));
      expect(shape(spans)).toEqual(shape(fixture.traces[0]!.spans));

      // The framework's own content keys are recorded content: a reader without agents:content:read gets
      // none of them (they are named in withheld_attribute_keys instead).
      const reader = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'reader', scopes: ['traces:read'], project_id: projectId } });
      const withheld = await readTrace(base, reader.json().key, traceId);
      const visible = withheld.spans.flatMap((s) => Object.keys(s.attributes));
      expect(visible.filter(isRecordedContentKey)).toEqual([]);
      expect(withheld.spans.flatMap((s) => s.withheld_attribute_keys ?? []).length).toBeGreaterThan(0);

      // The convention layer: the framework's own keys read into the agent model, priced from the
      // project's price table (1 and 2 US dollars per million input and output tokens, so 1000 and 2000
      // nanos per token) for the request and the response model names the fake server uses.
      for (const model of [FAKE_REQUEST_MODEL, FAKE_RESPONSE_MODEL]) {
        const put = await t.call({ method: 'PUT', url: `/api/v1/llm/pricing?project_id=${projectId}`, payload: { model, input_usd_per_million_tokens: 1, output_usd_per_million_tokens: 2 } });
        expect(put.statusCode, put.body).toBe(200);
      }
      // Every model request is one model call, run or not (`GET /llm/calls`), with no recorded content.
      const callsRes = await fetch(`${base}/api/v1/llm/calls?service_name=${run.serviceName}`, { headers: { 'x-svc-api-key': key } });
      const { calls } = (await callsRes.json()) as { calls: { trace_id: string; model?: string }[] };
      expect(callsRes.status).toBe(200);
      expect(calls.map((c) => c.trace_id)).toEqual(chats.map(() => traceId));
      expect(calls.every((c) => c.model !== undefined)).toBe(true);
      expect(JSON.stringify(calls)).not.toContain('weather in Paris');

      // The agent model.
      const runRes = await fetch(`${base}/api/v1/agent-runs/${traceId}/graph`, { headers: { 'x-svc-api-key': key } });
      if (want.run === null) {
        expect(runRes.status).toBe(404);
        return;
      }
      const graph = (await runRes.json()) as { run: Record<string, unknown>; steps: { canonical_operation: string; tool_name?: string; cost_nanos?: number }[] };
      expect(runRes.status, JSON.stringify(graph)).toBe(200);
      expect(graph.run).toMatchObject(want.run.fields);
      expect(unordered(graph.steps.map((s) => s.canonical_operation))).toEqual(unordered(want.run.operations));
      expect(graph.steps.flatMap((s) => (s.tool_name ? [s.tool_name] : []))).toEqual(want.run.tools);
      // The run's root (only it: not the nested spans that also name the agent) is one sighting of the
      // agent by the key that sent it.
      const identity = await fetch(`${base}/api/v1/agent-identities/${encodeURIComponent(String(graph.run.observation_key))}`, { headers: { 'x-svc-api-key': key } });
      expect(await identity.json()).toMatchObject({ observation_key: `${run.serviceName}/${graph.run.agent_name}`, sighting_count: 1, credentials: [{ source: 'api_key', sighting_count: 1 }] });
      // Nothing is priced twice: the step costs add up to the run cost (or nothing is priced at all), and
      // the model calls of /llm/usage cost what the run costs.
      const stepCosts = graph.steps.reduce((a, s) => a + (s.cost_nanos ?? 0), 0);
      if (typeof graph.run.cost_nanos === 'number') expect(stepCosts).toBe(graph.run.cost_nanos);
      else expect(stepCosts).toBe(0);
      const usage = await fetch(`${base}/api/v1/llm/usage?service_name=${run.serviceName}`, { headers: { 'x-svc-api-key': key } });
      expect(((await usage.json()) as { totals: Record<string, unknown> }).totals).toMatchObject({ model_calls: graph.run.model_calls, cost_nanos: graph.run.cost_nanos });
    });
  });
}
