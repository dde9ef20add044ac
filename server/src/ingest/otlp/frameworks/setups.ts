/**
 * The framework setups: each runs the same two-step weather tool loop (the model asks for `get_weather`
 * with `{"city":"Paris"}`, the tool answers, the model answers in text) through a real framework package
 * against the fake model server, with the framework's own telemetry sent to the setup's tracer provider.
 *
 * The OpenAI-client setups (OpenInference, OpenLLMetry) instrument the `openai` module by hand
 * (`manuallyInstrument`, since this code is ESM). The instrumentation patches the module's prototypes for
 * the rest of the process, so each of those setups runs in its own process (one test file each; capture.ts
 * runs every setup in a child process).
 */
import { context } from '@opentelemetry/api';
import { WEATHER_RESULT, WEATHER_TOOL, WEATHER_TOOL_DEFINITION, FAKE_REQUEST_MODEL } from '../../../testing/fake-openai.js';
import { inAppSpan, type FrameworkSetup, type SetupContext } from './harness.js';

const QUESTION = 'What is the weather in Paris?';
const SYSTEM = 'You are a weather assistant.';
/** The session id each setup states in its framework's own way, where the framework has one. */
export const SESSION_ID = 'session-weather-1';

/** Vercel AI SDK: `generateText` with one tool, two steps, `experimental_telemetry` with the setup's tracer. */
const aiSdk: FrameworkSetup = {
  name: 'ai-sdk',
  packages: ['ai', '@ai-sdk/openai-compatible', 'zod'],
  async run(c) {
    const { generateText, stepCountIs, tool } = await import('ai');
    const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
    const { z } = await import('zod');
    const provider = createOpenAICompatible({ name: 'fake-openai', baseURL: c.baseURL, apiKey: 'test-key', includeUsage: true });
    const result = await generateText({
      model: provider.chatModel(FAKE_REQUEST_MODEL),
      system: SYSTEM,
      prompt: QUESTION,
      tools: {
        [WEATHER_TOOL]: tool({
          description: WEATHER_TOOL_DEFINITION.function.description,
          inputSchema: z.object({ city: z.string() }),
          execute: async () => WEATHER_RESULT,
        }),
      },
      stopWhen: stepCountIs(2),
      experimental_telemetry: {
        isEnabled: true,
        tracer: c.tracerProvider.getTracer('ai'),
        functionId: 'weather-agent',
        metadata: { sessionId: SESSION_ID, userId: 'user-1' },
      },
    });
    if (result.steps.length !== 2) throw new Error(`ai-sdk: expected 2 steps, got ${result.steps.length}`);
  },
};

/**
 * Vercel AI SDK 7 (installed under the alias `ai-v7`, with its provider as `ai-sdk-openai-compatible-v7`,
 * beside AI SDK 6): `generateText` with the `@ai-sdk/otel` OpenTelemetry integration, which emits GenAI
 * spans (`invoke_agent`, `agent_step`, `chat`, `execute_tool`). AI SDK 7 states Node.js 22 or later as its
 * engine; it runs on the Node.js 20 of this suite as well.
 */
const aiSdk7: FrameworkSetup = {
  name: 'ai-sdk-7',
  packages: ['ai-v7', '@ai-sdk/otel', 'ai-sdk-openai-compatible-v7', 'zod'],
  async run(c) {
    const { generateText, stepCountIs, tool } = await import('ai-v7');
    const { OpenTelemetry } = await import('@ai-sdk/otel');
    const { createOpenAICompatible } = await import('ai-sdk-openai-compatible-v7');
    const { z } = await import('zod');
    const provider = createOpenAICompatible({ name: 'fake-openai', baseURL: c.baseURL, apiKey: 'test-key', includeUsage: true });
    const result = await generateText({
      model: provider.chatModel(FAKE_REQUEST_MODEL),
      system: SYSTEM,
      prompt: QUESTION,
      tools: {
        [WEATHER_TOOL]: tool({
          description: WEATHER_TOOL_DEFINITION.function.description,
          inputSchema: z.object({ city: z.string() }),
          execute: async () => WEATHER_RESULT,
        }),
      },
      stopWhen: stepCountIs(2),
      telemetry: {
        isEnabled: true,
        functionId: 'weather-agent',
        integrations: [
          new OpenTelemetry({
            tracer: c.tracerProvider.getTracer('ai'),
            agentSpanName: 'functionId',
            // The integration states no session; the app adds the GenAI key on the agent span itself.
            enrichSpan: ({ spanType }) => (spanType === 'operation' ? { 'gen_ai.conversation.id': SESSION_ID } : undefined),
          }),
        ],
      },
    });
    if (result.steps.length !== 2) throw new Error(`ai-sdk-7: expected 2 steps, got ${result.steps.length}`);
  },
};

type OpenAiClient = InstanceType<typeof import('openai').default>;

/**
 * The loop with the plain OpenAI client: a completion offering the tool, `runTool` (the app's own code),
 * then a completion with the tool result, streamed (usage requested) when `streamFinal`.
 */
async function openAiLoop(client: OpenAiClient, o: { streamFinal: boolean; runTool: () => Promise<string> }): Promise<void> {
  const messages: Parameters<OpenAiClient['chat']['completions']['create']>[0]['messages'] = [
    { role: 'system', content: SYSTEM },
    { role: 'user', content: QUESTION },
  ];
  const first = await client.chat.completions.create({ model: FAKE_REQUEST_MODEL, messages, tools: [WEATHER_TOOL_DEFINITION] });
  const call = first.choices[0]?.message.tool_calls?.[0];
  if (!call || call.type !== 'function') throw new Error('openai: expected a function tool call');
  messages.push(first.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: await o.runTool() });
  let text = '';
  if (o.streamFinal) {
    const stream = await client.chat.completions.create({
      model: FAKE_REQUEST_MODEL,
      messages,
      tools: [WEATHER_TOOL_DEFINITION],
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
  } else {
    const second = await client.chat.completions.create({ model: FAKE_REQUEST_MODEL, messages, tools: [WEATHER_TOOL_DEFINITION] });
    text = second.choices[0]?.message.content ?? '';
  }
  if (!text) throw new Error('openai: expected a final text');
}

/** The loop under an app span (the instrumentations open none of their own), the final answer streamed. */
const appTurn = (c: SetupContext, client: OpenAiClient) =>
  inAppSpan(c, 'weather-turn', () => openAiLoop(client, { streamFinal: true, runTool: async () => JSON.stringify(WEATHER_RESULT) }));

/** OpenInference (Arize): `OpenAIInstrumentation.manuallyInstrument(openai)`, session via `setSession`. */
const openInferenceOpenAi: FrameworkSetup = {
  name: 'openinference-openai',
  packages: ['openai', '@arizeai/openinference-instrumentation-openai', '@arizeai/openinference-core'],
  async run(c) {
    const { default: OpenAI } = await import('openai');
    const { OpenAIInstrumentation } = await import('@arizeai/openinference-instrumentation-openai');
    const { setSession } = await import('@arizeai/openinference-core');
    const instrumentation = new OpenAIInstrumentation({ tracerProvider: c.tracerProvider });
    instrumentation.manuallyInstrument(OpenAI);
    const client = new OpenAI({ baseURL: c.baseURL, apiKey: 'test-key' });
    await context.with(setSession(context.active(), { sessionId: SESSION_ID }), () => appTurn(c, client));
  },
};

/** OpenLLMetry (Traceloop): the standalone `@traceloop/instrumentation-openai`, `manuallyInstrument(openai)`. */
const traceloopOpenAi: FrameworkSetup = {
  name: 'traceloop-openai',
  packages: ['openai', '@traceloop/instrumentation-openai'],
  async run(c) {
    const { default: OpenAI } = await import('openai');
    const { OpenAIInstrumentation } = await import('@traceloop/instrumentation-openai');
    const instrumentation = new OpenAIInstrumentation();
    instrumentation.setTracerProvider(c.tracerProvider);
    instrumentation.manuallyInstrument(OpenAI);
    const client = new OpenAI({ baseURL: c.baseURL, apiKey: 'test-key' });
    await appTurn(c, client);
  },
};

/**
 * LangChain v1 `createAgent` (a LangGraph ReAct agent) with `ChatOpenAI` and one `tool`, traced by
 * OpenInference's `LangChainInstrumentation.manuallyInstrument(@langchain/core/callbacks/manager)`; the
 * session is stated the LangChain way, as run metadata (`session_id`) and the thread id.
 */
const openInferenceLangChain: FrameworkSetup = {
  name: 'openinference-langchain',
  packages: ['langchain', '@langchain/core', '@langchain/openai', '@langchain/langgraph', '@arizeai/openinference-instrumentation-langchain'],
  async run(c) {
    const CallbackManagerModule = await import('@langchain/core/callbacks/manager');
    const { LangChainInstrumentation } = await import('@arizeai/openinference-instrumentation-langchain');
    const { createAgent, tool } = await import('langchain');
    const { ChatOpenAI } = await import('@langchain/openai');
    const { z } = await import('zod');
    const instrumentation = new LangChainInstrumentation({ tracerProvider: c.tracerProvider });
    instrumentation.manuallyInstrument(CallbackManagerModule);
    const getWeather = tool(async () => JSON.stringify(WEATHER_RESULT), {
      name: WEATHER_TOOL,
      description: WEATHER_TOOL_DEFINITION.function.description,
      schema: z.object({ city: z.string() }),
    });
    const model = new ChatOpenAI({ model: FAKE_REQUEST_MODEL, apiKey: 'test-key', configuration: { baseURL: c.baseURL } });
    const agent = createAgent({ model, tools: [getWeather], systemPrompt: SYSTEM, name: 'weather-agent' });
    const out = await agent.invoke(
      { messages: [{ role: 'user', content: QUESTION }] },
      { configurable: { thread_id: SESSION_ID }, metadata: { session_id: SESSION_ID, user_id: 'user-1' } },
    );
    if (out.messages.length !== 4) throw new Error(`langchain: expected 4 messages, got ${out.messages.length}`);
  },
};

/**
 * OpenLLMetry's full SDK, `@traceloop/node-server-sdk`: `initialize` pointed at our endpoint (its own OTLP
 * exporter, `baseUrl` and `headers`, as a user would configure it), the `openai` module instrumented through
 * `instrumentModules`; the loop runs inside `withAgent` (with `conversationId` and an association property)
 * and the tool inside `withTool`. The SDK registers its provider globally, so this setup needs its own process.
 */
const traceloopSdk: FrameworkSetup = {
  name: 'traceloop-sdk',
  packages: ['@traceloop/node-server-sdk', '@traceloop/instrumentation-openai', 'openai'],
  async run(c) {
    const traceloop = await import('@traceloop/node-server-sdk');
    const { default: OpenAI } = await import('openai');
    traceloop.initialize({
      appName: c.serviceName,
      baseUrl: c.otlp.base,
      headers: c.otlp.headers,
      disableBatch: true,
      silenceInitializationMessage: true,
      traceloopSyncEnabled: false,
      instrumentModules: { openAI: OpenAI as never }, // the SDK types it with the CommonJS declarations of the same module
      processor: c.recordingProcessor as never, // the SDK's own sdk-trace-base copy has the same shape
    });
    const client = new OpenAI({ baseURL: c.baseURL, apiKey: 'test-key' });
    await traceloop.withAgent({ name: 'weather-agent', conversationId: SESSION_ID, associationProperties: { user_id: 'user-1' } }, () =>
      openAiLoop(client, { streamFinal: false, runTool: () => traceloop.withTool({ name: WEATHER_TOOL }, async () => JSON.stringify(WEATHER_RESULT)) }),
    );
    await traceloop.forceFlush();
  },
};

export const SETUPS: FrameworkSetup[] = [aiSdk, aiSdk7, openInferenceOpenAi, traceloopOpenAi, openInferenceLangChain, traceloopSdk];

export function setupNamed(name: string): FrameworkSetup {
  const s = SETUPS.find((x) => x.name === name);
  if (!s) throw new Error(`no setup ${name}`);
  return s;
}
