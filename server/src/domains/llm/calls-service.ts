/**
 * The model-call reads (docs/agent-model.md "Model calls outside runs"): `GET /llm/calls` lists every model
 * call of a project, inside an agent run or not; `GET /llm/usage` sums them by (provider, model). A team that
 * instruments only its model client (no agent span, so no run) finds its calls, tokens and costs here.
 * No HTTP, no SQL: the store port reads, the agent-run cost rules price (cost.ts), nothing is priced twice.
 *
 * Decisions:
 * - The window is `since`/`until` on the call's start, read as `GET /traces` reads it (traces/query-rules.ts
 *   `resolveWindow`): closed, default the 24 hours ending at `until` (default now); with only `since`, from
 *   `since` to now. `since` after `until` is 400.
 * - `model`, `provider`, `service_name` are exact matches (AND).
 * - Calls are newest first by start, then span id, then trace id (all descending); `limit` default 100, at most
 *   200, 0 refused. A cursor continues only the query it was issued for (400 otherwise), as the agent reads do.
 * - A call's cost is exactly a model step's (`stepCost`): its reported `svc.cost.nanos`, else its tokens times
 *   its model's price, else absent with `missing_usage` or `unpriced_model`.
 * - Usage groups: `input_tokens`/`output_tokens` sum the calls that reported them; `calls_without_usage` counts
 *   the calls that reported neither; `cost_nanos` is the sum of the calls' costs, absent when a call has none
 *   (`missing_usage` before `unpriced_model`, as a run). At most 1000 groups (`truncated: true` past that);
 *   `totals` cover every call, and cost 0 when there is none.
 */
import type { Static } from '@sinclair/typebox';
import { invalidRequest } from '../../http/errors.js';
import { page, readLimit, type LimitRule } from '../../http/pagination.js';
import { boundKey, parseTimeBound } from '../../http/time.js';
import type { Clock } from '../../lib/clock.js';
import { PriceBook, stepCost, sumCallCosts, type Cost, type StepCost } from '../agent-runs/cost.js';
import type { ModelPrices } from '../agent-runs/pricing-port.js';
import { cursorNumber, durationMs, fingerprint, readCursor } from '../agent-runs/request-rules.js';
import { present } from '../agent-runs/views.js';
import { isoMicros, resolveWindow } from '../traces/query-rules.js';
import { SPAN_STATUSES } from '../traces/store.js';
import type { LlmCall, LlmUsageGroup } from './calls-schemas.js';
import type { LlmCallFilter, LlmCallPosition, LlmCallRow, LlmCallsStore, LlmUsageRow } from './calls-store.js';

export const CALL_LIMIT: LimitRule = { default: 100, max: 200 };
/** Usage groups answered at most; more sets `truncated`. */
export const MAX_USAGE_GROUPS = 1000;
export const CALL_COST_REASONS = ['missing_usage', 'unpriced_model'] as const;
type CallCostReason = (typeof CALL_COST_REASONS)[number];

export interface LlmCallsQuery {
  since?: string;
  until?: string;
  model?: string;
  provider?: string;
  service_name?: string;
}

export interface ListLlmCallsInput extends LlmCallsQuery {
  cursor?: string;
  limit?: number;
}

const CALL_CURSOR = /^([0-9a-f]{16}):([0-9a-f]{32})$/;

type UsageFields = Omit<Static<typeof LlmUsageGroup>, 'provider' | 'model'>;

/** A sum of model calls: counts, token sums and cost. */
class UsageSum {
  calls = 0;
  inputTokens = 0;
  outputTokens = 0;
  withoutUsage = 0;

  add(r: LlmUsageRow): void {
    this.calls += r.calls;
    if (r.inputTokens !== null) this.inputTokens += r.inputTokens * r.calls;
    if (r.outputTokens !== null) this.outputTokens += r.outputTokens * r.calls;
    if (r.inputTokens === null && r.outputTokens === null) this.withoutUsage += r.calls;
  }

  view(cost: Cost<CallCostReason | 'no_model_calls'>): UsageFields {
    // A sum without calls (the totals of an empty window) is measured: nothing was spent.
    const measured = 'cost_unavailable_reason' in cost && cost.cost_unavailable_reason === 'no_model_calls' ? { cost_nanos: 0 } : cost;
    return {
      model_calls: this.calls,
      input_tokens: this.inputTokens,
      output_tokens: this.outputTokens,
      calls_without_usage: this.withoutUsage,
      ...(measured as Cost<CallCostReason>),
    };
  }
}

type CallCost = { cost: StepCost; count: number };
/** null (absent) first, then code point order. */
const byText = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1);

export class LlmCallsService {
  constructor(
    private readonly store: LlmCallsStore,
    private readonly pricing: ModelPrices,
    private readonly clock: Clock,
  ) {}

  /** The filter of a read, and what a cursor's fingerprint keeps of it (a duration bound's text, a timestamp's instant). */
  private filterOf(projectId: string, q: LlmCallsQuery): { filter: LlmCallFilter; key: unknown[] } {
    const nowMs = this.clock.now().getTime();
    const w = resolveWindow(q, nowMs);
    const bound = (field: 'since' | 'until') => {
      const text = q[field];
      return text === undefined ? null : boundKey(text, parseTimeBound(field, text, nowMs));
    };
    return {
      filter: { projectId, sinceUs: w.fromUs, untilUs: w.toUs, model: q.model, provider: q.provider, serviceName: q.service_name },
      key: [projectId, q.model ?? null, q.provider ?? null, q.service_name ?? null, bound('since'), bound('until')],
    };
  }

  async listCalls(projectId: string, q: ListLlmCallsInput) {
    const { filter, key } = this.filterOf(projectId, q);
    const limit = readLimit(q.limit, CALL_LIMIT);
    const fp = fingerprint(['llm-calls', ...key]);
    const pos = readCursor(q.cursor, fp);
    let after: LlmCallPosition | undefined;
    if (pos) {
      const m = CALL_CURSOR.exec(pos.id);
      if (!m) throw invalidRequest('cursor is malformed or expired');
      after = { startUs: cursorNumber(pos.k), spanId: m[1], traceId: m[2] };
    }
    const rows = await this.store.calls(filter, { after, limit: limit + 1 });
    const { items, next_cursor } = page(rows, limit, (r) => ({ k: r.startUs, id: `${fp}.${r.spanId}:${r.traceId}` }));
    const book = await PriceBook.load(this.pricing, projectId, items);
    return { calls: items.map((r) => callView(r, book)), next_cursor };
  }

  async usage(projectId: string, q: LlmCallsQuery) {
    const { filter } = this.filterOf(projectId, q);
    const rows = await this.store.usage(filter);

    const groups = new Map<string, { provider: string | null; model: string | null; sum: UsageSum; costs: CallCost[] }>();
    const totals = { sum: new UsageSum(), costs: [] as CallCost[] };
    const rowGroups = rows.map((r) => {
      const k = JSON.stringify([r.provider, r.model]);
      let g = groups.get(k);
      if (!g) groups.set(k, (g = { provider: r.provider, model: r.model, sum: new UsageSum(), costs: [] }));
      return g;
    });
    // Prices are read once per (provider, model); each row is priced once, as a run step.
    const book = await PriceBook.load(this.pricing, projectId, [...groups.values()]);
    rows.forEach((r, i) => {
      const cost = { cost: stepCost(r, book), count: r.calls };
      for (const into of [rowGroups[i], totals]) {
        into.sum.add(r);
        into.costs.push(cost);
      }
    });

    const sorted = [...groups.values()].sort((a, b) => b.sum.calls - a.sum.calls || byText(a.provider, b.provider) || byText(a.model, b.model));
    return {
      groups: sorted.slice(0, MAX_USAGE_GROUPS).map((g) => ({ ...present({ provider: g.provider, model: g.model }), ...g.sum.view(sumCallCosts(g.costs)) })),
      totals: totals.sum.view(sumCallCosts(totals.costs)),
      truncated: sorted.length > MAX_USAGE_GROUPS,
      since: isoMicros(filter.sinceUs),
      until: isoMicros(filter.untilUs),
    };
  }
}

function callView(r: LlmCallRow, book: PriceBook): Static<typeof LlmCall> {
  return {
    trace_id: r.traceId,
    span_id: r.spanId,
    started_at: isoMicros(r.startUs),
    duration_ms: durationMs(r.startUs, r.endUs),
    canonical_operation: r.canonicalOperation,
    ...present({ service_name: r.serviceName, provider: r.provider, model: r.model, input_tokens: r.inputTokens, output_tokens: r.outputTokens }),
    ...stepCost(r, book),
    span_status: SPAN_STATUSES.find((s) => s === r.statusCode) ?? 'unset',
  };
}
