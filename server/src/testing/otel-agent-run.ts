/**
 * Real OpenTelemetry clients for tests: the official JS trace SDK sending the agent run of issue 4 (an
 * `invoke_agent` root with chat, two tool calls (one failed), retrieval and a memory upsert, one context
 * event) and the logs SDK sending records, both through their OTLP/HTTP exporters (protobuf with gzip, or
 * JSON). Shared by traces-otel-sdk.test.ts (stored rows), domains/agent-runs/otel-sdk-reads.test.ts (the
 * HTTP reads) and test/agent-e2e.test.ts (the real server and the `svc` binary).
 *
 * A failed export rejects (`forceFlush` of the batch processors rejects when the exporter reports a
 * failure), so a refused request fails the test that sent it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type AttributeValue, type Context, type ContextManager, type HrTime, type Span, type Tracer } from '@opentelemetry/api';
import type { Logger } from '@opentelemetry/api-logs';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPTraceExporter as ProtoTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';

export type OtlpFormat = 'protobuf' | 'json';

/** The SDK's own record of a span (start and end times, events with their times, status). */
export const readable = (s: Span) => s as unknown as ReadableSpan;
/** An SDK time in whole microseconds since the epoch (the server stores microseconds, truncating). */
export const hrMicros = (h: HrTime) => h[0] * 1_000_000 + Math.floor(h[1] / 1000);
/** RFC 3339 UTC with microseconds, as the API answers times. */
export function isoFromMicros(us: number): string {
  const ms = Math.floor(us / 1000);
  return `${new Date(ms).toISOString().slice(0, -1)}${String(us - ms * 1000).padStart(3, '0')}Z`;
}

/** An AsyncLocalStorage context manager (the SDK's own lives in @opentelemetry/context-async-hooks, not installed here). */
class AlsContextManager implements ContextManager {
  private als = new AsyncLocalStorage<Context>();
  active(): Context {
    return this.als.getStore() ?? ROOT_CONTEXT;
  }
  with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(ctx: Context, fn: F, thisArg?: ThisParameterType<F>, ...args: A): ReturnType<F> {
    return this.als.run(ctx, () => fn.apply(thisArg, args));
  }
  bind<T>(ctx: Context, target: T): T {
    if (typeof target !== 'function') return target;
    const fn = target as unknown as (...a: unknown[]) => unknown;
    return ((...a: unknown[]) => this.with(ctx, fn, undefined, ...a)) as unknown as T;
  }
  enable(): this {
    return this;
  }
  disable(): this {
    this.als.disable();
    return this;
  }
}

let contextManagerInstalled = false;
/** Registers the global context manager once per process, so `context.with` makes a span active for the logs SDK. */
export function ensureContextManager(): void {
  if (contextManagerInstalled) return;
  context.setGlobalContextManager(new AlsContextManager().enable());
  contextManagerInstalled = true;
}

export interface AgentRunOptions {
  /** Server base URL (`http://127.0.0.1:port`). */
  base: string;
  format: OtlpFormat;
  /** API key sent as x-svc-api-key. */
  key: string;
  /** Resource service.name; default `agent-<format>`. */
  serviceName?: string;
  /** The root's gen_ai.agent.id; default `agent-<format>`. */
  agentId?: string;
  /** The root's gen_ai.conversation.id; default `conv-42`. */
  conversationId?: string;
  /** A reported `svc.cost.nanos` on the chat step. */
  chatCostNanos?: number;
  /** Ends the retrieval span (which states no gen_ai.response.status) with span status ERROR "index offline". */
  retrievalSpanError?: boolean;
  /** Runs with the chat span active (e.g. to emit a log record that carries its trace and span ids). */
  duringChat?: () => void;
  /**
   * Recorded content (none by default): the chat step's `gen_ai.input.messages` and
   * `gen_ai.output.messages`, the `search` tool step's `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`.
   */
  content?: { prompt?: string; completion?: string; toolArguments?: string; toolResult?: string };
}

export interface AgentRunSpans {
  root: Span;
  chat: Span;
  tool: Span;
  failed: Span;
  retrieval: Span;
  memory: Span;
}

/** The context event the chat step carries (attributes as sent). */
export const CONTEXT_ASSEMBLY_ATTRIBUTES = {
  'svc.context.assembly.budget_tokens': 8000,
  'svc.context.assembly.assembled_tokens': 0,
  'svc.context.assembly.overflow': false,
  'svc.context.assembly.source_ids': ['doc-7', 'mem-1'],
  'svc.context.assembly.source_kinds': ['document', 'memory'],
  'svc.context.assembly.source_tokens': [900, 300],
};

/** The chat step's usage: 1200 input and 350 output tokens of gpt-4o-2024-08-06 (response model) by openai. */
export const CHAT_USAGE = { provider: 'openai', model: 'gpt-4o-2024-08-06', inputTokens: 1200, outputTokens: 350 };

/** The agent run of issue 4: invoke_agent root with chat, two tool calls (one failed), retrieval and a memory upsert. */
export async function sendAgentRun(o: AgentRunOptions): Promise<AgentRunSpans> {
  const options = { url: `${o.base}/v1/traces`, headers: { 'x-svc-api-key': o.key }, ...(o.format === 'protobuf' ? { compression: 'gzip' as never } : {}) };
  const exporter = o.format === 'protobuf' ? new ProtoTraceExporter(options) : new JsonTraceExporter(options);
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': o.serviceName ?? `agent-${o.format}`, 'deployment.environment.name': 'test' }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer('svc-agent-sdk', '1.0.0');
  const root = tracer.startSpan('invoke_agent support', {
    kind: SpanKind.INTERNAL,
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'support',
      'gen_ai.agent.id': o.agentId ?? `agent-${o.format}`,
      'gen_ai.conversation.id': o.conversationId ?? 'conv-42',
      'svc.turn.id': 'turn-1',
    },
  });
  const inRoot = trace.setSpan(ROOT_CONTEXT, root);
  const child = (name: string, attributes: Record<string, string | number | boolean | string[] | number[]>, kind = SpanKind.INTERNAL) =>
    tracer.startSpan(name, { kind, attributes }, inRoot);

  const chat = child(
    'chat gpt-4o',
    {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': CHAT_USAGE.provider,
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.response.model': CHAT_USAGE.model,
      'gen_ai.usage.input_tokens': CHAT_USAGE.inputTokens,
      'gen_ai.usage.output_tokens': CHAT_USAGE.outputTokens,
      'gen_ai.response.status': 'completed',
      ...(o.chatCostNanos !== undefined ? { 'svc.cost.nanos': o.chatCostNanos } : {}),
      ...(o.content?.prompt !== undefined ? { 'gen_ai.input.messages': o.content.prompt } : {}),
      ...(o.content?.completion !== undefined ? { 'gen_ai.output.messages': o.content.completion } : {}),
    },
    SpanKind.CLIENT,
  );
  chat.addEvent('context.assembly', CONTEXT_ASSEMBLY_ATTRIBUTES);
  if (o.duringChat) {
    ensureContextManager();
    context.with(trace.setSpan(ROOT_CONTEXT, chat), o.duringChat);
  }
  chat.end();
  const tool = child('execute_tool search', {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'search',
    'gen_ai.tool.call.id': 'call-1',
    'gen_ai.response.status': 'completed',
    ...(o.content?.toolArguments !== undefined ? { 'gen_ai.tool.call.arguments': o.content.toolArguments } : {}),
    ...(o.content?.toolResult !== undefined ? { 'gen_ai.tool.call.result': o.content.toolResult } : {}),
  });
  tool.end();
  const failed = child('execute_tool send_email', {
    'gen_ai.operation.name': 'execute_tool',
    'gen_ai.tool.name': 'send_email',
    'gen_ai.response.status': 'failed',
    'svc.safety.check': true,
  });
  failed.addEvent('tool.retry', { attempt: 2 });
  failed.setStatus({ code: SpanStatusCode.ERROR, message: 'smtp down' });
  failed.end();
  const retrieval = child('retrieval kb', { 'gen_ai.operation.name': 'retrieval', 'gen_ai.data_source.id': 'kb-main' });
  if (o.retrievalSpanError) retrieval.setStatus({ code: SpanStatusCode.ERROR, message: 'index offline' });
  retrieval.end();
  const memory = child('upsert_memory', {
    'gen_ai.operation.name': 'upsert_memory',
    'svc.memory.item.id': 'item-9',
    'gen_ai.data_source.id': 'mem-store',
    'svc.memory.item.provenance': 'tool_output',
    'svc.memory.trust_label': 'MEMORY_TRUST_LABEL_SUSPECT',
  });
  memory.end();
  root.setAttribute('svc.agent.run.status', 'completed');
  root.setAttribute('svc.agent.run.terminal_reason', 'answered');
  root.end();
  try {
    await provider.forceFlush();
  } finally {
    await provider.shutdown();
  }
  return { root, chat, tool, failed, retrieval, memory };
}

export interface SpansClientOptions {
  base: string;
  key: string;
  /** Resource attributes of every span sent. */
  resource: Record<string, AttributeValue>;
  /** The instrumentation scope name (version 1.0.0). */
  scope: string;
}

/** Sends the spans `build` starts and ends through the SDK's OTLP/HTTP JSON exporter; answers what `build` returned. */
export async function sendSpans<T>(o: SpansClientOptions, build: (tracer: Tracer) => T): Promise<T> {
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes(o.resource),
    spanProcessors: [new BatchSpanProcessor(new JsonTraceExporter({ url: `${o.base}/v1/traces`, headers: { 'x-svc-api-key': o.key } }))],
  });
  try {
    const out = build(provider.getTracer(o.scope, '1.0.0'));
    await provider.forceFlush();
    return out;
  } finally {
    await provider.shutdown();
  }
}

export interface LogsClientOptions {
  base: string;
  format: OtlpFormat;
  key: string;
  /** Resource attributes; default service.name `logs-<format>` and deployment.environment.name `test`. */
  resource?: Record<string, string>;
}

/**
 * The logs SDK with its OTLP exporter: `emit` runs with a logger (scope `svc-logger` 2.0.0) and a
 * non-exporting tracer (for active spans whose ids the records carry); the records are flushed after it.
 */
export async function sendLogs<T>(o: LogsClientOptions, emit: (logger: Logger, tracer: ReturnType<BasicTracerProvider['getTracer']>) => T | Promise<T>): Promise<T> {
  ensureContextManager();
  const options = { url: `${o.base}/v1/logs`, headers: { 'x-svc-api-key': o.key } };
  const exporter = o.format === 'protobuf' ? new ProtoLogExporter(options) : new JsonLogExporter(options);
  const provider = new LoggerProvider({
    resource: resourceFromAttributes(o.resource ?? { 'service.name': `logs-${o.format}`, 'deployment.environment.name': 'test' }),
    processors: [new BatchLogRecordProcessor({ exporter })],
  });
  const tracerProvider = new BasicTracerProvider();
  try {
    const out = await emit(provider.getLogger('svc-logger', '2.0.0'), tracerProvider.getTracer('svc-logs-test'));
    await provider.forceFlush();
    return out;
  } finally {
    await provider.shutdown();
    await tracerProvider.shutdown();
  }
}
