/**
 * Instrumentation conventions normalized into the OpenTelemetry GenAI semantic conventions, span by
 * span, before the agent model is derived (agent-derive.ts). GenAI stays the native model: each other
 * convention is ONE declarative table saying which of its keys gives which GenAI key, so adding a
 * convention is adding a table. docs/agent-model.md shows the tables.
 *
 * Rules:
 * - A convention applies to a span that carries its marker key.
 * - A GenAI key the span sent itself always wins: a table only fills what is missing.
 * - Operations are mapped to the GenAI operation names (and so to the closed canonical operations);
 *   a value a table does not list maps to nothing, and the step stays CANONICAL_OPERATION_UNKNOWN.
 * - Tables apply in the order listed; the first one to fill a key wins.
 */
import { ATTR } from '../../domains/agent-runs/model.js';
import type { AnyValue } from './decode.js';

export interface Rename {
  /** The GenAI key filled. */
  to: string;
  /** The convention's keys, first present wins. */
  from: readonly string[];
  /** A value mapping (the convention's value -> the GenAI value); a value not listed fills nothing. */
  values?: Readonly<Record<string, string>>;
  /** Fill only when another key of the span has one of these values (e.g. an entity name is a tool name on tool spans). */
  when?: { key: string; values: readonly string[] };
  /** The source key holds a JSON object as text: take this member of it (a non-empty string). */
  member?: string;
}

export interface ConventionTable {
  name: string;
  /** The span carries this convention when it has at least one of these keys. */
  markers: readonly string[];
  renames: readonly Rename[];
}

/** OpenInference (Arize): `openinference.span.kind` and the `llm.*`, `tool.*`, `session.*` keys. */
const OPENINFERENCE: ConventionTable = {
  name: 'OpenInference',
  markers: ['openinference.span.kind'],
  renames: [
    {
      to: ATTR.operationName,
      from: ['openinference.span.kind'],
      values: { LLM: 'chat', TOOL: 'execute_tool', AGENT: 'invoke_agent', CHAIN: 'invoke_workflow', RETRIEVER: 'retrieval', EMBEDDING: 'embeddings' },
    },
    { to: ATTR.agentName, from: ['agent.name'] },
    // LangChain's createAgent runs as a graph whose spans are CHAIN spans; the agent's name is in the metadata.
    { to: ATTR.agentName, from: ['metadata'], member: 'lc_agent_name', when: { key: 'openinference.span.kind', values: ['CHAIN', 'AGENT'] } },
    { to: ATTR.requestModel, from: ['llm.model_name', 'embedding.model_name'] },
    { to: ATTR.providerName, from: ['llm.provider'] },
    { to: ATTR.system, from: ['llm.system'] },
    { to: ATTR.inputTokens, from: ['llm.token_count.prompt'] },
    { to: ATTR.outputTokens, from: ['llm.token_count.completion'] },
    { to: ATTR.toolName, from: ['tool.name'] },
    { to: ATTR.toolCallId, from: ['tool_call.id', 'tool.id'] },
    { to: ATTR.conversationId, from: ['session.id'] },
  ],
};

/** OpenLLMetry / Traceloop: `traceloop.span.kind`, `traceloop.entity.*`, and its pre-1.0 GenAI keys. */
const OPENLLMETRY: ConventionTable = {
  name: 'OpenLLMetry',
  markers: ['traceloop.span.kind', 'llm.request.type', 'traceloop.entity.name', 'gen_ai.usage.prompt_tokens', 'gen_ai.usage.completion_tokens'],
  renames: [
    { to: ATTR.operationName, from: ['traceloop.span.kind'], values: { agent: 'invoke_agent', tool: 'execute_tool', workflow: 'invoke_workflow' } },
    { to: ATTR.operationName, from: ['llm.request.type'], values: { chat: 'chat', completion: 'text_completion', embedding: 'embeddings' } },
    { to: ATTR.agentName, from: ['traceloop.entity.name'], when: { key: 'traceloop.span.kind', values: ['agent'] } },
    { to: ATTR.toolName, from: ['traceloop.entity.name'], when: { key: 'traceloop.span.kind', values: ['tool'] } },
    { to: ATTR.inputTokens, from: ['gen_ai.usage.prompt_tokens'] },
    { to: ATTR.outputTokens, from: ['gen_ai.usage.completion_tokens'] },
    { to: ATTR.conversationId, from: ['traceloop.association.properties.conversation_id', 'traceloop.association.properties.session_id'] },
  ],
};

/** The Vercel AI SDK's own `ai.*` keys (its `gen_ai.*` keys, where it sends them, are read as they are). */
const AI_SDK: ConventionTable = {
  name: 'Vercel AI SDK',
  markers: ['ai.operationId'],
  renames: [
    {
      to: ATTR.operationName,
      from: ['ai.operationId'],
      values: {
        'ai.generateText': 'invoke_agent',
        'ai.streamText': 'invoke_agent',
        'ai.generateObject': 'invoke_agent',
        'ai.streamObject': 'invoke_agent',
        'ai.generateText.doGenerate': 'chat',
        'ai.streamText.doStream': 'chat',
        'ai.generateObject.doGenerate': 'chat',
        'ai.streamObject.doStream': 'chat',
        'ai.toolCall': 'execute_tool',
        'ai.embed.doEmbed': 'embeddings',
        'ai.embedMany.doEmbed': 'embeddings',
      },
    },
    { to: ATTR.agentName, from: ['ai.telemetry.functionId'], when: { key: 'ai.operationId', values: ['ai.generateText', 'ai.streamText', 'ai.generateObject', 'ai.streamObject'] } },
    { to: ATTR.requestModel, from: ['ai.model.id'] },
    { to: ATTR.responseModel, from: ['ai.response.model'] },
    { to: ATTR.inputTokens, from: ['ai.usage.inputTokens', 'ai.usage.promptTokens', 'ai.usage.tokens'] },
    { to: ATTR.outputTokens, from: ['ai.usage.outputTokens', 'ai.usage.completionTokens'] },
    { to: ATTR.toolName, from: ['ai.toolCall.name'] },
    { to: ATTR.toolCallId, from: ['ai.toolCall.id'] },
    { to: ATTR.conversationId, from: ['ai.telemetry.metadata.sessionId', 'ai.telemetry.metadata.conversationId'] },
  ],
};

export const CONVENTION_TABLES: readonly ConventionTable[] = [OPENINFERENCE, OPENLLMETRY, AI_SDK];

/** Every key a table reads (the marker and source keys), so ingestion collects only what it needs. */
export const CONVENTION_KEYS: ReadonlySet<string> = new Set(
  CONVENTION_TABLES.flatMap((t) => [...t.markers, ...t.renames.flatMap((r) => [...r.from, ...(r.when ? [r.when.key] : [])])]),
);

type Attrs = Partial<Record<string, AnyValue | null | undefined>>;

const scalarText = (v: AnyValue | null | undefined): string | null =>
  v?.stringValue !== null && v?.stringValue !== undefined && v.stringValue !== '' ? v.stringValue : null;

/**
 * Fills the GenAI keys of `a` (the span's attributes by key) from the conventions the span carries.
 * `a` holds the GenAI keys the span sent and the convention keys; it is changed in place.
 */
export function normalizeConventions(a: Attrs): void {
  for (const table of CONVENTION_TABLES) {
    if (!table.markers.some((m) => a[m] !== undefined)) continue;
    for (const r of table.renames) {
      if (a[r.to] !== undefined && a[r.to] !== null) continue; // the span's own (or an earlier table's) value wins
      if (r.when && !r.when.values.includes(scalarText(a[r.when.key]) ?? '')) continue;
      const source = r.from.find((k) => a[k] !== undefined && a[k] !== null);
      if (source === undefined) continue;
      let value = a[source]!;
      if (r.member !== undefined) {
        const member = jsonMember(scalarText(value), r.member);
        if (member === null) continue;
        value = { stringValue: member };
      }
      if (r.values) {
        const mapped = r.values[scalarText(value) ?? ''];
        if (mapped !== undefined) a[r.to] = { stringValue: mapped };
      } else a[r.to] = value;
    }
  }
}

/** The member `name` of the JSON object `text`, when it is a non-empty string; null otherwise (also for text that is not JSON). */
function jsonMember(text: string | null, name: string): string | null {
  if (text === null || text[0] !== '{') return null;
  try {
    const o: unknown = JSON.parse(text);
    const v = o !== null && typeof o === 'object' && !Array.isArray(o) ? (o as Record<string, unknown>)[name] : undefined;
    return typeof v === 'string' && v !== '' ? v : null;
  } catch {
    return null;
  }
}
