/**
 * OpenInference (Arize) `@arizeai/openinference-instrumentation-openai` on the `openai` client
 * (`manuallyInstrument`), session set with `setSession`: a completion offering `get_weather`, then a
 * streamed one with the tool result, under one app span. Stored and read back as sent (no agent run is
 * derived from it yet). Ground truth: fixtures/openinference-openai.json.
 */
import { describeFramework } from './framework-test.js';

const scope = '@arizeai/openinference-instrumentation-openai';
describeFramework('openinference-openai', {
  outline: ['weather-turn', '  OpenAI Chat Completions', '  OpenAI Chat Completions'],
  scopes: ['svc-framework-harness', scope, scope],
  attributes: [
    {
      span: 'OpenAI Chat Completions',
      attributes: {
        'openinference.span.kind': 'LLM',
        'session.id': 'session-weather-1',
        'llm.model_name': 'fake-gpt-2026-01-01',
        'llm.token_count.prompt': 52,
        'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'call_weather_1',
        'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
      },
    },
    // The streamed call: the request model, and no token counts (today's instrumentation, usage chunk or not).
    { span: 'OpenAI Chat Completions', attributes: { 'openinference.span.kind': 'LLM', 'llm.model_name': 'fake-gpt', 'llm.input_messages.3.message.tool_call_id': 'call_weather_1' } },
  ],
  // Bare model calls with no agent span: no run (the trace and its model spans are in /traces).
  run: null,
});
