/**
 * Vercel AI SDK 7 (`ai` 7 with `@ai-sdk/otel`'s OpenTelemetry integration): GenAI spans as the SDK names
 * them, `invoke_agent` over one `agent_step` per step, each over its `chat` call and `execute_tool`. The
 * session is stated by the app through the integration's `enrichSpan`. Ground truth: fixtures/ai-sdk-7.json.
 */
import { describeFramework } from './framework-test.js';

describeFramework('ai-sdk-7', {
  outline: ['invoke_agent weather-agent', '  step 1', '    chat fake-gpt', '    execute_tool get_weather', '  step 2', '    chat fake-gpt'],
  scopes: Array(6).fill('ai'),
  attributes: [
    { span: 'invoke_agent weather-agent', attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'weather-agent', 'gen_ai.usage.input_tokens': 140, 'gen_ai.usage.output_tokens': 29 } },
    { span: 'step 1', attributes: { 'gen_ai.operation.name': 'agent_step' } },
    { span: 'chat fake-gpt', attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.response.model': 'fake-gpt-2026-01-01', 'gen_ai.usage.input_tokens': 52, 'gen_ai.usage.output_tokens': 17 } },
    { span: 'execute_tool get_weather', attributes: { 'gen_ai.tool.name': 'get_weather', 'gen_ai.tool.call.id': 'call_weather_1', 'gen_ai.tool.call.arguments': '{"city":"Paris"}' } },
  ],
  // `agent_step` is no GenAI operation this service's closed list knows: those steps are
  // CANONICAL_OPERATION_UNKNOWN. The agent span's token totals (140 and 29) are shown, never priced
  // again: only the two chat calls are (52 + 88) x 1000 + (17 + 12) x 2000 nanos.
  run: {
    fields: { agent_name: 'weather-agent', session_key: 'session-weather-1', step_count: 6, model_calls: 2, tool_calls: 1, cost_nanos: 198_000 },
    operations: [
      'CANONICAL_OPERATION_INVOKE_AGENT',
      'CANONICAL_OPERATION_UNKNOWN',
      'CANONICAL_OPERATION_UNKNOWN',
      'CANONICAL_OPERATION_CHAT',
      'CANONICAL_OPERATION_CHAT',
      'CANONICAL_OPERATION_EXECUTE_TOOL',
    ],
    tools: ['get_weather'],
  },
});
