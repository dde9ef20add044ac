/**
 * The convention layer: OpenInference, OpenLLMetry/Traceloop and the Vercel AI SDK's `ai.*` keys are
 * read into the GenAI semantic conventions span by span, one declarative table per convention; the
 * GenAI key wins where both are sent; unlisted values stay CANONICAL_OPERATION_UNKNOWN (the closed
 * enumeration is never extended).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { deriveSpan } from './agent-derive.js';
import { CONVENTION_TABLES } from './conventions.js';
import type { KeyValue } from './decode.js';

const kv = (o: Record<string, string | number>): KeyValue[] =>
  Object.entries(o).map(([key, v]) => ({ key, value: typeof v === 'number' ? { intValue: v } : { stringValue: v } }));
const span = (o: Record<string, string | number>, service = 'svc') => deriveSpan(kv(o), service);

describe('OpenInference', () => {
  it('span kinds map to GenAI operations: AGENT, LLM, TOOL, CHAIN, RETRIEVER, EMBEDDING; others stay UNKNOWN', () => {
    const op = (kind: string) => span({ 'openinference.span.kind': kind }).canonicalOperation;
    expect(['AGENT', 'LLM', 'TOOL', 'CHAIN', 'RETRIEVER', 'EMBEDDING', 'RERANKER', 'GUARDRAIL'].map(op)).toEqual([
      'CANONICAL_OPERATION_INVOKE_AGENT',
      'CANONICAL_OPERATION_CHAT',
      'CANONICAL_OPERATION_EXECUTE_TOOL',
      'CANONICAL_OPERATION_INVOKE_WORKFLOW',
      'CANONICAL_OPERATION_RETRIEVAL',
      'CANONICAL_OPERATION_EMBEDDINGS',
      'CANONICAL_OPERATION_UNKNOWN',
      'CANONICAL_OPERATION_UNKNOWN',
    ]);
  });

  it('model, provider, tokens, tool name and call id, session and agent name', () => {
    expect(
      span({ 'openinference.span.kind': 'LLM', 'llm.model_name': 'gpt-4o-mini', 'llm.provider': 'openai', 'llm.token_count.prompt': 12, 'llm.token_count.completion': 5, 'session.id': 's-1' }),
    ).toMatchObject({ model: 'gpt-4o-mini', provider: 'openai', inputTokens: 12, outputTokens: 5, sessionKey: 's-1' });
    expect(span({ 'openinference.span.kind': 'TOOL', 'tool.name': 'get_weather', 'tool_call.id': 'call_1' })).toMatchObject({ toolName: 'get_weather' });
    expect(span({ 'openinference.span.kind': 'AGENT', 'agent.name': 'helper' }, 'shop')).toMatchObject({ agentName: 'helper', observationKey: 'shop/helper' });
  });

  it('LangChain graphs: a CHAIN (or AGENT) span is named by metadata.lc_agent_name; agent.name wins; anything unreadable fills nothing', () => {
    const meta = (m: string, kind = 'CHAIN', extra: Record<string, string> = {}) => span({ 'openinference.span.kind': kind, metadata: m, ...extra }, 'app').agentName;
    expect(meta('{"ls_integration":"langchain_create_agent","lc_agent_name":"weather-agent"}')).toBe('weather-agent');
    expect(span({ 'openinference.span.kind': 'CHAIN', metadata: '{"lc_agent_name":"w"}' }, 'app').observationKey).toBe('app/w');
    expect(meta('{"lc_agent_name":"w"}', 'AGENT', { 'agent.name': 'explicit' })).toBe('explicit');
    expect(meta('{"lc_agent_name":"w"}', 'LLM')).toBeNull();
    for (const bad of ['not json', '{"lc_agent_name":', '{"lc_agent_name":42}', '{"lc_agent_name":""}', '["lc_agent_name"]', '{}', 'null']) expect(meta(bad), bad).toBeNull();
  });
});

describe('OpenLLMetry / Traceloop', () => {
  it('traceloop.span.kind agent, tool and workflow; the entity name is the agent or the tool', () => {
    expect(span({ 'traceloop.span.kind': 'agent', 'traceloop.entity.name': 'planner' })).toMatchObject({ canonicalOperation: 'CANONICAL_OPERATION_INVOKE_AGENT', agentName: 'planner', toolName: null });
    expect(span({ 'traceloop.span.kind': 'tool', 'traceloop.entity.name': 'search' })).toMatchObject({ canonicalOperation: 'CANONICAL_OPERATION_EXECUTE_TOOL', toolName: 'search', agentName: null });
    expect(span({ 'traceloop.span.kind': 'workflow', 'traceloop.entity.name': 'w' })).toMatchObject({ canonicalOperation: 'CANONICAL_OPERATION_INVOKE_WORKFLOW', agentName: null, toolName: null });
    expect(span({ 'traceloop.span.kind': 'task' }).canonicalOperation).toBe('CANONICAL_OPERATION_UNKNOWN');
  });

  it('model spans: llm.request.type and the pre-1.0 token keys', () => {
    expect(
      span({ 'llm.request.type': 'chat', 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4o', 'gen_ai.usage.prompt_tokens': 30, 'gen_ai.usage.completion_tokens': 7 }),
    ).toMatchObject({ canonicalOperation: 'CANONICAL_OPERATION_CHAT', model: 'gpt-4o', provider: 'openai', inputTokens: 30, outputTokens: 7 });
  });
});

describe('Vercel AI SDK (ai.*)', () => {
  it('operation ids: the call is the agent, doGenerate the model call, toolCall the tool; the function id names the agent', () => {
    expect(span({ 'ai.operationId': 'ai.generateText', 'ai.telemetry.functionId': 'support' }, 'web')).toMatchObject({
      canonicalOperation: 'CANONICAL_OPERATION_INVOKE_AGENT',
      agentName: 'support',
      observationKey: 'web/support',
    });
    expect(span({ 'ai.operationId': 'ai.generateText.doGenerate', 'ai.model.id': 'gpt-4o-mini', 'ai.usage.inputTokens': 9, 'ai.usage.outputTokens': 3 })).toMatchObject({
      canonicalOperation: 'CANONICAL_OPERATION_CHAT',
      model: 'gpt-4o-mini',
      inputTokens: 9,
      outputTokens: 3,
      agentName: null,
    });
    expect(span({ 'ai.operationId': 'ai.toolCall', 'ai.toolCall.name': 'get_weather', 'ai.toolCall.id': 'call_9' })).toMatchObject({
      canonicalOperation: 'CANONICAL_OPERATION_EXECUTE_TOOL',
      toolName: 'get_weather',
    });
    expect(span({ 'ai.operationId': 'ai.somethingNew' }).canonicalOperation).toBe('CANONICAL_OPERATION_UNKNOWN');
  });
});

describe('precedence', () => {
  it('"where two conventions say different things on one span, the GenAI key wins"', () => {
    expect(
      span({ 'gen_ai.operation.name': 'chat', 'openinference.span.kind': 'TOOL', 'gen_ai.request.model': 'genai-model', 'llm.model_name': 'oi-model', 'gen_ai.usage.input_tokens': 1, 'llm.token_count.prompt': 99 }),
    ).toMatchObject({ canonicalOperation: 'CANONICAL_OPERATION_CHAT', model: 'genai-model', inputTokens: 1 });
  });

  it('a span of no convention is derived exactly as before (keys of a convention without its marker are not read)', () => {
    expect(span({ 'llm.model_name': 'x', 'tool.name': 't' })).toMatchObject({ canonicalOperation: 'CANONICAL_OPERATION_UNKNOWN', model: null, toolName: null });
  });
});

describe('docs/agent-model.md shows each table', () => {
  it('names every convention and every key a table reads', () => {
    const doc = readFileSync(new URL('../../../../docs/agent-model.md', import.meta.url), 'utf8');
    for (const t of CONVENTION_TABLES) {
      expect(doc, t.name).toContain(`### ${t.name}`);
      for (const r of t.renames) for (const k of r.from) expect(doc, `${t.name} ${k}`).toContain(`\`${k}\``);
    }
  });
});
