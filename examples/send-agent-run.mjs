#!/usr/bin/env node
/**
 * Sends one small agent run and one log record to svc with the official OpenTelemetry JS SDK, so the
 * quickstart has something to read before you instrument your own agent.
 *
 * Configured only by the standard OpenTelemetry variables, as your own services would be:
 *   OTEL_EXPORTER_OTLP_ENDPOINT   e.g. http://127.0.0.1:8080
 *   OTEL_EXPORTER_OTLP_HEADERS    X-Svc-API-Key=<a key holding ingest:write, bound to one project>
 *
 * The run follows the OpenTelemetry GenAI conventions: an `invoke_agent` root with a `chat` step
 * (model, token usage, the prompt and the reply) and an `execute_tool` step (its arguments and result).
 * It prints the run id (the trace id).
 */
import { context, SpanKind, trace } from '@opentelemetry/api';
import { OTLPLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { LoggerProvider, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';

if (!process.env.OTEL_EXPORTER_OTLP_ENDPOINT || !process.env.OTEL_EXPORTER_OTLP_HEADERS) {
  process.stderr.write('set OTEL_EXPORTER_OTLP_ENDPOINT and OTEL_EXPORTER_OTLP_HEADERS first (see the README quickstart)\n');
  process.exit(2);
}

const resource = resourceFromAttributes({ 'service.name': 'quickstart-agent', 'deployment.environment.name': 'dev' });
const failures = [];
const watch = (exporter) => {
  const exportFn = exporter.export.bind(exporter);
  exporter.export = (items, done) =>
    exportFn(items, (result) => {
      if (result.code !== 0) failures.push(result.error?.message ?? 'export failed');
      done(result);
    });
  return exporter;
};
const tracer = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(watch(new OTLPTraceExporter()))] });
const logs = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor(watch(new OTLPLogExporter()))] });

const t = tracer.getTracer('svc-quickstart');
const root = t.startSpan('invoke_agent helper', {
  kind: SpanKind.INTERNAL,
  attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'helper', 'gen_ai.conversation.id': 'quickstart-conversation' },
});
const parent = trace.setSpan(context.active(), root);
const chat = t.startSpan(
  'chat gpt-4o-mini',
  {
    kind: SpanKind.CLIENT,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.usage.input_tokens': 420,
      'gen_ai.usage.output_tokens': 64,
      'gen_ai.response.status': 'completed',
      // Recorded content: kept and shown only as the project's content policy allows (README quickstart).
      'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'What is the weather in Lisbon?' }] }]),
      'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Sunny, 21 °C.' }], finish_reason: 'stop' }]),
    },
  },
  parent,
);
chat.end();
const tool = t.startSpan(
  'execute_tool get_weather',
  {
    attributes: {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.call.id': 'call-1',
      'gen_ai.response.status': 'completed',
      'gen_ai.tool.call.arguments': JSON.stringify({ city: 'Lisbon' }),
      'gen_ai.tool.call.result': JSON.stringify({ sky: 'sunny', celsius: 21 }),
    },
  },
  parent,
);
tool.end();
root.setAttribute('svc.agent.run.status', 'completed');
root.end();
logs.getLogger('svc-quickstart').emit({ severityText: 'INFO', severityNumber: 9, body: 'the quickstart agent answered', context: parent });

await tracer.forceFlush();
await logs.forceFlush();
await tracer.shutdown();
await logs.shutdown();
if (failures.length > 0) {
  process.stderr.write(`svc refused the export: ${failures[0]}\n`);
  process.exit(1);
}
process.stdout.write(`${root.spanContext().traceId}\n`);
