/**
 * OpenLLMetry's full SDK `@traceloop/node-server-sdk`, initialized with our endpoint as its `baseUrl` and
 * our key in `headers` (its own OTLP exporter): `withAgent` around two `openai` completions and a `withTool`.
 * Stored and read back as sent (no agent run is derived from it yet). Ground truth: fixtures/traceloop-sdk.json.
 */
import { describeFramework } from './framework-test.js';

const sdk = '@traceloop/node-server-sdk';
const openai = '@traceloop/instrumentation-openai';
describeFramework('traceloop-sdk', {
  outline: ['weather-agent.agent', '  chat fake-gpt', '  get_weather.tool', '  chat fake-gpt'],
  scopes: [sdk, openai, sdk, openai],
  attributes: [
    {
      span: 'weather-agent.agent',
      attributes: { 'traceloop.span.kind': 'agent', 'gen_ai.agent.name': 'weather-agent', 'gen_ai.conversation.id': 'session-weather-1', 'traceloop.association.properties.user_id': 'user-1' },
    },
    { span: 'get_weather.tool', attributes: { 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'get_weather', 'gen_ai.conversation.id': 'session-weather-1' } },
    { span: 'chat fake-gpt', attributes: { 'gen_ai.agent.name': 'weather-agent', 'gen_ai.usage.input_tokens': 88, 'gen_ai.response.finish_reasons': ['stop'] } },
  ],
  // withAgent is the agent (traceloop.span.kind agent, named by traceloop.entity.name), withTool the tool.
  run: {
    fields: { agent_name: 'weather-agent', session_key: 'session-weather-1', step_count: 4, model_calls: 2, tool_calls: 1, cost_nanos: 198_000 },
    operations: ['CANONICAL_OPERATION_INVOKE_AGENT', 'CANONICAL_OPERATION_CHAT', 'CANONICAL_OPERATION_EXECUTE_TOOL', 'CANONICAL_OPERATION_CHAT'],
    tools: ['get_weather'],
  },
});
