/**
 * Sandbox replay of a dataset case (docs/evaluations-datasets.md "Sandbox replay"): walks the case's
 * recorded control flow with a sandbox plan and answers what each step would get, with no side effects
 * and nothing stored. Pure: no HTTP, no SQL.
 *
 * - A plan is `policies[]` of `{tool_name, effect}` and `default_effect`. Effects:
 *   SANDBOX_EFFECT_NONE (read-only: the recorded answer is replayed when the recording has one),
 *   SANDBOX_EFFECT_INTERNAL and SANDBOX_EFFECT_EXTERNAL (answered with a marked stub).
 * - An absent `default_effect` is EXTERNAL. A named tool the plan does not list takes the default. A tool
 *   call whose recording names no tool is always EXTERNAL (no plan can say it is safe).
 * - Refused: a tool listed twice, an effect outside the values (the accepted values are named),
 *   SANDBOX_EFFECT_UNSPECIFIED anywhere, a blank tool name, more than MAX_POLICIES policies.
 * - Step dispositions, one per step in order: `carried` (not a tool call: carried over as recorded),
 *   `recorded` (NONE, and the recording holds the tool's answer), `unrecorded` (NONE, and it does not:
 *   nothing recorded, possibly withheld by the content settings), `stubbed` (INTERNAL or EXTERNAL).
 * - The replayed run is in case encoding: the case with each stubbed step's recorded answer replaced by
 *   the marked stub (its arguments and the control flow stay as recorded).
 * - `plan_digest`: SHA-256 of the canonical JSON of the effective plan over the case's tools (each tool
 *   the case calls, with the effect it got). Plans that behave identically on this case (order, tools the
 *   case never calls, a default every tool overrides) give one digest.
 */
import { invalidRequest } from '../../../http/errors.js';
import { OP } from '../../agent-runs/model.js';
import { canonicalJson, sha256 } from '../../signing/byte-contract.js';
import type { CaseContent, CaseStep, DatasetCase } from '../datasets/case.js';

export const SANDBOX_EFFECTS = ['SANDBOX_EFFECT_UNSPECIFIED', 'SANDBOX_EFFECT_NONE', 'SANDBOX_EFFECT_INTERNAL', 'SANDBOX_EFFECT_EXTERNAL'] as const;
/** The values a plan may send (UNSPECIFIED is refused). */
export const WRITABLE_EFFECTS = ['SANDBOX_EFFECT_NONE', 'SANDBOX_EFFECT_INTERNAL', 'SANDBOX_EFFECT_EXTERNAL'] as const;
export type SandboxEffect = (typeof WRITABLE_EFFECTS)[number];
export const DEFAULT_EFFECT: SandboxEffect = 'SANDBOX_EFFECT_EXTERNAL';
export const MAX_POLICIES = 500;
export const MAX_TOOL_NAME = 256;

export const DISPOSITIONS = ['carried', 'recorded', 'unrecorded', 'stubbed'] as const;
export type Disposition = (typeof DISPOSITIONS)[number];

/** Attribute keys that hold a tool's answer (its result) in the conventions we read. */
export const TOOL_ANSWER_KEYS: readonly string[] = ['gen_ai.tool.call.result', 'ai.toolcall.result', 'ai.toolcall.output', 'output.value', 'traceloop.entity.output'];
const ANSWER = new Set(TOOL_ANSWER_KEYS);
/** The key a stub answer is put under (the GenAI convention's tool result). */
export const STUB_KEY = 'gen_ai.tool.call.result';

export interface SandboxPlanInput {
  policies?: { tool_name: string; effect: string }[];
  default_effect?: string;
}

export interface SandboxPlan {
  effects: Map<string, SandboxEffect>;
  defaultEffect: SandboxEffect;
}

export interface ReplayStep {
  index: number;
  step_id: string;
  canonical_operation: string;
  tool_name: string | null;
  /** Tool calls only: the effect the plan gave the call. */
  effect?: SandboxEffect;
  disposition: Disposition;
}

export interface Replay {
  replayed_run: DatasetCase;
  plan_digest: string;
  counts: { steps: number; tool_calls: number; replayed: number; stubbed: number; nothing_recorded: number };
  sandbox_tools: string[];
  steps: ReplayStep[];
}

function effectOf(field: string, v: unknown): SandboxEffect {
  if (v === 'SANDBOX_EFFECT_UNSPECIFIED')
    throw invalidRequest(`${field} is SANDBOX_EFFECT_UNSPECIFIED; name an effect: one of ${WRITABLE_EFFECTS.join(', ')}`, { accepted: [...WRITABLE_EFFECTS] });
  if (typeof v !== 'string' || !(WRITABLE_EFFECTS as readonly string[]).includes(v))
    throw invalidRequest(`${field} "${String(v).slice(0, 64)}" is not a sandbox effect; one of ${WRITABLE_EFFECTS.join(', ')}`, { accepted: [...WRITABLE_EFFECTS] });
  return v as SandboxEffect;
}

/** Reads a plan, refusing what the file's comment lists. */
export function parsePlan(input: SandboxPlanInput): SandboxPlan {
  const policies = input.policies ?? [];
  if (policies.length > MAX_POLICIES) throw invalidRequest(`policies lists ${policies.length} tools; at most ${MAX_POLICIES}`, { limit: MAX_POLICIES });
  const effects = new Map<string, SandboxEffect>();
  policies.forEach((p, i) => {
    if (typeof p.tool_name !== 'string' || p.tool_name.trim() === '') throw invalidRequest(`policies[${i}].tool_name must name a tool`);
    if (p.tool_name.length > MAX_TOOL_NAME) throw invalidRequest(`policies[${i}].tool_name is at most ${MAX_TOOL_NAME} characters`);
    const effect = effectOf(`policies[${i}].effect`, p.effect);
    if (effects.has(p.tool_name)) throw invalidRequest(`policies[${i}]: tool ${p.tool_name.slice(0, 64)} is declared twice; declare each tool once`, { tool_name: p.tool_name });
    effects.set(p.tool_name, effect);
  });
  const defaultEffect = input.default_effect === undefined ? DEFAULT_EFFECT : effectOf('default_effect', input.default_effect);
  return { effects, defaultEffect };
}

const isToolCall = (s: CaseStep) => s.canonical_operation === OP.executeTool;

/** The effect a tool call gets: its listed effect, else the default; an unnamed call is always EXTERNAL. */
export function effectFor(plan: SandboxPlan, toolName: string | null): SandboxEffect {
  if (toolName === null) return 'SANDBOX_EFFECT_EXTERNAL';
  return plan.effects.get(toolName) ?? plan.defaultEffect;
}

const hasAnswer = (content: readonly CaseContent[]) => content.some((c) => ANSWER.has(c.key.toLowerCase()));

function stubbed(step: CaseStep, effect: SandboxEffect): CaseStep {
  const kept = step.content.filter((c) => !ANSWER.has(c.key.toLowerCase()));
  const stub: CaseContent = {
    key: STUB_KEY,
    content_class: 'tool_arguments',
    value: { sandbox_stub: true, effect, tool_name: step.tool_name },
  };
  return { ...step, content: [...kept, stub].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)) };
}

/** Replays a case under a plan (see the file's comment). */
export function replayCase(c: DatasetCase, plan: SandboxPlan): Replay {
  const steps: ReplayStep[] = [];
  const out: CaseStep[] = [];
  const sandboxTools = new Set<string>();
  const effective = new Map<string, SandboxEffect>();
  const counts = { steps: c.steps.length, tool_calls: 0, replayed: 0, stubbed: 0, nothing_recorded: 0 };
  c.steps.forEach((s, index) => {
    const base = { index, step_id: s.step_id, canonical_operation: s.canonical_operation, tool_name: s.tool_name };
    if (!isToolCall(s)) {
      steps.push({ ...base, disposition: 'carried' });
      out.push(s);
      return;
    }
    counts.tool_calls++;
    const effect = effectFor(plan, s.tool_name);
    if (s.tool_name !== null) effective.set(s.tool_name, effect);
    if (effect === 'SANDBOX_EFFECT_NONE') {
      const recorded = hasAnswer(s.content);
      if (recorded) counts.replayed++;
      else counts.nothing_recorded++;
      steps.push({ ...base, effect, disposition: recorded ? 'recorded' : 'unrecorded' });
      out.push(s);
      return;
    }
    counts.stubbed++;
    if (s.tool_name !== null) sandboxTools.add(s.tool_name);
    steps.push({ ...base, effect, disposition: 'stubbed' });
    out.push(stubbed(s, effect));
  });
  const normalized = { tools: Object.fromEntries([...effective].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
  return {
    replayed_run: { ...c, steps: out },
    plan_digest: sha256(canonicalJson(normalized)).toString('hex'),
    counts,
    sandbox_tools: [...sandboxTools].sort(),
    steps,
  };
}
