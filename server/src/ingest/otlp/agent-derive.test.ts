/**
 * The derivation table of docs/agent-model.md, one test per rule (the rule quoted in the test name).
 * Pure functions: attributes in OTLP KeyValue form, columns out.
 */
import { describe, expect, it } from 'vitest';
import { EVENT_CATEGORIES, GEN_AI_OPERATIONS, MAX_CONTEXT_SOURCES, MEMORY_TRUST_LABELS, RUN_STATUSES } from '../../domains/agent-runs/model.js';
import { deriveEvent, deriveSpan, observationKey } from './agent-derive.js';
import type { AnyValue, KeyValue } from './decode.js';

type V = string | number | boolean | string[] | number[] | { double: number } | { raw: AnyValue };

function value(v: V): AnyValue {
  if (typeof v === 'string') return { stringValue: v };
  if (typeof v === 'boolean') return { boolValue: v };
  if (typeof v === 'number') return Number.isInteger(v) ? { intValue: v } : { doubleValue: v };
  if (Array.isArray(v)) return { arrayValue: { values: (v as (string | number)[]).map((x) => value(x)) } };
  if ('double' in v) return { doubleValue: v.double };
  return v.raw;
}
const kv = (o: Record<string, V>): KeyValue[] => Object.entries(o).map(([key, v]) => ({ key, value: value(v) }));
const span = (o: Record<string, V>, service: string | null = 'svc') => deriveSpan(kv(o), service);
const event = (name: string, o: Record<string, V> = {}) => deriveEvent(name, kv(o));

describe('step: canonical_operation', () => {
  it('"gen_ai.operation.name upper-cased with the prefix CANONICAL_OPERATION_ for the well-known values"', () => {
    for (const op of GEN_AI_OPERATIONS) expect(span({ 'gen_ai.operation.name': op }).canonicalOperation).toBe(`CANONICAL_OPERATION_${op.toUpperCase()}`);
  });

  it('"anything else, or no operation, is CANONICAL_OPERATION_UNKNOWN" (the name as sent is kept in operation_name)', () => {
    expect(span({ 'gen_ai.operation.name': 'CHAT' })).toMatchObject({ canonicalOperation: 'CANONICAL_OPERATION_UNKNOWN', operationName: 'CHAT' });
    expect(span({ 'gen_ai.operation.name': 'summarize' })).toMatchObject({ canonicalOperation: 'CANONICAL_OPERATION_UNKNOWN', operationName: 'summarize' });
    expect(span({})).toMatchObject({ canonicalOperation: 'CANONICAL_OPERATION_UNKNOWN', operationName: null });
  });
});

describe('step: outcome (spec 2 "Step outcome")', () => {
  it('"completed -> OUTCOME_OK"', () => expect(span({ 'gen_ai.response.status': 'completed' }).outcome).toBe('OUTCOME_OK'));
  it('"failed -> OUTCOME_ERROR"', () => expect(span({ 'gen_ai.response.status': 'failed' }).outcome).toBe('OUTCOME_ERROR'));
  it('"cancelled -> OUTCOME_CANCELLED"', () => expect(span({ 'gen_ai.response.status': 'cancelled' }).outcome).toBe('OUTCOME_CANCELLED'));

  it('"incomplete, queued, in_progress, or unknown ... leave the outcome unset"; the stated value is kept as response_status', () => {
    for (const s of ['incomplete', 'queued', 'in_progress', 'whatever', 'COMPLETED'])
      expect(span({ 'gen_ai.response.status': s })).toMatchObject({ outcome: null, responseStatus: s });
  });

  it('"no stated status leave[s] the outcome unset"', () => expect(span({ 'gen_ai.operation.name': 'chat' }).outcome).toBeNull());

  it('"the span status is never used": derivation reads attributes only (an ERROR span with no stated status has no outcome)', () => {
    // deriveSpan has no access to the span status by construction; the route test checks an ERROR span end to end.
    expect(deriveSpan.length).toBe(2);
    expect(span({ 'gen_ai.operation.name': 'execute_tool', 'error.type': 'Timeout' }).outcome).toBeNull();
  });
});

describe('step: agent identity (observation_key)', () => {
  it('"gen_ai.agent.id when present"', () => {
    expect(span({ 'gen_ai.agent.id': 'agent-7', 'gen_ai.agent.name': 'bot' })).toMatchObject({ observationKey: 'agent-7', agentId: 'agent-7', agentName: 'bot' });
  });
  it('"else <service.name>/<gen_ai.agent.name>"', () => expect(span({ 'gen_ai.agent.name': 'bot' }, 'checkout').observationKey).toBe('checkout/bot'));
  it('"with unknown_service when service.name is absent" (or empty)', () => {
    expect(span({ 'gen_ai.agent.name': 'bot' }, null).observationKey).toBe('unknown_service/bot');
    expect(span({ 'gen_ai.agent.name': 'bot' }, '').observationKey).toBe('unknown_service/bot');
  });
  it('"spans without either have none"', () => expect(span({ 'gen_ai.operation.name': 'chat' }).observationKey).toBeNull());
  it('an empty agent id is no id', () => {
    expect(span({ 'gen_ai.agent.id': '', 'gen_ai.agent.name': 'bot' }, 's').observationKey).toBe('s/bot');
    expect(observationKey(null, null, 's')).toBeNull();
  });
});

describe('step: session, turn, run status, terminal reason', () => {
  it('session_key is gen_ai.conversation.id; turn_id is svc.turn.id', () => {
    expect(span({ 'gen_ai.conversation.id': 'conv-1', 'svc.turn.id': 't-3' })).toMatchObject({ sessionKey: 'conv-1', turnId: 't-3' });
    expect(span({})).toMatchObject({ sessionKey: null, turnId: null });
  });

  it('run status: "completed, failed, timed_out, cancelled, max_steps (the SDK\'s wire values)"; any other value is not stored', () => {
    for (const s of RUN_STATUSES) expect(span({ 'gen_ai.operation.name': 'invoke_agent', 'svc.agent.run.status': s }).runStatus).toBe(s);
    for (const s of ['succeeded', 'COMPLETED', 'in_progress', ''])
      expect(span({ 'gen_ai.operation.name': 'invoke_agent', 'svc.agent.run.status': s }).runStatus).toBeNull();
  });

  it('run status is not guessed: gen_ai.response.status stays in response_status (the reads apply the fallback on the root)', () => {
    expect(span({ 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.response.status': 'failed' })).toMatchObject({ runStatus: null, responseStatus: 'failed' });
  });

  it('terminal reason: "^[a-z][a-z0-9_]{0,63}$"; "absent when not stated or malformed"', () => {
    const tr = (s: string) => span({ 'svc.agent.run.terminal_reason': s }).terminalReason;
    expect(tr('max_tokens')).toBe('max_tokens');
    expect(tr('a')).toBe('a');
    expect(tr(`a${'b'.repeat(63)}`)).toBe(`a${'b'.repeat(63)}`);
    for (const bad of [`a${'b'.repeat(64)}`, 'Max', '1abc', '_x', 'has space', 'dash-ed', '']) expect(tr(bad)).toBeNull();
    expect(span({}).terminalReason).toBeNull();
  });
});

describe('step: tool, model, provider, tokens, cost, safety', () => {
  it('tool_name is gen_ai.tool.name', () => expect(span({ 'gen_ai.tool.name': 'run_sql' }).toolName).toBe('run_sql'));

  it('model: "gen_ai.response.model ?? gen_ai.request.model"', () => {
    expect(span({ 'gen_ai.request.model': 'gpt-4o', 'gen_ai.response.model': 'gpt-4o-2024-08-06' }).model).toBe('gpt-4o-2024-08-06');
    expect(span({ 'gen_ai.request.model': 'gpt-4o' }).model).toBe('gpt-4o');
  });

  it('provider: "gen_ai.provider.name ?? gen_ai.system"', () => {
    expect(span({ 'gen_ai.provider.name': 'openai', 'gen_ai.system': 'legacy' }).provider).toBe('openai');
    expect(span({ 'gen_ai.system': 'anthropic' }).provider).toBe('anthropic');
  });

  it('input_tokens, output_tokens: gen_ai.usage.* as non-negative integers (a measured zero kept)', () => {
    expect(span({ 'gen_ai.usage.input_tokens': 1200, 'gen_ai.usage.output_tokens': 0 })).toMatchObject({ inputTokens: 1200, outputTokens: 0 });
    expect(span({ 'gen_ai.usage.input_tokens': { double: 12 } }).inputTokens).toBe(12);
    for (const bad of [-1, 1.5, '12'] as V[]) expect(span({ 'gen_ai.usage.input_tokens': bad }).inputTokens).toBeNull();
  });

  it('reported cost: "svc.cost.nanos (integer, billionths of a US dollar)", >= 0; anything else absent', () => {
    expect(span({ 'svc.cost.nanos': 1_500_000 }).reportedCostNanos).toBe(1_500_000);
    expect(span({ 'svc.cost.nanos': 0 }).reportedCostNanos).toBe(0);
    expect(span({ 'svc.cost.nanos': { raw: { intValue: { low: 0, high: 0x10, unsigned: false } } } }).reportedCostNanos).toBe(0x10 * 2 ** 32);
    for (const bad of [-5, 0.25, '100', true] as V[]) expect(span({ 'svc.cost.nanos': bad }).reportedCostNanos).toBeNull();
    expect(span({ 'svc.cost.nanos': { raw: { intValue: { low: 0, high: 0x400000, unsigned: false } } } }).reportedCostNanos).toBeNull(); // 2^54: not exact
  });

  it('safety_check: "svc.safety.check = true"', () => {
    expect(span({ 'svc.safety.check': true }).safetyCheck).toBe(true);
    expect(span({ 'svc.safety.check': false }).safetyCheck).toBe(false);
    expect(span({ 'svc.safety.check': 'true' }).safetyCheck).toBe(false);
    expect(span({}).safetyCheck).toBe(false);
  });
});

describe('step: memory', () => {
  const memoryAttrs = {
    'svc.memory.item.id': 'item-1',
    'gen_ai.data_source.id': 'store-a',
    'svc.memory.item.provenance': 'user_message',
    'svc.memory.trust_label': 'MEMORY_TRUST_LABEL_SUSPECT',
  };

  it('memory object: item_id (svc.memory.item.id), store (gen_ai.data_source.id), provenance, declared_trust_label', () => {
    expect(span({ 'gen_ai.operation.name': 'upsert_memory', ...memoryAttrs })).toMatchObject({
      memoryItemId: 'item-1',
      memoryStore: 'store-a',
      memoryProvenance: 'user_message',
      memoryTrustLabel: 'MEMORY_TRUST_LABEL_SUSPECT',
    });
  });

  it('"each member is present only when declared"', () => {
    expect(span({ 'gen_ai.operation.name': 'search_memory', 'gen_ai.data_source.id': 'store-a' })).toMatchObject({
      memoryItemId: null,
      memoryStore: 'store-a',
      memoryProvenance: null,
      memoryTrustLabel: null,
    });
  });

  it('every memory operation fills the memory columns; other steps do not (gen_ai.data_source.id stays an attribute)', () => {
    for (const op of ['create_memory', 'create_memory_store', 'delete_memory', 'delete_memory_store', 'search_memory', 'update_memory', 'upsert_memory'])
      expect(span({ 'gen_ai.operation.name': op, ...memoryAttrs }).memoryItemId).toBe('item-1');
    expect(span({ 'gen_ai.operation.name': 'retrieval', ...memoryAttrs })).toMatchObject({ memoryItemId: null, memoryStore: null, memoryTrustLabel: null });
  });

  it('trust label: "one of MEMORY_TRUST_LABEL_TRUSTED|_SUSPECT|_QUARANTINED, anything else is not stored"', () => {
    for (const l of MEMORY_TRUST_LABELS) expect(span({ 'gen_ai.operation.name': 'update_memory', 'svc.memory.trust_label': l }).memoryTrustLabel).toBe(l);
    for (const l of ['trusted', 'MEMORY_TRUST_LABEL_UNSPECIFIED', 'MEMORY_TRUST_LABEL_trusted', ''])
      expect(span({ 'gen_ai.operation.name': 'update_memory', 'svc.memory.trust_label': l }).memoryTrustLabel).toBeNull();
  });
});

describe('span events: category', () => {
  it('"attribute svc.event.category, else the event name\'s first dot-separated segment" — each of the 13 categories', () => {
    for (const c of EVENT_CATEGORIES) {
      if (c === 'context') continue; // context events need a kind (below)
      expect(event(`${c}.something`).category).toBe(c);
      expect(event('custom name', { 'svc.event.category': c }).category).toBe(c);
      expect(event(c).category).toBe(c);
    }
    expect(event('context.cache').category).toBe('context');
  });

  it('the stated category wins over the name', () => expect(event('tool.call', { 'svc.event.category': 'mcp' }).category).toBe('mcp'));

  it('"Other span events stay plain span events"', () => {
    for (const n of ['exception', 'gen_ai.content.prompt', 'Tool.call', '', '.tool']) expect(event(n)).toEqual({ category: null, context: null, notAccepted: null });
  });

  it('"An unknown svc.event.category value makes the event a plain span event too"', () => {
    expect(event('tool.call', { 'svc.event.category': 'tools' })).toEqual({ category: null, context: null, notAccepted: null });
  });
});

describe('context events: kinds and details', () => {
  it('assembly: budget_tokens, assembled_tokens, overflow, digest and parallel-array sources (order kept)', () => {
    const e = event('context.assembly', {
      'svc.context.assembly.budget_tokens': 8000,
      'svc.context.assembly.assembled_tokens': 6100,
      'svc.context.assembly.overflow': false,
      'svc.context.assembly.digest': 'sha256:abc',
      'svc.context.assembly.source_ids': ['doc-2', 'doc-1', 'mem-9'],
      'svc.context.assembly.source_kinds': ['document', 'document', ''],
      'svc.context.assembly.source_tokens': [100, 0, 25],
    });
    expect(e).toEqual({
      category: 'context',
      notAccepted: null,
      context: {
        kind: 'assembly',
        detail: {
          budget_tokens: 8000,
          assembled_tokens: 6100,
          overflow: false,
          digest: 'sha256:abc',
          sources: [
            { id: 'doc-2', kind: 'document', tokens: 100 },
            { id: 'doc-1', kind: 'document', tokens: 0 },
            { id: 'mem-9', tokens: 25 },
          ],
        },
        sourceIds: ['doc-2', 'doc-1', 'mem-9'],
      },
    });
  });

  it(`assembly sources: "at most ${MAX_CONTEXT_SOURCES}, sources_truncated when cut" (context_source_ids are the kept ones)`, () => {
    const ids = Array.from({ length: MAX_CONTEXT_SOURCES + 5 }, (_, i) => `s${i}`);
    const e = event('context.assembly', { 'svc.context.assembly.source_ids': ids });
    expect((e.context!.detail.sources as unknown[]).length).toBe(MAX_CONTEXT_SOURCES);
    expect(e.context!.detail.sources_truncated).toBe(true);
    expect(e.context!.sourceIds).toEqual(ids.slice(0, MAX_CONTEXT_SOURCES));
    const exact = event('context.assembly', { 'svc.context.assembly.source_ids': ids.slice(0, MAX_CONTEXT_SOURCES) });
    expect(exact.context!.detail).not.toHaveProperty('sources_truncated');
  });

  it('assembly with no sources has sources: []', () => {
    expect(event('context.assembly', { 'svc.context.assembly.budget_tokens': 10 }).context!.detail).toEqual({ budget_tokens: 10, sources: [] });
  });

  it('compaction: the same names plus server-derived ratio = after/before', () => {
    const e = event('context.compaction', {
      'svc.context.compaction.trigger': 'budget',
      'svc.context.compaction.strategy': 'summarize',
      'svc.context.compaction.before_count': 40,
      'svc.context.compaction.after_count': 10,
      'svc.context.compaction.before_digest': 'd1',
      'svc.context.compaction.after_digest': 'd2',
      'svc.context.compaction.removed_source_ids': ['a', 'b'],
    });
    expect(e.context).toEqual({
      kind: 'compaction',
      detail: { trigger: 'budget', strategy: 'summarize', before_count: 40, after_count: 10, before_digest: 'd1', after_digest: 'd2', removed_source_ids: ['a', 'b'], ratio: 0.25 },
      sourceIds: ['a', 'b'],
    });
  });

  it('compaction ratio: "absent unless both counts are present and before > 0"', () => {
    const ratio = (o: Record<string, V>) => event('context.compaction', o).context!.detail.ratio;
    expect(ratio({ 'svc.context.compaction.before_count': 0, 'svc.context.compaction.after_count': 0 })).toBeUndefined();
    expect(ratio({ 'svc.context.compaction.before_count': 5 })).toBeUndefined();
    expect(ratio({ 'svc.context.compaction.after_count': 5 })).toBeUndefined();
    expect(ratio({ 'svc.context.compaction.before_count': 4, 'svc.context.compaction.after_count': 0 })).toBe(0);
  });

  it('cache: provider, key_digest, outcome (hit, miss, write), reused_tokens, latency_saved_ms, cost_saved_nanos', () => {
    const e = event('context.cache', {
      'svc.context.cache.provider': 'anthropic',
      'svc.context.cache.key_digest': 'k1',
      'svc.context.cache.outcome': 'hit',
      'svc.context.cache.reused_tokens': 4000,
      'svc.context.cache.latency_saved_ms': { double: 12.5 },
      'svc.context.cache.cost_saved_nanos': 900,
    });
    expect(e.context).toEqual({
      kind: 'cache',
      detail: { provider: 'anthropic', key_digest: 'k1', outcome: 'hit', reused_tokens: 4000, latency_saved_ms: 12.5, cost_saved_nanos: 900 },
      sourceIds: [],
    });
    expect(event('context.cache', { 'svc.context.cache.outcome': 'stale' }).notAccepted).toBe('svc.context.cache.outcome is not hit, miss or write');
  });

  it('"Optional numbers are omitted when the producer omitted them; a measured zero is returned as zero"', () => {
    expect(event('context.cache', { 'svc.context.cache.outcome': 'miss' }).context!.detail).toEqual({ outcome: 'miss' });
    expect(
      event('context.cache', { 'svc.context.cache.outcome': 'hit', 'svc.context.cache.reused_tokens': 0, 'svc.context.cache.latency_saved_ms': 0, 'svc.context.cache.cost_saved_nanos': 0 })
        .context!.detail,
    ).toEqual({ outcome: 'hit', reused_tokens: 0, latency_saved_ms: 0, cost_saved_nanos: 0 });
    expect(event('context.assembly', { 'svc.context.assembly.budget_tokens': 0 }).context!.detail).toEqual({ budget_tokens: 0, sources: [] });
  });

  it('"The kind is svc.context.kind, else the event name\'s second segment"', () => {
    expect(event('context.cache.lookup').context!.kind).toBe('cache');
    expect(event('context', { 'svc.context.kind': 'compaction' }).context!.kind).toBe('compaction');
    expect(event('context.cache', { 'svc.context.kind': 'assembly' }).context!.kind).toBe('assembly');
    expect(event('my.event', { 'svc.event.category': 'context', 'svc.context.kind': 'cache' }).context!.kind).toBe('cache');
  });

  it('"A context event whose kind is unknown ... is not accepted": a plain span event with the reason', () => {
    expect(event('context.window')).toEqual({ category: null, context: null, notAccepted: 'unknown context kind "window"' });
    expect(event('context')).toEqual({ category: null, context: null, notAccepted: 'unknown context kind ""' });
    expect(event('context.cache', { 'svc.context.kind': 'memory' }).notAccepted).toBe('unknown context kind "memory"');
  });

  it('"or that carries attributes of two kinds, is not accepted"', () => {
    const mixed = event('context.assembly', { 'svc.context.assembly.budget_tokens': 5, 'svc.context.cache.outcome': 'hit' });
    expect(mixed).toEqual({ category: null, context: null, notAccepted: 'a context event of kind assembly carries attributes of cache too' });
    // the declared kind with only another kind's attributes is mixed as well
    expect(event('context.cache', { 'svc.context.compaction.before_count': 3 }).notAccepted).toBe('a context event of kind cache carries attributes of compaction too');
  });

  it('a member of the wrong type makes the event not accepted (named in the reason)', () => {
    expect(event('context.assembly', { 'svc.context.assembly.budget_tokens': 'lots' }).notAccepted).toBe('svc.context.assembly.budget_tokens is not a non-negative integer');
    expect(event('context.assembly', { 'svc.context.assembly.budget_tokens': -1 }).notAccepted).toBe('svc.context.assembly.budget_tokens is not a non-negative integer');
    expect(event('context.assembly', { 'svc.context.assembly.overflow': 'yes' }).notAccepted).toBe('svc.context.assembly.overflow is not a bool');
    expect(event('context.assembly', { 'svc.context.assembly.source_ids': 'doc-1' }).notAccepted).toBe('svc.context.assembly.source_ids is not an array of strings');
    expect(event('context.assembly', { 'svc.context.assembly.source_ids': ['a', 'b'], 'svc.context.assembly.source_tokens': [1] }).notAccepted).toBe(
      'svc.context.assembly.source_tokens has 1 entries for 2 source_ids',
    );
  });
});
