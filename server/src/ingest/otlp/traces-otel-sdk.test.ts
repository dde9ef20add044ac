/**
 * A real client: the official OpenTelemetry JS trace SDK with its OTLP/HTTP exporters (protobuf with gzip,
 * and JSON, which sends hex ids) sends an agent run to the server listening on a port (the sender is shared:
 * testing/otel-agent-run.ts); the stored `spans` and `span_events` rows are read back from DuckDB and
 * compared exactly. Then the logs SDK sends records (one inside a span) and the `logs` rows are compared.
 * The same run read back through the HTTP API: domains/agent-runs/otel-sdk-reads.test.ts.
 */
import { ROOT_CONTEXT, trace, type Span, type HrTime } from '@opentelemetry/api';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { OTLPLogExporter as ProtoLogExporter } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as JsonLogExporter } from '@opentelemetry/exporter-logs-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchLogRecordProcessor, LoggerProvider } from '@opentelemetry/sdk-logs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { hrMicros, readable, sendAgentRun } from '../../testing/otel-agent-run.js';
import { rows } from './test-fixtures.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await testApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.close();
});

const us = (h: HrTime) => String(hrMicros(h));
const timesOf = (s: Span) => readable(s);

describe('the OpenTelemetry JS trace SDK exporting to POST /v1/traces', () => {
  for (const format of ['protobuf', 'json'] as const) {
    it(`${format} exporter (@opentelemetry/exporter-trace-otlp-${format === 'protobuf' ? 'proto, gzip' : 'http'}): the agent run's spans and events as stored`, async () => {
      const p = await projectWithKey(t, ['ingest:write'], `sdk-traces-${format}`);
      const s = await sendAgentRun({ base, format, key: p.key });
      const traceId = s.root.spanContext().traceId;
      const rootId = s.root.spanContext().spanId;
      const none = {
        response_status: null,
        outcome: null,
        agent_name: null,
        agent_id: null,
        observation_key: null,
        session_key: null,
        turn_id: null,
        run_status: null,
        terminal_reason: null,
        tool_name: null,
        model: null,
        provider: null,
        input_tokens: null,
        output_tokens: null,
        reported_cost_nanos: null,
        safety_check: false,
        memory_item_id: null,
        memory_store: null,
        memory_provenance: null,
        memory_trust_label: null,
        context_events: 0,
      };
      const row = (sp: Span, name: string, kind: string, operation: string, extra: Record<string, unknown>) => ({
        trace_id: traceId,
        span_id: sp.spanContext().spanId,
        parent_span_id: sp === s.root ? null : rootId,
        name,
        kind,
        start_us: us(timesOf(sp).startTime),
        end_us: us(timesOf(sp).endTime),
        status_code: 'unset',
        status_message: null,
        service_name: `agent-${format}`,
        environment: 'test',
        scope_name: 'svc-agent-sdk',
        operation_name: operation,
        canonical_operation: `CANONICAL_OPERATION_${operation.toUpperCase()}`,
        ...none,
        ...extra,
      });
      const expected = [
        row(s.root, 'invoke_agent support', 'internal', 'invoke_agent', {
          agent_name: 'support',
          agent_id: `agent-${format}`,
          observation_key: `agent-${format}`,
          session_key: 'conv-42',
          turn_id: 'turn-1',
          run_status: 'completed',
          terminal_reason: 'answered',
        }),
        row(s.chat, 'chat gpt-4o', 'client', 'chat', {
          response_status: 'completed',
          outcome: 'OUTCOME_OK',
          model: 'gpt-4o-2024-08-06',
          provider: 'openai',
          input_tokens: '1200',
          output_tokens: '350',
          context_events: 1,
        }),
        row(s.tool, 'execute_tool search', 'internal', 'execute_tool', { response_status: 'completed', outcome: 'OUTCOME_OK', tool_name: 'search' }),
        row(s.failed, 'execute_tool send_email', 'internal', 'execute_tool', {
          status_code: 'error',
          status_message: 'smtp down',
          response_status: 'failed',
          outcome: 'OUTCOME_ERROR',
          tool_name: 'send_email',
          safety_check: true,
        }),
        row(s.retrieval, 'retrieval kb', 'internal', 'retrieval', {}),
        row(s.memory, 'upsert_memory', 'internal', 'upsert_memory', {
          memory_item_id: 'item-9',
          memory_store: 'mem-store',
          memory_provenance: 'tool_output',
          memory_trust_label: 'MEMORY_TRUST_LABEL_SUSPECT',
        }),
      ].sort((a, b) => a.span_id.localeCompare(b.span_id));

      const stored = await rows(t, 'SELECT * EXCLUDE (project_id, attributes, resource_attributes, ingested_at_us) FROM spans WHERE project_id = $p ORDER BY span_id', {
        p: p.projectId,
      });
      expect(stored).toEqual(expected);
      const attrs = await rows(t, 'SELECT span_id, attributes, resource_attributes FROM spans WHERE project_id = $p', { p: p.projectId });
      const failedAttrs = JSON.parse(attrs.find((r) => r.span_id === s.failed.spanContext().spanId)!.attributes as string);
      expect(failedAttrs).toEqual({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'send_email', 'gen_ai.response.status': 'failed', 'svc.safety.check': true });
      for (const r of attrs) expect(JSON.parse(r.resource_attributes as string)).toMatchObject({ 'service.name': `agent-${format}`, 'deployment.environment.name': 'test' });

      const events = await rows(t, 'SELECT * EXCLUDE (project_id, ts_us) FROM span_events WHERE project_id = $p ORDER BY name', { p: p.projectId });
      expect(events).toEqual([
        {
          trace_id: traceId,
          span_id: s.chat.spanContext().spanId,
          event_index: 0,
          name: 'context.assembly',
          attributes: JSON.stringify({
            'svc.context.assembly.budget_tokens': 8000,
            'svc.context.assembly.assembled_tokens': 0,
            'svc.context.assembly.overflow': false,
            'svc.context.assembly.source_ids': ['doc-7', 'mem-1'],
            'svc.context.assembly.source_kinds': ['document', 'memory'],
            'svc.context.assembly.source_tokens': [900, 300],
          }),
          category: 'context',
          context_kind: 'assembly',
          context_detail: JSON.stringify({
            budget_tokens: 8000,
            assembled_tokens: 0,
            overflow: false,
            sources: [
              { id: 'doc-7', kind: 'document', tokens: 900 },
              { id: 'mem-1', kind: 'memory', tokens: 300 },
            ],
          }),
          context_source_ids: ['doc-7', 'mem-1'],
        },
        {
          trace_id: traceId,
          span_id: s.failed.spanContext().spanId,
          event_index: 0,
          name: 'tool.retry',
          attributes: '{"attempt":2}',
          category: 'tool',
          context_kind: null,
          context_detail: null,
          context_source_ids: null,
        },
      ]);
      const sightings = await rows(t, 'SELECT observation_key, source, api_key_id, sighting_count FROM agent_sightings WHERE project_id = $p', { p: p.projectId });
      expect(sightings).toEqual([{ observation_key: `agent-${format}`, source: 'api_key', api_key_id: p.keyId, sighting_count: '1' }]);
    });
  }
});

describe('the OpenTelemetry JS logs SDK exporting to POST /v1/logs', () => {
  for (const format of ['protobuf', 'json'] as const) {
    it(`${format} exporter (@opentelemetry/exporter-logs-otlp-${format === 'protobuf' ? 'proto' : 'http'}): records as stored, one inside a span`, async () => {
      const p = await projectWithKey(t, ['ingest:write'], `sdk-logs-${format}`);
      const options = { url: `${base}/v1/logs`, headers: { 'x-svc-api-key': p.key } };
      const exporter = format === 'protobuf' ? new ProtoLogExporter(options) : new JsonLogExporter(options);
      const provider = new LoggerProvider({
        resource: resourceFromAttributes({ 'service.name': `logs-${format}`, 'deployment.environment': 'legacy-env' }),
        processors: [new BatchLogRecordProcessor({ exporter })],
      });
      const logger = provider.getLogger('svc-logger', '2.0.0');
      const spanContext = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1 };
      const at = Date.now() - 5_000;
      logger.emit({ timestamp: at, severityNumber: SeverityNumber.WARN, severityText: 'WARN', body: 'disk almost full', attributes: { 'disk.free_mb': 120 } });
      logger.emit({
        timestamp: at + 1,
        severityNumber: SeverityNumber.ERROR,
        severityText: 'ERROR',
        body: { code: 'E42', retry: true },
        context: trace.setSpanContext(ROOT_CONTEXT, spanContext),
      });
      await provider.forceFlush();
      await provider.shutdown();

      const stored = await rows(t, 'SELECT * EXCLUDE (project_id, log_id, observed_us, ingested_at_us, resource_attributes) FROM logs WHERE project_id = $p ORDER BY ts_us', {
        p: p.projectId,
      });
      // body_class null: application logs, not GenAI events (their bodies are not recorded content).
      const common = { service_name: `logs-${format}`, environment: 'legacy-env', scope_name: 'svc-logger', body_class: null };
      expect(stored).toEqual([
        { ts_us: String(at * 1000), severity_number: 13, severity_text: 'WARN', body: 'disk almost full', trace_id: null, span_id: null, attributes: '{"disk.free_mb":120}', ...common },
        {
          ts_us: String((at + 1) * 1000),
          severity_number: 17,
          severity_text: 'ERROR',
          body: '{"code":"E42","retry":true}',
          trace_id: spanContext.traceId,
          span_id: spanContext.spanId,
          attributes: '{}',
          ...common,
        },
      ]);
      const ids = await rows(t, 'SELECT log_id, observed_us FROM logs WHERE project_id = $p', { p: p.projectId });
      for (const r of ids) {
        expect(r.log_id).toMatch(/^[0-9a-f-]{36}$/);
        expect(Number(r.observed_us)).toBeGreaterThanOrEqual(at * 1000);
      }
    });
  }
});
