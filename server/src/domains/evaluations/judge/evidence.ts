/**
 * The evidence a judge is shown, by selector (model.ts EVIDENCE_SELECTORS), in the selectors' fixed order:
 *
 * - `run_summary`: the run's status, step counts and duration (from the run's facts; no recorded content).
 * - `step_sequence`: the run's steps oldest first, each its canonical operation, outcome and tool name.
 * - `model_transcript`: the recorded prompt and response bodies: every attribute of the run's steps whose
 *   key the content-key table classes `model_transcript`.
 * - `tool_calls`: the recorded tool call arguments and results (class `tool_arguments`).
 *
 * A selector whose section is empty carries nothing (a run without recorded tool arguments has no
 * `tool_calls` evidence, and nothing about that class is asked). Content the store kept only as a size
 * marker (`allow_metadata` at the store boundary) is present, marked as such: its class is still put to the
 * transfer policy, and the model is shown the marker, never bytes that were not recorded.
 *
 * The evidence is bounded to `max_evidence_chars` (Unicode code points) deterministically: when the
 * sections together are longer, the budget is shared out so that a section shorter than an equal share
 * keeps everything and the rest split what remains equally (earlier sections get the odd characters);
 * each longer section is cut at its share and says so.
 */
import { contentClassOf, type ContentClass } from '../../content/content-keys.js';
import { isMetadataMarker } from '../../content-policy/model.js';
import type { StepRow } from '../../agent-runs/store.js';
import { EVIDENCE_CLASS, EVIDENCE_SELECTORS, type EvidenceSelector, type RunFacts } from '../model.js';

export interface EvidenceSection {
  selector: EvidenceSelector;
  /** The content class the section carries (null: no recorded content). */
  contentClass: ContentClass | null;
  /** The section's items in order; empty: the run carries none of this evidence. */
  items: string[];
  /** Items that are only the store's size marker (the bytes were never recorded). */
  markers: number;
}

export interface BoundedSection {
  selector: EvidenceSelector;
  text: string;
  /** Code points before the cut. */
  fullChars: number;
  cut: boolean;
}

const valueText = (v: unknown) => (typeof v === 'string' ? v : (JSON.stringify(v) ?? ''));

function runSummary(run: RunFacts): string[] {
  return [
    [
      `status: ${run.status ?? 'not reported'}`,
      `steps: ${run.stepCount} (error steps ${run.errorSteps}, tool calls ${run.toolCalls}, model calls ${run.modelCalls})`,
      `duration_ms: ${run.durationMs ?? 'not reported'}`,
    ].join('\n'),
  ];
}

function stepSequence(run: RunFacts): string[] {
  return run.steps.map(
    (s, i) => `${i + 1}. ${s.canonicalOperation} outcome=${s.outcome ?? 'not reported'}${s.toolName !== null ? ` tool=${s.toolName}` : ''}`,
  );
}

/** The recorded content of one class in the run's steps (by step order, then key order as stored). */
function recorded(steps: readonly StepRow[], cls: ContentClass): { items: string[]; markers: number } {
  const items: string[] = [];
  let markers = 0;
  for (const s of steps) {
    let attrs: unknown;
    try {
      attrs = JSON.parse(s.attributes);
    } catch {
      continue;
    }
    if (typeof attrs !== 'object' || attrs === null) continue;
    for (const [key, v] of Object.entries(attrs as Record<string, unknown>)) {
      if (contentClassOf(key) !== cls || v === null || v === undefined) continue;
      const text = valueText(v);
      if (text.trim() === '') continue;
      if (isMetadataMarker(v)) markers++;
      // Recorded text cannot close the section it is shown in (prompt.ts fences each section).
      items.push(`[${s.name} · ${key}]\n${text.replaceAll('</evidence', '<\\/evidence')}`);
    }
  }
  return { items, markers };
}

/** The sections of the selected evidence, in the fixed selector order (each selector once). */
export function collectEvidence(run: RunFacts, steps: readonly StepRow[], selectors: readonly EvidenceSelector[]): EvidenceSection[] {
  const wanted = EVIDENCE_SELECTORS.filter((s) => selectors.includes(s));
  return wanted.map((selector) => {
    const contentClass = EVIDENCE_CLASS[selector];
    if (contentClass !== null) return { selector, contentClass, ...recorded(steps, contentClass) };
    return { selector, contentClass, items: selector === 'run_summary' ? runSummary(run) : stepSequence(run), markers: 0 };
  });
}

/** Each section's share of `max` code points (water-filling; see the file's comment). */
export function shares(lengths: readonly number[], max: number): number[] {
  const out = lengths.map(() => 0);
  const order = lengths.map((len, i) => ({ len, i })).sort((a, b) => a.len - b.len || a.i - b.i);
  let left = max;
  let k = 0;
  for (; k < order.length; k++) {
    const even = Math.floor(left / (order.length - k));
    if (order[k]!.len > even) break;
    out[order[k]!.i] = order[k]!.len;
    left -= order[k]!.len;
  }
  const rest = order.slice(k).map((o) => o.i).sort((a, b) => a - b);
  rest.forEach((i, j) => {
    out[i] = Math.floor(left / rest.length) + (j < left % rest.length ? 1 : 0);
  });
  return out;
}

/** Code points of a string (a surrogate pair is one). */
export function codePoints(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

/** The first `n` code points of a string (never half a surrogate pair). */
export function firstCodePoints(s: string, n: number): string {
  let i = 0;
  for (let k = 0; k < n && i < s.length; k++) {
    const c = s.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && s.charCodeAt(i + 1) >= 0xdc00 && s.charCodeAt(i + 1) <= 0xdfff ? 2 : 1;
  }
  return s.slice(0, i);
}

/** The sections' texts within `max` code points in all. */
export function boundEvidence(sections: readonly EvidenceSection[], max: number): { sections: BoundedSection[]; truncated: boolean } {
  const texts = sections.map((s) => s.items.join('\n\n'));
  const lengths = texts.map(codePoints);
  const total = lengths.reduce((a, b) => a + b, 0);
  const allowed = total <= max ? lengths : shares(lengths, max);
  const out = sections.map((s, i) => ({
    selector: s.selector,
    text: allowed[i]! < lengths[i]! ? firstCodePoints(texts[i]!, allowed[i]!) : texts[i]!,
    fullChars: lengths[i]!,
    cut: allowed[i]! < lengths[i]!,
  }));
  return { sections: out, truncated: out.some((s) => s.cut) };
}
