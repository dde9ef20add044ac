/**
 * LangChain v1 `createAgent` (LangGraph) with `ChatOpenAI` and one tool, traced by OpenInference's
 * `@arizeai/openinference-instrumentation-langchain` (`manuallyInstrument` of the callback manager); the
 * session given as run metadata. Its top CHAIN span roots a run (docs/agent-model.md "Run").
 * Ground truth: fixtures/openinference-langchain.json.
 */
import { describeFramework } from './framework-test.js';

const scope = '@arizeai/openinference-instrumentation-langchain';
describeFramework('openinference-langchain', {
  outline: [
    'weather-agent',
    '  __start__',
    '  model_request',
    '    ChatOpenAI',
    '    RunnableLambda',
    '  tools',
    '    get_weather',
    '  model_request',
    '    ChatOpenAI',
    '    RunnableLambda',
  ],
  scopes: Array(10).fill(scope),
  attributes: [
    { span: 'weather-agent', attributes: { 'openinference.span.kind': 'CHAIN', 'session.id': 'session-weather-1' } },
    { span: 'ChatOpenAI', attributes: { 'openinference.span.kind': 'LLM', 'llm.model_name': 'fake-gpt', 'llm.token_count.prompt': 52, 'llm.finish_reason': 'tool_calls' } },
    { span: 'get_weather', attributes: { 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'session.id': 'session-weather-1' } },
    { span: 'ChatOpenAI', attributes: { 'llm.token_count.completion': 12, 'llm.output_messages.0.message.content': 'It is sunny and 21 °C in Paris.' } },
  ],
  // The LangChain agent's root is a CHAIN span (a workflow) at the top of a trace with no agent span: it
  // roots the run, named by the agent name LangChain puts in the metadata (lc_agent_name). Every graph
  // node is a workflow step; the two ChatOpenAI calls are the model calls, priced from their request model
  // (52 + 88 input tokens x 1000 + 17 + 12 output tokens x 2000 nanos).
  run: {
    fields: { agent_name: 'weather-agent', session_key: 'session-weather-1', step_count: 10, model_calls: 2, tool_calls: 1, cost_nanos: 198_000 },
    operations: [
      ...Array(7).fill('CANONICAL_OPERATION_INVOKE_WORKFLOW'),
      'CANONICAL_OPERATION_CHAT',
      'CANONICAL_OPERATION_CHAT',
      'CANONICAL_OPERATION_EXECUTE_TOOL',
    ],
    tools: ['get_weather'],
  },
});
