/**
 * Storage port of the model-call reads (`GET /llm/calls`, `GET /llm/usage`): every model call of a project,
 * inside an agent run or not (docs/agent-model.md "Model calls outside runs"). A model call is a stored span
 * whose canonical operation is a model operation (the adapter takes that predicate from the one constant the
 * agent reads use). Times are microseconds since the Unix epoch (UTC).
 *
 * A span stored more than once (a retried export) is one call: its first ingested copy. Rows of another
 * project are never read: every method takes the project.
 */
import type { StepUsage } from '../agent-runs/cost.js';

export interface LlmCallFilter {
  projectId: string;
  /** Closed window on the call's start. */
  sinceUs: number;
  untilUs: number;
  /** Exact matches, each optional. */
  model?: string;
  provider?: string;
  serviceName?: string;
}

/** Calls are ordered newest first by (start, span id, trace id), all descending; `after` is the last row of the previous page. */
export interface LlmCallPosition {
  startUs: number;
  spanId: string;
  traceId: string;
}

/** One model call: the span's own columns and its usage (provider, model, tokens, reported cost). */
export interface LlmCallRow extends StepUsage {
  traceId: string;
  spanId: string;
  startUs: number;
  endUs: number;
  canonicalOperation: string;
  serviceName: string | null;
  /** The OpenTelemetry span status as sent: unset | ok | error. */
  statusCode: string;
}

/** The calls of one (provider, model) with the same usage, counted (equal calls cost the same). */
export interface LlmUsageRow extends StepUsage {
  calls: number;
}

export interface LlmCallsStore {
  /** At most `limit` calls matching the filter, newest first, after the position. */
  calls(filter: LlmCallFilter, opts: { after?: LlmCallPosition; limit: number }): Promise<LlmCallRow[]>;
  /** Every call matching the filter, grouped by equal usage (provider, model, tokens, reported cost). */
  usage(filter: LlmCallFilter): Promise<LlmUsageRow[]>;
}
