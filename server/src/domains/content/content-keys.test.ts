/**
 * The one table of recorded content: every content key of GenAI, OpenInference, OpenLLMetry and the
 * Vercel AI SDK is withheld from a reader without `agents:content:read`, exactly as `gen_ai.*` content
 * is. Before this table only `gen_ai.*` content keys were withheld: the frameworks' own keys came back in
 * clear to a key holding only `traces:read` (or `logs:read`).
 */
import { allowAllContent } from '../../testing/content-policy.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertLogs, insertSpans, newTraceId } from '../../storage/telemetry/duckdb/trace-log-fixtures.js';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { CONTENT_CLASSES, CONTENT_KEYS, contentClassOf, isRecordedContentKey } from './content-keys.js';

/** What each framework writes, as its instrumentation names it (one sample key per row of the table). */
const FRAMEWORK_CONTENT: Record<string, string> = {
  'input.value': '{"question":"what is my balance?"}',
  'output.value': 'Your balance is 12 EUR',
  'llm.input_messages.0.message.content': 'what is my balance?',
  'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"account":"42"}',
  'llm.prompt_template.variables': '{"name":"Ada"}',
  'retrieval.documents.0.document.content': 'account 42 belongs to Ada',
  'traceloop.entity.input': '{"args":["balance"]}',
  'traceloop.entity.output': '"12 EUR"',
  'ai.prompt': '{"prompt":"what is my balance?"}',
  'ai.prompt.messages': '[{"role":"user","content":"what is my balance?"}]',
  'ai.response.text': 'Your balance is 12 EUR',
  'ai.toolCall.args': '{"account":"42"}',
  'ai.toolCall.result': '{"balance":12}',
  'gen_ai.input.messages': '[{"role":"user"}]',
};
/** Keys of the same frameworks that are metadata, not content: they stay readable. */
const FRAMEWORK_METADATA: Record<string, unknown> = {
  'openinference.span.kind': 'LLM',
  'llm.model_name': 'gpt-4o-mini',
  'llm.token_count.prompt': 12,
  'tool.name': 'get_balance',
  'traceloop.span.kind': 'tool',
  'traceloop.entity.name': 'get_balance',
  'ai.model.id': 'gpt-4o-mini',
  'ai.usage.inputTokens': 12,
  'gen_ai.request.model': 'gpt-4o-mini',
};

describe('the content-key table', () => {
  it('classifies every sample key, whatever its case, into a content class of the closed list', () => {
    for (const key of Object.keys(FRAMEWORK_CONTENT)) {
      expect(contentClassOf(key), key).toBeDefined();
      expect(CONTENT_CLASSES).toContain(contentClassOf(key));
      expect(isRecordedContentKey(key.toUpperCase()), key).toBe(true);
    }
    expect(contentClassOf('ai.toolCall.args')).toBe('tool_arguments');
    expect(contentClassOf('gen_ai.tool.call.result')).toBe('tool_arguments');
    expect(contentClassOf('input.value')).toBe('model_transcript');
  });

  it('leaves metadata keys alone (model, tokens, tool name, span kinds)', () => {
    for (const key of Object.keys(FRAMEWORK_METADATA)) expect(isRecordedContentKey(key), key).toBe(false);
  });

  it('every row is lower case and names one of the closed classes; no key is listed twice', () => {
    for (const r of CONTENT_KEYS) {
      expect(r.key).toBe(r.key.toLowerCase());
      expect(CONTENT_CLASSES).toContain(r.contentClass);
    }
    const ids = CONTENT_KEYS.map((r) => `${r.match}:${r.key}`);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('reads withhold every convention\'s content keys without agents:content:read', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ clock: fixedClock('2024-06-01T12:00:00.000Z') });
  });
  afterAll(async () => t.close());
  const db = () => t.duck;
  const get = (key: string, url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key });

  it('span attributes, span events and the attr filter', async () => {
    const { projectId, key } = await projectWithKey(t, ['traces:read']);
    const trace = newTraceId();
    const attributes = { ...FRAMEWORK_CONTENT, ...FRAMEWORK_METADATA };
    await insertSpans(db(), [
      { projectId, traceId: trace, name: 'chat', start: '2024-06-01T11:00:00Z', attributes, events: [{ name: 'log', at: '2024-06-01T11:00:00Z', attributes: FRAMEWORK_CONTENT }] },
    ]);
    const span = (await get(key, `/traces/${trace}`)).json().spans[0];
    expect(span.attributes).toEqual(FRAMEWORK_METADATA);
    expect(span.withheld_attribute_keys).toEqual(Object.keys(FRAMEWORK_CONTENT).sort());
    expect(span.events[0].attributes).toEqual({});
    for (const k of ['input.value', 'ai.toolCall.args', 'traceloop.entity.input'])
      expect((await get(key, `/traces?attr=${encodeURIComponent(`${k}=x`)}`)).statusCode, k).toBe(403);

    const reader = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'c', scopes: ['traces:read', 'agents:content:read'], project_id: projectId } });
    await allowAllContent(t, projectId);
    const full = (await get(reader.json().key, `/traces/${trace}`)).json().spans[0];
    expect(full.attributes).toEqual(attributes);
    expect(full.withheld_attribute_keys).toBeUndefined();
  });

  it('log attributes and the log field list', async () => {
    const { projectId, key } = await projectWithKey(t, ['logs:read']);
    await insertLogs(db(), [{ projectId, at: '2024-06-01T11:30:00Z', body: 'answered', attributes: { ...FRAMEWORK_CONTENT, ...FRAMEWORK_METADATA } }]);
    const log = (await get(key, '/logs?since=2024-06-01T00:00:00Z')).json().logs[0];
    expect(log.attributes).toEqual(FRAMEWORK_METADATA);
    const fields = (await get(key, '/logs/fields?since=2024-06-01T00:00:00Z')).json();
    const names = JSON.stringify(fields);
    for (const k of Object.keys(FRAMEWORK_CONTENT)) expect(names, k).not.toContain(`"${k}"`);
    expect(names).toContain('"llm.model_name"');
  });
});

describe('docs/agent-model.md shows the table', () => {
  it('lists every row with its class (a row added here and not there fails)', async () => {
    const { readFileSync } = await import('node:fs');
    const doc = readFileSync(new URL('../../../../docs/agent-model.md', import.meta.url), 'utf8');
    for (const r of CONTENT_KEYS) expect(doc, r.key).toContain(`| \`${r.key}${r.match === 'prefix' ? '*' : ''}\` | \`${r.contentClass}\` |`);
  });
});
