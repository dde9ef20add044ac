/**
 * The agent reads (issue 4): runs, the run graph, sessions, turns, agent events and agent identities,
 * per docs/agent-model.md. No HTTP, no SQL: request-rules.ts checks what is asked, the store port reads,
 * cost.ts and views.ts shape the answer.
 *
 * Decisions the spec leaves open (also in docs/reference.md):
 * - Page sizes: runs, sessions, turns default 50, max 200; events default 100, max 500; identities
 *   default 100, max 200. `limit=0` is refused (400) on all of them.
 * - Lists are newest first by start time (runs: the root's start; sessions: the first run's start; turns:
 *   the first run's start; events: the event time), ties by the id descending. Identities are in code
 *   point order of the observation key.
 * - A cursor continues only the query it was issued for (project, selectors, filters, time bounds): another
 *   query with it is 400 (spec 1 "Pagination" rule 5 made checkable).
 * - `since`/`until` are a closed window on the run start (runs), the session start (sessions) or the event
 *   time (events), in the API's time vocabulary (http/time.ts: RFC 3339 or a duration before now such as
 *   `1h`), microsecond precision. A cursor of a duration window continues with the duration's text.
 * - A malformed run id in the path (not 32 hex characters) is 400; an unknown run, or a run of another
 *   project, is 404 (the same answer). Upper-case hex is accepted and read as lower case.
 * - The run's counts (`step_count`, `error_steps`, `tool_calls`, `model_calls`, `safety_error_steps`) and
 *   the graph's `counts` are over every step, the root too, as `steps[]` lists them (`run.root_step_id`
 *   names the root), so `step_count` = `counts.steps` = the length of `steps`. A run status that is not one of the SDK's wire values is read as absent.
 * - The graph refuses a run with more than 10,000 steps (spans, root included) with 429 `result_too_large`
 *   naming the limit; it never truncates.
 * - Agent events are the events of the steps of runs (spans of traces with an invoke_agent span); their
 *   `session_key`, `turn_id`, `observation_key` are their run's.
 * - Event anchors: `run_id` or `session_key` (any window, optional); `observation_key` with both `since`
 *   and `until` at most 7 days apart; otherwise `since` and `until` at most 24 hours apart.
 *   `context_source_id` narrows any of these and is refused alone. `CANONICAL_OPERATION_UNKNOWN` is a
 *   valid `canonical_operation` filter value (steps with no known operation); other unknown values are 400.
 * - Turns: `GET /agent-turns` needs `session_key`; a session no run carries gives an empty list. Runs
 *   without a turn id belong to no turn. Each turn lists at most 50 runs, oldest first (`runs_truncated`
 *   when more), and its run_count and cost cover all of them.
 * - Session/turn cost: the sum of the runs' model costs (a run with no model call adds nothing), absent
 *   with `run_cost_unavailable` when a run's model cost is missing or unpriced, or `zero_cost` when it sums to 0.
 * - Identities (`/agent-identities`, our name for the attribution read of spec 2 "Attribution entry"):
 *   repeated `observation_key` answers each named key (an unseen one with `credentials: []`) in one page;
 *   the lookup by path answers 404 for a key never seen.
 */
import { invalidRequest, notFound, tooLarge } from '../../http/errors.js';
import { readLimit } from '../../http/pagination.js';
import { systemClock, type Clock } from '../../lib/clock.js';
import { groupCost, PriceBook, pooledGroupCost, runCosts, stepCost, type Cost, type GroupCostReason, type RunCostReason, type StepCost } from './cost.js';
import { SessionCosts } from './session-costs.js';
import { totalsCost } from './call-totals.js';
import { MEMORY_OPERATIONS, OP, OUTCOMES, modelCallIds, type Outcome } from './model.js';
import type { ModelPrices } from './pricing-port.js';
import {
  cursorNumber,
  eventSelection,
  EVENT_LIMIT,
  fingerprint,
  IDENTITY_LIMIT,
  makeCursor,
  MAX_GRAPH_STEPS,
  MAX_IDENTITY_KEYS,
  MAX_TURN_RUNS,
  readCursor,
  readWindow,
  RUN_ID_PATTERN,
  RUN_LIMIT,
  runStatusFilter,
  SESSION_LIMIT,
  TURN_LIMIT,
  pageOf,
  type EventQueryInput,
} from './request-rules.js';
import type { AgentRunsStore, ModelUsageRow, RunRow, SessionRow, StepRow } from './store.js';
import { eventView, groupTimes, identityView, runView, stepView, type RunView } from './views.js';

export interface PageInput {
  cursor?: string;
  limit?: number;
}

export interface RunListInput extends PageInput {
  status?: string | string[];
  session_key?: string;
  observation_key?: string;
  since?: string;
  until?: string;
}

export interface SessionListInput extends PageInput {
  since?: string;
  until?: string;
}

export interface TurnListInput extends PageInput {
  session_key: string;
}

export interface IdentityListInput extends PageInput {
  observation_key?: string | string[];
}

export type EventListInput = EventQueryInput & PageInput;

const RUN_ID = new RegExp(RUN_ID_PATTERN);
const HEX32 = /^[0-9a-f]{32}$/;
const MEMORY_OPS = new Set(MEMORY_OPERATIONS);

const malformedCursor = () => invalidRequest('cursor is malformed or expired');

function normalRunId(runId: string): string {
  if (!RUN_ID.test(runId)) throw invalidRequest('run_id must be 32 hexadecimal characters');
  return runId.toLowerCase();
}

const nonEmpty = (field: string, v: string | undefined) => {
  if (v === '') throw invalidRequest(`${field} must not be empty`);
  return v;
};

/** The cost of a session whose runs made no model call (the store lists no calls for it). */
const NO_MODEL_CALLS: Cost<GroupCostReason> = { cost_unavailable_reason: 'zero_cost' };

export class AgentRunsService {
  /** Session costs remembered by what they were computed from (session-costs.ts). */
  private readonly sessionCosts = new SessionCosts();

  constructor(
    private readonly store: AgentRunsStore,
    private readonly pricing: ModelPrices,
    private readonly clock: Clock = systemClock,
  ) {}

  private nowMs(): number {
    return this.clock.now().getTime();
  }

  // ---- runs

  /** Run views with their costs (prices are read now, so a price set later prices runs already stored). */
  private async costed(projectId: string, rows: RunRow[]): Promise<RunView[]> {
    const costs = await this.runCostsOf(projectId, rows);
    return rows.map((r) => runView(r, costs.get(r.traceId)!));
  }

  /** The cost of each of these runs, by trace id. */
  private async runCostsOf(projectId: string, rows: RunRow[]): Promise<Map<string, Cost<RunCostReason>>> {
    const ids = rows.map((r) => r.traceId);
    // Read with the runs when the store keeps them (summaries); asked for otherwise.
    const usage = rows.every((r) => r.usage)
      ? rows.flatMap((r) => r.usage!.map((u) => ({ ...u, traceId: r.traceId })))
      : await this.store.modelUsage(projectId, ids);
    const book = await PriceBook.load(this.pricing, projectId, usage);
    return runCosts(ids, usage, book);
  }

  async listRuns(projectId: string, q: RunListInput) {
    const statuses = runStatusFilter(q.status);
    const sessionKey = nonEmpty('session_key', q.session_key);
    const observationKey = nonEmpty('observation_key', q.observation_key);
    const { window, key } = readWindow(q, this.nowMs());
    const limit = readLimit(q.limit, RUN_LIMIT);
    const fp = fingerprint(['runs', projectId, statuses ?? null, sessionKey ?? null, observationKey ?? null, ...key]);
    const pos = readCursor(q.cursor, fp);
    if (pos && !HEX32.test(pos.id)) throw malformedCursor();
    const rows = await this.store.runs(
      { projectId, statuses, sessionKeys: sessionKey === undefined ? undefined : [sessionKey], observationKey, ...window },
      { after: pos && { startUs: cursorNumber(pos.k), traceId: pos.id }, limit: limit + 1 },
    );
    const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.startUs, r.traceId));
    return { runs: await this.costed(projectId, items), next_cursor };
  }

  private async runRow(projectId: string, runId: string): Promise<RunRow> {
    const id = normalRunId(runId);
    const [row] = await this.store.runs({ projectId, traceIds: [id] }, {});
    if (!row) throw notFound('agent run');
    return row;
  }

  async getRun(projectId: string, runId: string) {
    const [view] = await this.costed(projectId, [await this.runRow(projectId, runId)]);
    return view;
  }

  async graph(projectId: string, runId: string) {
    const run = await this.runRow(projectId, runId);
    // The run's summary counts its steps (every span of the trace is one): no read of its own.
    const total = run.stepCount;
    if (total > MAX_GRAPH_STEPS)
      throw tooLarge(`this run has ${total} steps; the run graph answers at most ${MAX_GRAPH_STEPS} steps and never truncates`, {
        limit: MAX_GRAPH_STEPS,
        steps: total,
      });
    const steps = await this.store.steps(projectId, run.traceId);
    const book = await PriceBook.load(this.pricing, projectId, steps);

    const calls = modelCallIds(steps);
    const costOf = (s: StepRow): StepCost | undefined => {
      if (calls.has(s.spanId)) return stepCost(s, book);
      // Another step (a parent that reports its children's token totals, as the AI SDK's call span does)
      // is never priced from tokens, so step costs never add up twice; it shows only a cost it reports itself.
      return s.reportedCostNanos !== null ? { cost_nanos: s.reportedCostNanos } : undefined;
    };
    const usage: ModelUsageRow[] = steps.filter((s) => calls.has(s.spanId)).map((s) => ({ ...s, traceId: run.traceId, steps: 1 }));
    const runCost = runCosts([run.traceId], usage, book).get(run.traceId)!;

    // Every span is a step, the root too, so `counts.steps` is the length of `steps` and agrees with the run's `step_count`.
    const counted = steps;
    const byOperation: Record<string, number> = {};
    const byOutcome = { OUTCOME_OK: 0, OUTCOME_ERROR: 0, OUTCOME_CANCELLED: 0, unset: 0 };
    for (const s of counted) {
      byOperation[s.canonicalOperation] = (byOperation[s.canonicalOperation] ?? 0) + 1;
      const o = s.outcome !== null && (OUTCOMES as readonly string[]).includes(s.outcome) ? (s.outcome as Outcome) : 'unset';
      byOutcome[o] += 1;
    }
    return {
      run: runView(run, runCost),
      steps: steps.map((s) => stepView(s, costOf(s))),
      counts: {
        steps: counted.length,
        by_canonical_operation: byOperation,
        by_outcome: byOutcome,
        tool_calls: counted.filter((s) => s.canonicalOperation === OP.executeTool).length,
        model_calls: calls.size,
        error_steps: byOutcome.OUTCOME_ERROR,
        memory_ops: counted.filter((s) => MEMORY_OPS.has(s.canonicalOperation)).length,
        instrumented_steps: counted.filter((s) => s.contextEvents > 0).length,
      },
      action_receipts: [] as Record<string, unknown>[],
    };
  }

  // ---- sessions and turns

  private async sessionViews(projectId: string, rows: SessionRow[]) {
    if (rows.length === 0) return [];
    const costs = await this.sessionCostsOf(projectId, rows);
    return rows.map((s) => ({
      session_key: s.sessionKey,
      run_count: s.runCount,
      ...(s.turnCount > 0 ? { turn_count: s.turnCount } : {}),
      ...groupTimes(s.startUs, s.endUs),
      ...(costs.get(s.sessionKey) ?? NO_MODEL_CALLS),
    }));
  }

  /**
   * Each session's cost from the model calls of its runs (no run views, no cost per run): from the calls'
   * totals by model the store keeps with the session when its models' prices allow (call-totals.ts), else
   * priced call by call. A cost priced call by call before is taken again when the store's fingerprint of the
   * session's calls and the prices of its models are what they were (session-costs.ts).
   */
  private async sessionCostsOf(projectId: string, rows: SessionRow[]): Promise<Map<string, Cost<GroupCostReason>>> {
    const out = new Map<string, Cost<GroupCostReason>>();
    const summed = rows.filter((r) => r.callTotals);
    if (summed.length) {
      const book = await PriceBook.load(this.pricing, projectId, summed.flatMap((r) => r.callTotals!.models));
      for (const r of summed) {
        const cost = totalsCost(r.callTotals!, book);
        if (cost) out.set(r.sessionKey, cost);
      }
    }
    const keys = rows.filter((r) => !out.has(r.sessionKey)).map((r) => r.sessionKey);
    if (keys.length === 0) return out;
    const fingerprints = await this.store.sessionUsageFingerprints(projectId, keys);
    const candidates: [string, NonNullable<ReturnType<SessionCosts['candidate']>>][] = [];
    for (const [key, fp] of fingerprints) {
      const e = this.sessionCosts.candidate(projectId, key, fp);
      if (e) candidates.push([key, e]);
    }
    if (candidates.length) {
      const book = await PriceBook.load(this.pricing, projectId, candidates.flatMap(([, e]) => e.models));
      for (const [key, e] of candidates) if (SessionCosts.pricesOf(book, e.models) === e.prices) out.set(key, e.cost);
    }
    const misses = [...fingerprints.keys()].filter((k) => !out.has(k));
    if (misses.length === 0) return out;
    const usage = await this.store.sessionUsage(projectId, misses);
    const book = await PriceBook.load(this.pricing, projectId, [...usage.values()].flatMap((u) => u.calls));
    for (const [key, u] of usage) {
      const cost = pooledGroupCost(u.calls, book);
      const models = SessionCosts.modelsOf(u.calls);
      this.sessionCosts.remember(projectId, key, { fingerprint: u.fingerprint, models, prices: SessionCosts.pricesOf(book, models), cost });
      out.set(key, cost);
    }
    return out;
  }

  async listSessions(projectId: string, q: SessionListInput) {
    const { window, key } = readWindow(q, this.nowMs());
    const limit = readLimit(q.limit, SESSION_LIMIT);
    const fp = fingerprint(['sessions', projectId, ...key]);
    const pos = readCursor(q.cursor, fp);
    const rows = await this.store.sessions(
      { projectId, ...window },
      { after: pos && { startUs: cursorNumber(pos.k), key: pos.id }, limit: limit + 1 },
    );
    const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.startUs, r.sessionKey));
    return { sessions: await this.sessionViews(projectId, items), next_cursor };
  }

  async getSession(projectId: string, sessionKey: string) {
    const rows = await this.store.sessions({ projectId, sessionKeys: [sessionKey] }, {});
    if (rows.length === 0) throw notFound('agent session');
    const [view] = await this.sessionViews(projectId, rows);
    return view;
  }

  async listTurns(projectId: string, q: TurnListInput) {
    const sessionKey = nonEmpty('session_key', q.session_key)!;
    const limit = readLimit(q.limit, TURN_LIMIT);
    const fp = fingerprint(['turns', projectId, sessionKey]);
    const pos = readCursor(q.cursor, fp);
    const rows = await this.store.turns(projectId, sessionKey, { after: pos && { startUs: cursorNumber(pos.k), key: pos.id }, limit: limit + 1 });
    const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.startUs, r.turnId));
    const runs = items.length
      ? await this.costed(projectId, await this.store.runs({ projectId, sessionKeys: [sessionKey], turnIds: items.map((t) => t.turnId) }, {}))
      : [];
    const byTurn = new Map<string, RunView[]>();
    for (const r of runs.reverse()) {
      // oldest first
      const list = byTurn.get(r.turn_id!) ?? [];
      list.push(r);
      byTurn.set(r.turn_id!, list);
    }
    return {
      turns: items.map((t) => {
        const all = byTurn.get(t.turnId) ?? [];
        return {
          turn_id: t.turnId,
          session_key: sessionKey,
          run_count: t.runCount,
          ...groupTimes(t.startUs, t.endUs),
          ...groupCost(all.map(costOfView)),
          runs: all.slice(0, MAX_TURN_RUNS),
          ...(all.length > MAX_TURN_RUNS ? { runs_truncated: true as const } : {}),
        };
      }),
      next_cursor,
    };
  }

  // ---- agent events

  async listEvents(projectId: string, q: EventListInput) {
    const { sel, key } = eventSelection(q, this.nowMs());
    const limit = readLimit(q.limit, EVENT_LIMIT);
    const fp = fingerprint(['events', projectId, key]);
    const pos = readCursor(q.cursor, fp);
    let after;
    if (pos) {
      const m = /^([0-9a-f]{32}):([0-9a-f]{16}):(\d{1,9})$/.exec(pos.id);
      if (!m) throw malformedCursor();
      after = { tsUs: cursorNumber(pos.k), traceId: m[1], spanId: m[2], index: Number(m[3]) };
    }
    const rows = await this.store.events({ projectId, ...sel }, { after, limit: limit + 1 });
    const { items, next_cursor } = pageOf(rows, limit, (e) => makeCursor(fp, e.tsUs, `${e.traceId}:${e.spanId}:${e.index}`));
    return { events: items.map(eventView), next_cursor };
  }

  // ---- agent identities (attribution)

  async listIdentities(projectId: string, q: IdentityListInput) {
    if (q.observation_key !== undefined) {
      const keys = [...new Set(Array.isArray(q.observation_key) ? q.observation_key : [q.observation_key])];
      if (keys.some((k) => k === '')) throw invalidRequest('observation_key must not be empty');
      if (keys.length > MAX_IDENTITY_KEYS) throw invalidRequest(`at most ${MAX_IDENTITY_KEYS} observation_key values per request`);
      if (q.cursor !== undefined || q.limit !== undefined)
        throw invalidRequest('an observation_key lookup answers every named key in one page: cursor and limit do not apply');
      const rows = await this.store.sightings(projectId, keys);
      return { identities: keys.map((k) => identityView(k, rows.filter((r) => r.observationKey === k))), next_cursor: null };
    }
    const limit = readLimit(q.limit, IDENTITY_LIMIT);
    const fp = fingerprint(['identities', projectId]);
    const pos = readCursor(q.cursor, fp);
    const keys = await this.store.identityKeys(projectId, { after: pos?.id, limit: limit + 1 });
    const { items, next_cursor } = pageOf(keys, limit, (k) => makeCursor(fp, 0, k));
    const rows = await this.store.sightings(projectId, items);
    return { identities: items.map((k) => identityView(k, rows.filter((r) => r.observationKey === k))), next_cursor };
  }

  /** The sightings of these observation keys, as stored (for the resolution of a containment's target). */
  sightingRows(projectId: string, observationKeys: string[]) {
    return this.store.sightings(projectId, observationKeys);
  }

  async getIdentity(projectId: string, observationKey: string) {
    const rows = await this.store.sightings(projectId, [observationKey]);
    if (rows.length === 0) throw notFound('agent identity');
    return identityView(observationKey, rows);
  }
}

function costOfView(v: RunView): Cost<RunCostReason> {
  return 'cost_nanos' in v && v.cost_nanos !== undefined
    ? { cost_nanos: v.cost_nanos }
    : { cost_unavailable_reason: (v as { cost_unavailable_reason: RunCostReason }).cost_unavailable_reason };
}
