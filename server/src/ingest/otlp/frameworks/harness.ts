/**
 * The harness that drives real, unmodified agent-framework packages against the fake model server
 * (testing/fake-openai.ts) and exports what they emit with the real OTLP/HTTP protobuf exporter to a
 * server listening on loopback; then reads the traces back through `GET /api/v1/traces/{id}`.
 *
 * Used by the per-framework tests (`*.test.ts` here) and by capture.ts, which writes fixtures/<setup>.json:
 * the ground truth of what each framework emits, as the API answers it.
 */
import type { Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { startFakeOpenAi, type RecordedRequest } from '../../../testing/fake-openai.js';
import { ensureContextManager } from '../../../testing/otel-agent-run.js';

/** The scope of the spans the harness itself opens around a framework's calls (the "app"), never a framework's. */
export const HARNESS_SCOPE = 'svc-framework-harness';

export interface SetupContext {
  /** The provider the framework must send its spans to (not registered globally). */
  tracerProvider: BasicTracerProvider;
  /** For a framework that builds its own provider and exporter: the resource service.name to state, where to export, and a processor to add (it records the spans for the harness). */
  serviceName: string;
  otlp: { base: string; headers: Record<string, string> };
  recordingProcessor: SpanProcessor;
  /** A tracer of the harness's own scope, for an app span around calls that have no parent of their own. */
  appTracer: Tracer;
  /** The fake model server's OpenAI base URL (`http://127.0.0.1:<port>/v1`). */
  baseURL: string;
}

export interface FrameworkSetup {
  /** Fixture and service name part (`fw-<name>`). */
  name: string;
  /** The packages driven (their installed versions go into the fixture). */
  packages: string[];
  /** Runs the two-step weather tool loop through the framework. */
  run(c: SetupContext): Promise<void>;
}

export interface SetupRun {
  serviceName: string;
  /** Distinct trace ids of the emitted spans, in order of first span end. */
  traceIds: string[];
  /** Spans the framework emitted (counted by the SDK before export). */
  spanCount: number;
  /** The requests the fake model server received. */
  modelRequests: RecordedRequest[];
}

/** Runs a setup with a fresh provider exporting to `${base}/v1/traces` under `key`; flushes (a refused export rejects). */
export async function runSetup(setup: FrameworkSetup, o: { base: string; key: string }): Promise<SetupRun> {
  ensureContextManager();
  const serviceName = `fw-${setup.name}`;
  const memory = new InMemorySpanExporter();
  const recordingProcessor = new SimpleSpanProcessor(memory);
  const headers = { 'x-svc-api-key': o.key };
  const tracerProvider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName, 'deployment.environment.name': 'test' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${o.base}/v1/traces`, headers })), recordingProcessor],
  });
  const fake = await startFakeOpenAi();
  let spans: ReturnType<InMemorySpanExporter['getFinishedSpans']>;
  try {
    await setup.run({
      tracerProvider,
      serviceName,
      otlp: { base: o.base, headers },
      recordingProcessor,
      appTracer: tracerProvider.getTracer(HARNESS_SCOPE),
      baseURL: fake.baseURL,
    });
    await tracerProvider.forceFlush();
    spans = memory.getFinishedSpans(); // before shutdown, which empties the exporter
  } finally {
    await tracerProvider.shutdown();
    await fake.close();
  }
  return { serviceName, traceIds: [...new Set(spans.map((s) => s.spanContext().traceId))], spanCount: spans.length, modelRequests: fake.requests };
}

/** Opens an app span of the harness's scope around `fn`, so calls without a parent of their own share one trace. */
export function inAppSpan<T>(c: SetupContext, name: string, fn: () => Promise<T>): Promise<T> {
  return c.appTracer.startActiveSpan(name, async (span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });
}

export interface ApiSpan {
  span_id: string;
  parent_span_id?: string;
  name: string;
  kind: string;
  scope_name?: string;
  status: { code: string; message?: string };
  attributes: Record<string, unknown>;
  resource_attributes: Record<string, unknown>;
  withheld_attribute_keys?: string[];
  events: { name: string; timestamp: string; attributes: Record<string, unknown> }[];
}
export interface ApiTrace {
  trace_id: string;
  span_count: number;
  spans: ApiSpan[];
}

/** `GET /api/v1/traces/{id}`; throws unless 200. */
export async function readTrace(base: string, key: string, traceId: string): Promise<ApiTrace> {
  const res = await fetch(`${base}/api/v1/traces/${traceId}`, { headers: { 'x-svc-api-key': key } });
  const body = (await res.json()) as ApiTrace;
  if (res.status !== 200) throw new Error(`GET /traces/${traceId}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

/** One span of a fixture: parent as an index into the same trace's spans (null for a root). */
export interface FixtureSpan {
  index: number;
  parent: number | null;
  name: string;
  kind: string;
  scope_name: string | null;
  status: { code: string; message?: string };
  attributes: Record<string, unknown>;
  withheld_attribute_keys?: string[];
  events: { name: string; attributes: Record<string, unknown> }[];
}

/** A trace as a fixture: the API's depth-first span order, parents as indexes, no ids or times. */
export function fixtureSpans(t: ApiTrace): FixtureSpan[] {
  const index = new Map(t.spans.map((s, i) => [s.span_id, i]));
  return t.spans.map((s, i) => ({
    index: i,
    parent: s.parent_span_id === undefined ? null : (index.get(s.parent_span_id) ?? null),
    name: s.name,
    kind: s.kind,
    scope_name: s.scope_name ?? null,
    status: s.status,
    attributes: s.attributes,
    ...(s.withheld_attribute_keys ? { withheld_attribute_keys: s.withheld_attribute_keys } : {}),
    events: s.events.map((e) => ({ name: e.name, attributes: e.attributes })),
  }));
}

/** The span tree as `  `-indented names (depth from the parent index), for compact assertions. */
export function outline(spans: FixtureSpan[]): string[] {
  const depth: number[] = [];
  return spans.map((s) => {
    depth[s.index] = s.parent === null ? 0 : depth[s.parent]! + 1;
    return `${'  '.repeat(depth[s.index]!)}${s.name}`;
  });
}
