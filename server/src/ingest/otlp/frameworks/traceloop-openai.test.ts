/**
 * OpenLLMetry (Traceloop) standalone `@traceloop/instrumentation-openai` on the `openai` client
 * (`manuallyInstrument`): a completion offering `get_weather`, then a streamed one with the tool result,
 * under one app span. Stored and read back as sent (no agent run is derived from it yet). Ground truth:
 * fixtures/traceloop-openai.json.
 */
import { describeFramework } from './framework-test.js';

const scope = '@traceloop/instrumentation-openai';
describeFramework('traceloop-openai', {
  outline: ['weather-turn', '  chat fake-gpt', '  chat fake-gpt'],
  scopes: ['svc-framework-harness', scope, scope],
  attributes: [
    { span: 'chat fake-gpt', attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai', 'gen_ai.response.model': 'fake-gpt-2026-01-01', 'gen_ai.usage.input_tokens': 52 } },
    { span: 'chat fake-gpt', attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.response.id': 'chatcmpl-fake-2', 'gen_ai.response.finish_reasons': ['stop'] } },
  ],
  // Bare model calls with no agent span: no run (the trace and its model spans are in /traces).
  run: null,
});
