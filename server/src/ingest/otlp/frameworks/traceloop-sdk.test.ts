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
});
