/**
 * The model-call reads on ClickHouse (llm-calls-query.ts) against the rule itself (domains/agent-runs/model.ts
 * `modelCallIds`) over random traces: nested usage steps at any depth, parents missing from the trace, cycles
 * of parents, spans stored twice, a deleted trace. The domain tests (domains/llm/calls.test.ts) cover the
 * reads through the API on both engines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_OPERATIONS, modelCallIds } from '../../../domains/agent-runs/model.js';
import { openTestChDb, type TestChDb } from '../../../testing/clickhouse.js';
import { ChLlmCallsQuery } from './llm-calls-query.js';

let db: TestChDb;
beforeAll(async () => {
  db = await openTestChDb();
});
afterAll(() => db?.drop());

/** A small seeded generator (mulberry32): the same traces every run. */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const T0 = 1_700_000_000_000_000;
const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');

interface Span {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  canonical_operation: string;
  input_tokens: number | null;
  output_tokens: number | null;
  start_us: number;
  ingested_at_us: number;
}

describe('ChLlmCallsQuery', () => {
  it('lists exactly the usage steps with no usage step below them (the rule of modelCallIds), each span once, deleted traces left out', async () => {
    const rand = rng(7);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)];
    const ops = [...MODEL_OPERATIONS, 'CANONICAL_OPERATION_UNKNOWN', 'CANONICAL_OPERATION_EXECUTE_TOOL', 'CANONICAL_OPERATION_INVOKE_AGENT'];
    const spans: Span[] = [];
    const traces: Span[][] = [];
    for (let t = 0; t < 60; t++) {
      const traceId = hex(t + 1, 32);
      const n = 1 + Math.floor(rand() * 12);
      const ids = Array.from({ length: n }, (_, i) => hex(t * 100 + i + 1, 16));
      const trace: Span[] = ids.map((spanId, i) => {
        const r = rand();
        // Mostly a parent earlier in the trace; sometimes none, one not stored, or a later one (cycles).
        const parent = i === 0 || r < 0.1 ? null : r < 0.15 ? hex(999_999, 16) : r < 0.22 ? pick(ids) : ids[Math.floor(rand() * i)];
        const tokens = rand() < 0.3;
        return {
          trace_id: traceId,
          span_id: spanId,
          parent_span_id: parent,
          canonical_operation: pick(ops),
          input_tokens: tokens ? Math.floor(rand() * 100) : null,
          output_tokens: tokens && rand() < 0.5 ? Math.floor(rand() * 100) : null,
          start_us: T0 + t * 1000 + i,
          ingested_at_us: T0 + t * 1000 + 500,
        };
      });
      traces.push(trace);
      spans.push(...trace);
      // Some spans stored again later (a retried export).
      for (const s of trace) if (rand() < 0.15) spans.push({ ...s, ingested_at_us: s.ingested_at_us + 1 });
    }
    await db.client.insert(
      'spans',
      spans.map((s) => ({
        project_id: 'p',
        ...s,
        name: 'op',
        kind: 'internal',
        end_us: s.start_us + 1,
        status_code: 'unset',
        attributes: '{}',
        resource_attributes: '{}',
        model: 'm',
        provider: 'prov',
        safety_check: false,
        context_events: 0,
      })),
    );
    // One trace deleted: its calls are never read.
    const deleted = traces[3][0].trace_id;
    await db.client.insert('trace_tombstones', [{ project_id: 'p', trace_id: deleted, deleted_at_us: T0 }]);

    const expected = traces
      .filter((tr) => tr[0].trace_id !== deleted)
      .flatMap((tr) =>
        [...modelCallIds(tr.map((s) => ({ spanId: s.span_id, parentSpanId: s.parent_span_id, canonicalOperation: s.canonical_operation, inputTokens: s.input_tokens, outputTokens: s.output_tokens })))].map(
          (id) => `${tr[0].trace_id}/${id}`,
        ),
      )
      .sort();
    expect(expected.length).toBeGreaterThan(20);
    // Some usage steps are totals (a usage step below them), so the rule is tested, not only the predicate.
    const isUsage = (s: Span) => MODEL_OPERATIONS.includes(s.canonical_operation) || s.input_tokens !== null || s.output_tokens !== null;
    expect(traces.filter((tr) => tr[0].trace_id !== deleted).flat().filter(isUsage).length).toBeGreaterThan(expected.length + 5);

    const q = new ChLlmCallsQuery(db);
    const filter = { projectId: 'p', sinceUs: T0, untilUs: T0 + 1e9 };
    const listed = await q.calls(filter, { limit: 10_000 });
    expect(listed.map((c) => `${c.traceId}/${c.spanId}`).sort()).toEqual(expected);
    // Newest first, and every page continues where the last ended.
    const pages: string[] = [];
    for (let after: { startUs: number; spanId: string; traceId: string } | undefined; ; ) {
      const page = await q.calls(filter, { after, limit: 7 });
      pages.push(...page.map((c) => `${c.traceId}/${c.spanId}`));
      if (page.length < 7) break;
      after = page[page.length - 1];
    }
    expect(pages).toEqual(listed.map((c) => `${c.traceId}/${c.spanId}`));
    expect(listed.map((c) => c.startUs)).toEqual([...listed.map((c) => c.startUs)].sort((a, b) => b - a));
    const usage = await q.usage(filter);
    expect(usage.reduce((n, u) => n + u.calls, 0)).toBe(expected.length);
    // The window is closed on the call's start.
    const first = listed[listed.length - 1];
    expect((await q.calls({ ...filter, sinceUs: first.startUs, untilUs: first.startUs }, { limit: 10 })).map((c) => c.spanId)).toContain(first.spanId);
    expect(await q.calls({ ...filter, projectId: 'other' }, { limit: 10 })).toEqual([]);
  });
});
