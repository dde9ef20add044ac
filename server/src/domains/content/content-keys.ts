/**
 * The one table of recorded content: every attribute key, of every instrumentation convention we
 * read, that carries what a person or a model said or a tool was given (prompts, completions,
 * messages, instructions, tool call arguments and results, memory item contents), with its content class. Every read that
 * withholds recorded content (span and event attributes, log attributes, metric labels, the filters
 * and group keys over them) asks this table; docs/agent-model.md shows it.
 *
 * Keys are compared case-insensitively, so a differently cased copy is withheld too. A `prefix` row
 * covers the indexed and nested forms (`llm.input_messages.0.message.content`).
 *
 * The class is the one the key carries in its convention's usual use. Generic keys (`input.value`,
 * `traceloop.entity.input`) carry a model transcript on model and agent spans and tool arguments on
 * tool spans; they are classed `model_transcript` here, the stricter reading for a transcript.
 */

/** The content classes of the content policy (a closed list). */
export const CONTENT_CLASSES = ['model_transcript', 'tool_arguments', 'replay_dom', 'person_properties', 'memory_item', 'group_properties'] as const;
export type ContentClass = (typeof CONTENT_CLASSES)[number];

export type Convention = 'gen_ai' | 'openinference' | 'openllmetry' | 'ai_sdk' | 'svc';

export interface ContentKeyRule {
  convention: Convention;
  match: 'key' | 'prefix';
  /** Lower case. */
  key: string;
  contentClass: ContentClass;
}

const rule = (convention: Convention, match: 'key' | 'prefix', key: string, contentClass: ContentClass): ContentKeyRule => ({
  convention,
  match,
  key,
  contentClass,
});

export const CONTENT_KEYS: readonly ContentKeyRule[] = [
  // OpenTelemetry GenAI semantic conventions (current and deprecated event-as-attribute forms).
  rule('gen_ai', 'key', 'gen_ai.prompt', 'model_transcript'),
  rule('gen_ai', 'prefix', 'gen_ai.prompt.', 'model_transcript'),
  rule('gen_ai', 'key', 'gen_ai.completion', 'model_transcript'),
  rule('gen_ai', 'prefix', 'gen_ai.completion.', 'model_transcript'),
  rule('gen_ai', 'key', 'gen_ai.input.messages', 'model_transcript'),
  rule('gen_ai', 'key', 'gen_ai.output.messages', 'model_transcript'),
  rule('gen_ai', 'key', 'gen_ai.system_instructions', 'model_transcript'),
  rule('gen_ai', 'key', 'gen_ai.tool.call.arguments', 'tool_arguments'),
  rule('gen_ai', 'key', 'gen_ai.tool.call.result', 'tool_arguments'),
  // OpenInference (Arize): span input and output, messages, prompt templates, retrieved documents.
  rule('openinference', 'key', 'input.value', 'model_transcript'),
  rule('openinference', 'key', 'output.value', 'model_transcript'),
  rule('openinference', 'prefix', 'llm.input_messages.', 'model_transcript'),
  rule('openinference', 'prefix', 'llm.output_messages.', 'model_transcript'),
  rule('openinference', 'prefix', 'llm.prompt_template.', 'model_transcript'),
  rule('openinference', 'key', 'llm.prompts', 'model_transcript'),
  rule('openinference', 'prefix', 'llm.prompts.', 'model_transcript'),
  rule('openinference', 'prefix', 'retrieval.documents.', 'model_transcript'),
  rule('openinference', 'prefix', 'reranker.input_documents.', 'model_transcript'),
  rule('openinference', 'prefix', 'reranker.output_documents.', 'model_transcript'),
  rule('openinference', 'key', 'reranker.query', 'model_transcript'),
  rule('openinference', 'prefix', 'embedding.embeddings.', 'model_transcript'),
  // OpenLLMetry / Traceloop: entity input and output (workflows, agents, tools), legacy prompt lists.
  rule('openllmetry', 'key', 'traceloop.entity.input', 'model_transcript'),
  rule('openllmetry', 'key', 'traceloop.entity.output', 'model_transcript'),
  rule('openllmetry', 'key', 'llm.completions', 'model_transcript'),
  rule('openllmetry', 'prefix', 'llm.completions.', 'model_transcript'),
  // Vercel AI SDK (`ai.*`): prompts, responses, embedded values, tool calls.
  rule('ai_sdk', 'key', 'ai.prompt', 'model_transcript'),
  rule('ai_sdk', 'prefix', 'ai.prompt.', 'model_transcript'),
  rule('ai_sdk', 'key', 'ai.response.text', 'model_transcript'),
  rule('ai_sdk', 'key', 'ai.response.object', 'model_transcript'),
  rule('ai_sdk', 'key', 'ai.response.reasoning', 'model_transcript'),
  rule('ai_sdk', 'key', 'ai.response.toolcalls', 'tool_arguments'),
  rule('ai_sdk', 'key', 'ai.value', 'model_transcript'),
  rule('ai_sdk', 'key', 'ai.values', 'model_transcript'),
  rule('ai_sdk', 'key', 'ai.toolcall.args', 'tool_arguments'),
  rule('ai_sdk', 'key', 'ai.toolcall.result', 'tool_arguments'),
  rule('ai_sdk', 'key', 'ai.toolcall.input', 'tool_arguments'),
  rule('ai_sdk', 'key', 'ai.toolcall.output', 'tool_arguments'),
  // This service's own memory attributes (docs/agent-model.md): what a memory item holds.
  rule('svc', 'key', 'svc.memory.item.content', 'memory_item'),
];

const EXACT = new Map(CONTENT_KEYS.filter((r) => r.match === 'key').map((r) => [r.key, r.contentClass]));
const PREFIXES = CONTENT_KEYS.filter((r) => r.match === 'prefix');

/** Exact keys and prefixes as plain lists (lower case), for stores that filter in SQL. */
export const CONTENT_EXACT_KEYS: readonly string[] = [...EXACT.keys()];
export const CONTENT_KEY_PREFIXES: readonly string[] = PREFIXES.map((r) => r.key);

/** The content class an attribute key carries, or undefined when it carries no recorded content. */
export function contentClassOf(key: string): ContentClass | undefined {
  const k = key.toLowerCase();
  return EXACT.get(k) ?? PREFIXES.find((r) => k.startsWith(r.key))?.contentClass;
}

export const isRecordedContentKey = (key: string): boolean => contentClassOf(key) !== undefined;

// ---- log bodies

/**
 * Log records whose *body* is recorded content: the events of the OpenTelemetry GenAI semantic
 * conventions, named by the record's `event_name` (OTLP LogRecord field 12) or, from instrumentations
 * written before that field existed, its `event.name` attribute. The message events (up to semantic
 * conventions 1.36) put the message, its tool calls and their arguments, or a tool's result in the body;
 * `gen_ai.client.inference.operation.details` puts the transcript in its attributes (classed by the key
 * table above) and the body is classed too, in case an instrumentation puts it there. Names compare
 * case-insensitively. Every other log body is an application's own text and not recorded content.
 */
export interface ContentEventRule {
  convention: Convention;
  /** Lower case. */
  eventName: string;
  contentClass: ContentClass;
}

export const CONTENT_EVENTS: readonly ContentEventRule[] = [
  { convention: 'gen_ai', eventName: 'gen_ai.system.message', contentClass: 'model_transcript' },
  { convention: 'gen_ai', eventName: 'gen_ai.user.message', contentClass: 'model_transcript' },
  { convention: 'gen_ai', eventName: 'gen_ai.assistant.message', contentClass: 'model_transcript' },
  { convention: 'gen_ai', eventName: 'gen_ai.choice', contentClass: 'model_transcript' },
  { convention: 'gen_ai', eventName: 'gen_ai.tool.message', contentClass: 'tool_arguments' },
  { convention: 'gen_ai', eventName: 'gen_ai.client.inference.operation.details', contentClass: 'model_transcript' },
];

const EVENTS = new Map(CONTENT_EVENTS.map((r) => [r.eventName, r.contentClass]));

/** The content class of a log record's body by the record's event name, or undefined (an ordinary log body). */
export function bodyClassOfEvent(eventName: string | null | undefined): ContentClass | undefined {
  if (!eventName) return undefined;
  return EVENTS.get(eventName) ?? EVENTS.get(eventName.toLowerCase());
}

export const isContentClass = (v: unknown): v is ContentClass => typeof v === 'string' && (CONTENT_CLASSES as readonly string[]).includes(v);
