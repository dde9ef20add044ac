/**
 * The case encoding of datasets (docs/evaluations-datasets.md "Cases"): a self-contained, frozen
 * projection of one agent run. No HTTP, no SQL.
 *
 * - A case carries everything the model-less scorers read of a run (`caseFacts` rebuilds the run's
 *   `RunFacts`, so a dataset item is scored exactly like the run it came from): status, duration, step
 *   counts, tool and model calls, cost (or null with its reason), safety error steps (or null), the
 *   ordered steps (every step but the root, oldest first) with canonical operation, outcome and tool
 *   name, and the release.
 * - It carries the recorded content the project's content settings let us copy out (asked at the
 *   `export` boundary): model transcript bodies, tool call arguments and results, memory item contents,
 *   per step (and the root's own on `run.content`), as `{key, content_class, value}` sorted by key.
 * - A class of content the run recorded but the settings did not let us copy (not `allow` at export, or
 *   kept only as a size marker when it was stored) is named in `withheld_classes` (sorted, each once):
 *   recorded as withheld, never silently missing. Its values are not in the case.
 * - The case id is the SHA-256 (lower-case hex) of the RFC 8785 canonical JSON of the case. Who
 *   reviewed it and when is not part of the case (it is the item's), so promoting the same run twice
 *   gives one case, and a case keeps its id across dataset versions.
 */
import { isoMicros } from '../../traces/query-rules.js';
import { parseTimeBound } from '../../../http/time.js';
import { canonicalJson, sha256 } from '../../signing/byte-contract.js';
import { contentClassOf, type ContentClass } from '../../content/content-keys.js';
import { isMetadataMarker } from '../../content-policy/model.js';
import type { StepRow } from '../../agent-runs/store.js';
import type { RunFacts, StepFact } from '../model.js';

/** A JSON value as recorded in a step attribute. */
export type CaseValue = string | number | boolean | null | CaseValue[] | { [k: string]: CaseValue };

/** One recorded content attribute of a step. */
export interface CaseContent {
  /** The attribute key as recorded. */
  key: string;
  content_class: ContentClass;
  value: CaseValue;
}

export interface CaseStep {
  step_id: string;
  parent_step_id: string | null;
  name: string;
  canonical_operation: string;
  /** OUTCOME_OK | OUTCOME_ERROR | OUTCOME_CANCELLED, or null when none was stated. */
  outcome: string | null;
  tool_name: string | null;
  /** RFC 3339 UTC with microseconds. */
  started_at: string;
  safety_check: boolean;
  /** Recorded content copied out of the step, sorted by key (empty: none recorded, or all withheld). */
  content: CaseContent[];
}

export interface CaseRun {
  run_id: string;
  root_step_id: string;
  status: string | null;
  /** RFC 3339 UTC with microseconds. */
  started_at: string;
  duration_ms: number | null;
  step_count: number;
  error_steps: number;
  tool_calls: number;
  model_calls: number;
  /** Billionths of a US dollar; null: missing or unpriced (never a measured zero). */
  cost_nanos: number | null;
  /** Why `cost_nanos` is null, when the run reads said so. */
  cost_unavailable_reason: string | null;
  /** Null: no explicitly identified safety step with an outcome. */
  safety_error_steps: number | null;
  session_key: string | null;
  release: string | null;
  /** The root step's recorded content (sorted by key). */
  content: CaseContent[];
}

export interface DatasetCase {
  run: CaseRun;
  /** Every step but the root, oldest first (start time, then step id). */
  steps: CaseStep[];
  /** Content classes the run recorded that the content settings withheld (sorted, each once). */
  withheld_classes: ContentClass[];
}

/** A case id: 64 lower-case hexadecimal characters. */
export const CASE_ID = /^[0-9a-f]{64}$/;

/** The case id: SHA-256 of the case's RFC 8785 canonical JSON (review data is not part of a case). */
export function caseId(c: DatasetCase): string {
  return sha256(canonicalJson(c)).toString('hex');
}

const micros = (iso: string) => parseTimeBound('started_at', iso, 0).us;

/** The run's facts as the model-less scorers read them, rebuilt from the case alone. */
export function caseFacts(c: DatasetCase): RunFacts {
  const r = c.run;
  const steps: StepFact[] = c.steps.map((s) => ({
    spanId: s.step_id,
    parentSpanId: s.parent_step_id,
    canonicalOperation: s.canonical_operation,
    outcome: s.outcome,
    toolName: s.tool_name,
    startUs: micros(s.started_at),
    safetyCheck: s.safety_check,
  }));
  return {
    kind: 'run',
    runId: r.run_id,
    status: r.status,
    startUs: micros(r.started_at),
    durationMs: r.duration_ms,
    stepCount: r.step_count,
    errorSteps: r.error_steps,
    toolCalls: r.tool_calls,
    modelCalls: r.model_calls,
    costNanos: r.cost_nanos,
    ...(r.cost_nanos === null && r.cost_unavailable_reason !== null ? { costUnavailableReason: r.cost_unavailable_reason } : {}),
    safetyErrorSteps: r.safety_error_steps,
    steps,
    sessionKey: r.session_key,
    release: r.release,
  };
}

// ---- freezing a run

/** The content classes recorded in these steps' attributes (markers included), sorted. */
export function recordedClasses(rows: readonly StepRow[]): ContentClass[] {
  const out = new Set<ContentClass>();
  for (const row of rows) for (const [key] of attributeEntries(row)) {
    const cls = contentClassOf(key);
    if (cls) out.add(cls);
  }
  return [...out].sort();
}

function attributeEntries(row: StepRow): [string, unknown][] {
  let attrs: unknown;
  try {
    attrs = JSON.parse(row.attributes);
  } catch {
    return [];
  }
  if (typeof attrs !== 'object' || attrs === null || Array.isArray(attrs)) return [];
  return Object.entries(attrs as Record<string, unknown>).filter(([, v]) => v !== null && v !== undefined);
}

/**
 * The copyable content of one step: only classes `allowed`; a value that is only the store's size
 * marker is never copied (its class is reported in `withheldAtStore`).
 */
function contentOf(row: StepRow | undefined, allowed: ReadonlySet<ContentClass>, withheld: Set<ContentClass>): CaseContent[] {
  if (!row) return [];
  const out: CaseContent[] = [];
  for (const [key, v] of attributeEntries(row)) {
    const cls = contentClassOf(key);
    if (!cls) continue;
    if (!allowed.has(cls) || isMetadataMarker(v)) {
      withheld.add(cls);
      continue;
    }
    out.push({ key, content_class: cls, value: v as CaseValue });
  }
  return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * Freezes a run into a case: its facts (scoring/facts.ts), its stored steps (every span of the run,
 * the root included) and the content classes the content settings allow at export.
 */
export function freezeCase(facts: RunFacts, rows: readonly StepRow[], allowed: ReadonlySet<ContentClass>): DatasetCase {
  const byId = new Map(rows.map((r) => [r.spanId, r]));
  const stepIds = new Set(facts.steps.map((s) => s.spanId));
  const rest = rows.filter((r) => !stepIds.has(r.spanId));
  const root = rest.find((r) => r.parentSpanId === null || r.parentSpanId === '' || !byId.has(r.parentSpanId)) ?? rest[0];
  const withheld = new Set<ContentClass>();
  const steps: CaseStep[] = facts.steps.map((s) => ({
    step_id: s.spanId,
    parent_step_id: s.parentSpanId,
    name: byId.get(s.spanId)?.name ?? '',
    canonical_operation: s.canonicalOperation,
    outcome: s.outcome,
    tool_name: s.toolName,
    started_at: isoMicros(s.startUs),
    safety_check: s.safetyCheck === true,
    content: contentOf(byId.get(s.spanId), allowed, withheld),
  }));
  const run: CaseRun = {
    run_id: facts.runId,
    root_step_id: root?.spanId ?? '',
    status: facts.status,
    started_at: isoMicros(facts.startUs),
    duration_ms: facts.durationMs,
    step_count: facts.stepCount,
    error_steps: facts.errorSteps,
    tool_calls: facts.toolCalls,
    model_calls: facts.modelCalls,
    cost_nanos: facts.costNanos,
    cost_unavailable_reason: facts.costNanos === null ? (facts.costUnavailableReason ?? null) : null,
    safety_error_steps: facts.safetyErrorSteps,
    session_key: facts.sessionKey,
    release: facts.release,
    content: contentOf(root, allowed, withheld),
  };
  return { run, steps, withheld_classes: [...withheld].sort() };
}
