/**
 * Summaries kept at ingest answer exactly what a recomputation from raw spans answers (issue 21: "Merges are
 * order independent: spans of one run arrive out of order, across many requests, the root last or never,
 * duplicates retried"). Randomized span streams (seeded, so a failure repeats) are shuffled, split into
 * batches of any size and written through the real spans writer, some batches sent twice (a retried export:
 * later ingest time, same rows); some traces are deleted midway. Then every list, filter, sort and cursor of
 * the agent reads is asked of the summaries (DuckDbAgentRunsQuery) and of the raw-span oracle
 * (RawSpanAgentRunsQuery, the read-time SQL the service used before), and the trace list of the summaries is
 * compared with a GROUP BY over the raw spans. Runs once with the writer's memory of traces large, once with
 * none (every touched stored trace is read back from `spans`), and the backfill of an upgraded file gives the
 * same rows again.
 */
import { addCalls, noCalls, totalsText } from '../../../domains/agent-runs/call-totals.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OP, CANONICAL_UNKNOWN, outcomeOf } from '../../../domains/agent-runs/model.js';
import type { RunFilter, RunRow, SessionRow, TurnRow } from '../../../domains/agent-runs/store.js';
import type { TraceSummaryRow } from '../../../domains/traces/store.js';
import { DuckDbAgentRunsQuery } from './agent-runs-query.js';
import { openTelemetryDb, type TelemetryDb } from './open.js';
import { RawSpanAgentRunsQuery, type SummarizedReads } from './raw-span-runs.js';
import { SpansWriter } from './spans-writer.js';
import type { SpanRow } from '../../../domains/traces/rows.js';
import { backfillSummaries } from './summaries-backfill.js';
import { summaryUpkeep } from './summaries-writer.js';
import { DuckDbTracesQuery } from './traces-query.js';
import { rows } from './statements.js';

/** mulberry32: a small seeded generator. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)],
    maybe: <T>(p: number, v: () => T): T | null => (next() < p ? v() : null),
  };
}
type Rng = ReturnType<typeof rng>;

const hex = (n: number, width: number) => n.toString(16).padStart(width, '0');
const OPS = [OP.invokeAgent, OP.invokeAgent, OP.invokeWorkflow, 'CANONICAL_OPERATION_CHAT', 'CANONICAL_OPERATION_EMBEDDINGS', OP.executeTool, CANONICAL_UNKNOWN, CANONICAL_UNKNOWN];
const BASE_US = 1_767_225_600_000_000; // 2026-01-01

/** The spans of one random trace. Coarse times, so that ties in start happen. */
function randomTrace(r: Rng, t: number): SpanRow[] {
  const traceId = hex(t + 1, 32);
  const n = 1 + r.int(9);
  const ids = Array.from({ length: n }, (_, i) => hex(t * 100 + i + 1, 16));
  // Most traces within a minute (ties), some spread over days (a page is then looked for in widening windows).
  const start0 = BASE_US + r.int(50) * (r.next() < 0.7 ? 1_000_000 : 7_200_000_000);
  return ids.map((spanId, i) => {
    const op = r.pick(OPS);
    // a parent among the earlier spans, a span never sent, or none
    const parentSpanId = i === 0 ? r.maybe(0.2, () => hex(999_000 + r.int(5), 16)) : r.next() < 0.85 ? ids[r.int(i)] : r.maybe(0.5, () => hex(999_000 + r.int(5), 16));
    const startUs = start0 + r.int(4) * 1_000_000;
    const responseStatus = r.maybe(0.6, () => r.pick(['completed', 'failed', 'cancelled', 'in_progress']));
    const usage = op === 'CANONICAL_OPERATION_CHAT' || op === 'CANONICAL_OPERATION_EMBEDDINGS' || r.next() < 0.1;
    return {
      traceId,
      spanId,
      parentSpanId,
      name: `op-${r.int(4)}`,
      kind: 'internal',
      startUs,
      endUs: startUs + r.int(5) * 1_000_000,
      statusCode: r.pick(['unset', 'ok', 'error']),
      statusMessage: null,
      serviceName: r.maybe(0.8, () => `svc-${r.int(3)}`),
      environment: r.maybe(0.5, () => r.pick(['prod', 'dev'])),
      scopeName: null,
      attributes: '{}',
      resourceAttributes: '{}',
      operationName: null,
      canonicalOperation: op,
      responseStatus,
      outcome: outcomeOf(responseStatus),
      agentName: r.maybe(0.7, () => `agent-${r.int(3)}`),
      agentId: r.maybe(0.5, () => `id-${r.int(3)}`),
      observationKey: r.maybe(0.7, () => `key-${r.int(3)}`),
      sessionKey: r.maybe(0.4, () => `s-${r.int(6)}`),
      turnId: r.maybe(0.4, () => `turn-${r.int(3)}`),
      runStatus: op === OP.invokeAgent ? r.maybe(0.7, () => r.pick(['completed', 'failed', 'timed_out', 'max_steps', 'bogus'])) : null,
      terminalReason: r.maybe(0.2, () => 'stop'),
      toolName: null,
      model: usage ? r.maybe(0.9, () => r.pick(['m1', 'm2'])) : null,
      provider: usage ? r.maybe(0.7, () => 'p') : null,
      inputTokens: usage ? r.maybe(0.8, () => r.int(3) * 10) : null,
      outputTokens: usage ? r.maybe(0.8, () => r.int(3) * 5) : null,
      reportedCostNanos: usage ? r.maybe(0.2, () => r.int(1000)) : null,
      safetyCheck: r.next() < 0.2,
      memoryItemId: null,
      memoryStore: null,
      memoryProvenance: null,
      memoryTrustLabel: null,
      contextEvents: 0,
    };
  });
}

function shuffle<T>(r: Rng, xs: T[]): T[] {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = r.int(i + 1);
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs;
}

let db: TelemetryDb;
let writer: SpansWriter;
let summaries: DuckDbAgentRunsQuery;
let raw: RawSpanAgentRunsQuery;
let traces: DuckDbTracesQuery;

beforeAll(async () => {
  db = await openTelemetryDb({ memory: true });
  writer = new SpansWriter(db);
  summaries = new DuckDbAgentRunsQuery(db);
  raw = new RawSpanAgentRunsQuery(db);
  traces = new DuckDbTracesQuery(db);
});
afterAll(async () => {
  await writer.stop();
  await db.close();
});

let ingestUs = BASE_US;

/** Writes a random stream into the project; returns its trace ids (those not deleted). */
async function stream(r: Rng, projectId: string, traceCount: number): Promise<string[]> {
  const all = shuffle(r, Array.from({ length: traceCount }, (_, t) => randomTrace(r, t)).flat());
  const deleted = new Set<string>();
  const writes: Promise<unknown>[] = [];
  for (let off = 0; off < all.length; ) {
    const size = 1 + r.int(12);
    const spans = all.slice(off, off + size);
    off += size;
    const batch = { spans, events: [], sightings: [], credential: { source: 'api_key' as const, apiKeyId: 'k' }, ingestedAtUs: (ingestUs += 1000) };
    // Several requests in flight share a group commit, as under load.
    writes.push(writer.write(projectId, batch));
    if (r.next() < 0.15) writes.push(writer.write(projectId, { ...batch, ingestedAtUs: (ingestUs += 1000) })); // a retried export
    if (r.next() < 0.3) await Promise.all(writes.splice(0));
    if (r.next() < 0.03) {
      await Promise.all(writes.splice(0));
      const victim = r.pick(spans).traceId;
      await traces.deleteTrace(projectId, victim, ingestUs);
      deleted.add(victim);
    }
  }
  await Promise.all(writes);
  return [...new Set(all.map((s) => s.traceId))].filter((t) => !deleted.has(t));
}

/** Every page of a list, through its cursor, `limit` at a time. */
async function pages<T>(read: (after: T | undefined) => Promise<T[]>, limit: number): Promise<T[]> {
  const out: T[] = [];
  let after: T | undefined;
  for (;;) {
    const page = await read(after);
    out.push(...page);
    if (page.length < limit) return out;
    after = page[page.length - 1];
  }
}

const byTrace = (xs: { traceId: string }[]) => [...xs].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));

async function compareAll(r: Rng, projectId: string, traceIds: string[]) {
  const filters: Omit<RunFilter, 'projectId'>[] = [
    {},
    { statuses: ['failed', 'completed'] },
    { sessionKeys: ['s-1', 's-2'] },
    { sessionKeys: ['s-3'], turnIds: ['turn-0', 'turn-2'] },
    { observationKey: 'key-1' },
    { sinceUs: BASE_US + 10_000_000, untilUs: BASE_US + 30_000_000 },
    { traceIds: traceIds.slice(0, 7) },
  ];
  for (const f of filters) {
    const filter = { projectId, ...f };
    const got = await summaries.runs(filter, {});
    expect({ f, runs: got.map(({ usage: _, ...run }) => run) }).toEqual({ f, runs: await raw.runs(filter, {}) });
    // The usage read with each run is the run's model usage.
    const usage = got.flatMap((r) => r.usage!.map((u) => ({ traceId: r.traceId, ...u })));
    expect(byTrace(usage)).toEqual(byTrace(await raw.modelUsage(projectId, got.map((r) => r.traceId))));
    const limit = 1 + r.int(7);
    const read = (q: SummarizedReads) => pages<RunRow>((after) => q.runs(filter, { limit, after: after && { startUs: after.startUs, traceId: after.traceId } }), limit);
    expect((await read(summaries)).map(({ usage: _, ...run }) => run)).toEqual(await read(raw));
  }
  const all = await raw.runs({ projectId }, {});
  const ids = all.map((x) => x.traceId);
  expect(byTrace(await summaries.modelUsage(projectId, ids))).toEqual(byTrace(await raw.modelUsage(projectId, ids)));
  // Each session's model calls are its runs' (the session list prices them at once).
  const sessionKeys = [...new Set(all.map((x) => x.sessionKey).filter((k): k is string => k !== null))];
  const rawUsage = await raw.modelUsage(projectId, ids);
  const bySession = await summaries.sessionUsage(projectId, sessionKeys);
  const fingerprints = await summaries.sessionUsageFingerprints(projectId, sessionKeys);
  for (const key of sessionKeys) {
    const runsOf = new Set(all.filter((x) => x.sessionKey === key).map((x) => x.traceId));
    const want = rawUsage.filter((u) => runsOf.has(u.traceId)).map(({ traceId: _, ...u }) => u);
    expect(byTrace((bySession.get(key)?.calls ?? []) as never)).toEqual(byTrace(want as never));
    // The fingerprint alone is the one read with the calls; a session without model calls has neither.
    expect(fingerprints.get(key)).toBe(bySession.get(key)?.fingerprint);
  }
  // The run graph's step count is its summary's (agent-runs/service.ts `graph`): every span of the trace once.
  for (const id of ids.slice(0, 10)) expect((await summaries.runs({ projectId, traceIds: [id] }, {}))[0]?.stepCount ?? 0).toBe(await raw.countSteps(projectId, id));
  for (const id of ids.slice(0, 5)) expect(await summaries.steps(projectId, id)).toEqual(await raw.steps(projectId, id));
  const starts = (q: SummarizedReads) => q.runStarts(projectId, { after: { startUs: 0, traceId: '' }, beforeUs: BASE_US + 40_000_000, limit: 1000 });
  expect(await starts(summaries)).toEqual(await starts(raw));
  const health = async (q: SummarizedReads) => (await q.runHealth(projectId, ['key-0', 'key-1', 'key-2'], BASE_US + 5_000_000)).sort((a, b) => a.observationKey.localeCompare(b.observationKey));
  expect(await health(summaries)).toEqual(await health(raw));
  const plain = (xs: SessionRow[]) => xs.map(({ callTotals: _, ...s }) => s);
  for (const sf of [{}, { sinceUs: BASE_US + 20_000_000 }, { sessionKeys: ['s-0', 's-4'] }]) {
    const filter = { projectId, ...sf };
    expect(plain(await summaries.sessions(filter, {}))).toEqual(await raw.sessions(filter, {}));
    const read = async (q: SummarizedReads) => plain(await pages<SessionRow>((after) => q.sessions(filter, { limit: 2, after: after && { startUs: after.startUs, key: after.sessionKey } }), 2));
    expect(await read(summaries)).toEqual(await read(raw));
  }
  // Each session's call totals are its runs' model calls summed by model.
  for (const s of await summaries.sessions({ projectId }, {})) {
    const runsOf = new Set(all.filter((x) => x.sessionKey === s.sessionKey).map((x) => x.traceId));
    const want = noCalls();
    addCalls(want, rawUsage.filter((u) => runsOf.has(u.traceId)), 1);
    expect({ session: s.sessionKey, totals: s.callTotals && totalsText(s.callTotals) }).toEqual({ session: s.sessionKey, totals: totalsText(want) });
  }
  for (const s of ['s-0', 's-1', 's-5']) {
    const read = (q: SummarizedReads) => pages<TurnRow>((after) => q.turns(projectId, s, { limit: 1, after: after && { startUs: after.startUs, key: after.turnId } }), 1);
    expect(await read(summaries)).toEqual(await read(raw));
  }
  // The trace list against a GROUP BY over the raw spans (each span once: its first ingested copy).
  const expected = await db.read((c) =>
    rows(
      c,
      `WITH once AS (SELECT * FROM spans WHERE project_id = $p QUALIFY row_number() OVER (PARTITION BY trace_id, span_id ORDER BY ingested_at_us, start_us) = 1)
       SELECT trace_id, min(start_us), max(end_us), count(*), count(*) FILTER (WHERE status_code = 'error'),
         list_sort(list_distinct(list(service_name) FILTER (WHERE service_name IS NOT NULL))),
         first(span_id ORDER BY parent_span_id IS NOT NULL, start_us, span_id), bool_and(parent_span_id IS NOT NULL)
       FROM once GROUP BY trace_id ORDER BY min(start_us) DESC, trace_id DESC`,
      { p: projectId },
    ),
  );
  const got = await pages<TraceSummaryRow>((after) => traces.search({ projectId, fromUs: 0, toUs: BASE_US * 2, attrs: [], limit: 3, after: after && { startUs: after.startUs, traceId: after.traceId } }), 3);
  expect(got.map((t) => [t.traceId, t.startUs, t.endUs, t.spanCount, t.errorCount, t.services, t.rootSpanId, t.rootMissing])).toEqual(
    expected.map((e) => [e[0], Number(e[1]), Number(e[2]), Number(e[3]), Number(e[4]), e[5] ?? [], e[6], e[7]]),
  );
  expect(new Set(got.map((t) => t.traceId))).toEqual(new Set(traceIds));
}

describe('summaries kept at ingest equal the recomputation from raw spans', () => {
  for (const [label, cached] of [
    ['with the writer remembering recent traces', 200_000],
    ['with no memory (every stored trace read back from spans)', 0],
  ] as const) {
    it(label, async () => {
      summaryUpkeep(db).maxCachedSpans = cached;
      summaryUpkeep(db).sessions.maxCachedRuns = cached;
      for (let seed = 1; seed <= 4; seed++) {
        const r = rng(seed * 7919 + cached);
        const projectId = `p-${cached}-${seed}`;
        const ids = await stream(r, projectId, 20 + r.int(40));
        await compareAll(r, projectId, ids);
      }
    }, 180_000); // four randomized streams, each compared on every list, filter and cursor: slow on a loaded machine
  }

  it('the one-time backfill of an upgraded file builds the same rows', async () => {
    const dump = () =>
      db.read(async (c) => ({
        traces: await rows(c, 'SELECT * FROM trace_summaries ORDER BY project_id, trace_id', {}),
        runs: await rows(c, 'SELECT * FROM run_summaries ORDER BY project_id, trace_id', {}),
        sessions: await rows(c, 'SELECT * FROM session_summaries ORDER BY project_id, session_key', {}),
      }));
    const before = await dump();
    expect(before.runs.length).toBeGreaterThan(50);
    const lines: string[] = [];
    const source = await db.instance.connect();
    await db.read(async (c) => {
      await c.run("DELETE FROM telemetry_upgrades WHERE name = 'summaries_v1'");
      expect(await backfillSummaries(c, source, (l) => lines.push(l))).toBe(true);
      expect(await backfillSummaries(c, source)).toBe(false); // once
    });
    source.closeSync();
    expect(lines[0]).toMatch(/^summaries: building run, trace and session summaries from \d+ stored spans/);
    expect(await dump()).toEqual(before);
  });
});
