/**
 * Vercel AI SDK (`ai` with `@ai-sdk/openai-compatible`): `generateText` with the `get_weather` tool and two
 * steps, `experimental_telemetry` on: its own `ai.*` keys, read into the agent model by the convention
 * layer (conventions.ts). Ground truth: fixtures/ai-sdk.json.
 */
import { describeFramework } from './framework-test.js';

describeFramework('ai-sdk', {
  outline: ['ai.generateText', '  ai.generateText.doGenerate', '  ai.toolCall', '  ai.generateText.doGenerate'],
  scopes: ['ai', 'ai', 'ai', 'ai'],
  attributes: [
    { span: 'ai.generateText', attributes: { 'ai.operationId': 'ai.generateText', 'ai.telemetry.metadata.sessionId': 'session-weather-1', 'ai.usage.inputTokens': 140, 'ai.usage.outputTokens': 29 } },
    {
      span: 'ai.generateText.doGenerate',
      attributes: { 'ai.response.finishReason': 'tool-calls', 'gen_ai.request.model': 'fake-gpt', 'gen_ai.response.model': 'fake-gpt-2026-01-01', 'gen_ai.usage.input_tokens': 52 },
    },
    { span: 'ai.toolCall', attributes: { 'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': 'get_weather', 'ai.toolCall.id': 'call_weather_1', 'ai.toolCall.args': '{"city":"Paris"}' } },
    { span: 'ai.generateText.doGenerate', attributes: { 'ai.response.finishReason': 'stop', 'gen_ai.usage.output_tokens': 12 } },
  ],
  // ai.generateText is the agent (named by its functionId), doGenerate the model calls, ai.toolCall the tool;
  // the root's token totals are shown but never priced again.
  run: {
    fields: { agent_name: 'weather-agent', session_key: 'session-weather-1', step_count: 4, model_calls: 2, tool_calls: 1, cost_nanos: 198_000 },
    operations: ['CANONICAL_OPERATION_INVOKE_AGENT', 'CANONICAL_OPERATION_CHAT', 'CANONICAL_OPERATION_EXECUTE_TOOL', 'CANONICAL_OPERATION_CHAT'],
    tools: ['get_weather'],
  },
});
