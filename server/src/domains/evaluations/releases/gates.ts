/**
 * Release gates (docs/evaluations-gates.md "Release gates").
 *
 * - A gate is caller-owned (`gate_id`), bound to one exact evaluator version (checked when written: a
 *   missing version is 404, version 0 belongs to legacy results and is refused), and decides on one
 *   candidate `release`, optionally against a `baseline_release` (default: the release just before it in
 *   the version's release series). A gate never changes: creating the same id with an identical
 *   definition answers the stored gate (200), a different one is 409.
 * - Evaluating appends a decision with a fresh evidence snapshot. The same idempotency key answers the
 *   original decision (also for concurrent requests: the key is unique per gate); no key is the stable
 *   default intent, key `default`, so an empty body always answers the gate's first default decision.
 * - Only admissible results of the exact version are evidence (see EVIDENCE_CLASSES); results of other
 *   versions are not this gate's evidence (`NO_EVIDENCE` when nothing else is there), and unusable
 *   matching results (legacy, execution-less, FAILED, CANCELLED, ...) read `INADMISSIBLE`. Both hold
 *   the release: a gate fails closed. Human judgments live elsewhere and are never read.
 */
import { conflict, invalidRequest, notFound } from '../../../http/errors.js';
import type { Principal } from '../../../http/principal.js';
import type { Clock } from '../../../lib/clock.js';
import { principalRef } from '../../assets/signals.js';
import type { ProjectRecord } from '../../projects/store.js';
import { checkEvaluatorId } from '../evaluators/service.js';
import { LEGACY_VERSION } from '../model.js';
import type { EvaluatorVersions } from '../ports.js';
import type { ReleaseSeriesService } from './series.js';
import type { DecisionRecord, ExcludedCounts, GateRecord, ReleaseAggregate, ReleaseGateStore } from './store.js';

export const GATE_ID_PATTERN = '^[a-z0-9][a-z0-9._-]{0,127}$';
export const IDEMPOTENCY_KEY_PATTERN = '^[A-Za-z0-9._:-]{1,128}$';
/** The idempotency key of an evaluation that names none: the stable default intent. */
export const DEFAULT_INTENT_KEY = 'default';
export const MAX_RELEASE_LENGTH = 200;
export const MAX_DISPLAY_NAME = 200;
export const MAX_MIN_SAMPLES = 1_000_000;
export const GATE_PAGE = { default: 50, max: 200 };
/** Decisions shown with a gate, newest first; older ones are counted (`decision_count`) and flagged (`decisions_truncated`). */
export const DECISION_HISTORY = 100;
/** Mean comparisons tolerate floating-point noise of this size. */
const EPSILON = 1e-9;

export const GATE_READINGS = ['EVIDENCE', 'NO_EVIDENCE', 'INADMISSIBLE'] as const;
export type GateReading = (typeof GATE_READINGS)[number];
export const GATE_OUTCOMES = ['ADMIT', 'HOLD'] as const;
export const BASELINE_SOURCES = ['DECLARED', 'PREVIOUS_IN_SERIES', 'NONE'] as const;
export const REASON_CODES = [
  'no_evidence',
  'inadmissible_evidence',
  'insufficient_samples',
  'below_min_mean',
  'above_max_mean',
  'no_baseline',
  'baseline_no_evidence',
  'baseline_insufficient_samples',
  'mean_dropped',
  'mean_rose',
] as const;
type ReasonCode = (typeof REASON_CODES)[number];

export interface CreateGateInput {
  gate_id: string;
  display_name?: string;
  evaluator: { evaluator_id: string; version: number };
  release: string;
  baseline_release?: string;
  min_samples: number;
  min_mean?: number;
  max_mean?: number;
  max_mean_drop?: number;
  max_mean_rise?: number;
}

export interface GateWithHistory {
  gate: GateRecord;
  decisions: DecisionRecord[];
  decisionCount: number;
}

/** One release's side of a decision's evidence. */
export interface EvidenceSide {
  release: string;
  sample_count: number;
  mean: number | null;
  first_observed_at: string | null;
  last_observed_at: string | null;
  excluded_counts: ExcludedCounts;
}

export interface Evidence {
  evaluator: { evaluator_id: string; version: number };
  metric_name: string;
  candidate: EvidenceSide;
  baseline: EvidenceSide | null;
  baseline_source: (typeof BASELINE_SOURCES)[number];
  /** The series ordering that picked a default baseline; null when the baseline was declared. */
  ordering_strategy: string | null;
  /** Candidate mean minus baseline mean; null unless both have evidence. */
  delta_mean: number | null;
  thresholds: { min_samples: number; min_mean: number | null; max_mean: number | null; max_mean_drop: number | null; max_mean_rise: number | null };
}

function checkRelease(field: string, v: string): string {
  if (v === '' || v.length > MAX_RELEASE_LENGTH) throw invalidRequest(`${field} must be 1 to ${MAX_RELEASE_LENGTH} characters`);
  if (v !== v.trim()) throw invalidRequest(`${field} must not begin or end with white space (release names are compared exactly)`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f]/.test(v)) throw invalidRequest(`${field} must not contain control characters`);
  return v;
}

function checkNumber(field: string, v: number | undefined, min?: number): number | null {
  if (v === undefined) return null;
  if (!Number.isFinite(v)) throw invalidRequest(`${field} must be a finite number`);
  if (min !== undefined && v < min) throw invalidRequest(`${field} must be at least ${min}`);
  return v;
}

const side = (release: string, a: ReleaseAggregate | undefined, excluded: ExcludedCounts): EvidenceSide => ({
  release,
  sample_count: a?.sampleCount ?? 0,
  mean: a ? a.mean : null,
  first_observed_at: a?.firstObservedAt ?? null,
  last_observed_at: a?.lastObservedAt ?? null,
  excluded_counts: excluded,
});

/** True when results that match but cannot be used exist (other versions of the evaluator do not count: they are simply not this gate's). */
const hasUnusable = (x: ExcludedCounts) => Object.entries(x).some(([k, n]) => k !== 'other_evaluator_version' && (n ?? 0) > 0);

const fmt = (n: number) => (Number.isInteger(n) ? String(n) : n.toPrecision(6).replace(/\.?0+$/, ''));

export class ReleaseGateService {
  constructor(
    private readonly store: ReleaseGateStore,
    private readonly versions: EvaluatorVersions,
    private readonly series: ReleaseSeriesService,
    private readonly clock: Clock,
    private readonly ids: { uuid(): string },
  ) {}

  /** Creates the gate (`created: true`), or answers the stored one when its definition is identical; 409 when it differs. */
  async create(caller: Principal, project: ProjectRecord, input: CreateGateInput): Promise<{ gate: GateRecord; created: boolean }> {
    if (!new RegExp(GATE_ID_PATTERN).test(input.gate_id)) throw invalidRequest(`gate_id must match ${GATE_ID_PATTERN} (lower-case letters, digits, '.', '_', '-'; at most 128)`);
    const displayName = input.display_name ?? input.gate_id;
    if (displayName.trim() === '' || displayName.length > MAX_DISPLAY_NAME || displayName.includes('\u0000'))
      throw invalidRequest(`display_name must be 1 to ${MAX_DISPLAY_NAME} characters, not blank, without the NUL character`);
    checkEvaluatorId(input.evaluator.evaluator_id, 'evaluator.evaluator_id');
    if (input.evaluator.version === LEGACY_VERSION)
      throw invalidRequest('evaluator.version 0 marks legacy results, which are never evidence for a gate: bind an exact evaluator version from 1');
    if (!Number.isSafeInteger(input.evaluator.version) || input.evaluator.version < 1) throw invalidRequest('evaluator.version must be an exact integer version from 1');
    const release = checkRelease('release', input.release);
    const baseline = input.baseline_release === undefined ? null : checkRelease('baseline_release', input.baseline_release);
    if (baseline === release) throw invalidRequest('baseline_release must differ from release: a release is not compared with itself');
    if (!Number.isSafeInteger(input.min_samples) || input.min_samples < 1 || input.min_samples > MAX_MIN_SAMPLES)
      throw invalidRequest(`min_samples must be an integer from 1 to ${MAX_MIN_SAMPLES}`);
    const minMean = checkNumber('min_mean', input.min_mean);
    const maxMean = checkNumber('max_mean', input.max_mean);
    if (minMean !== null && maxMean !== null && minMean > maxMean) throw invalidRequest('min_mean must not be above max_mean');
    const maxMeanDrop = checkNumber('max_mean_drop', input.max_mean_drop, 0);
    const maxMeanRise = checkNumber('max_mean_rise', input.max_mean_rise, 0);
    // The exact version must exist: 404 otherwise (checked when written, never when evaluated).
    const { record } = await this.versions.version(project.id, input.evaluator);
    const gate: GateRecord = {
      orgId: project.orgId,
      projectId: project.id,
      gateId: input.gate_id,
      displayName,
      evaluatorId: input.evaluator.evaluator_id,
      evaluatorVersion: input.evaluator.version,
      metricName: record.metricName,
      release,
      baselineRelease: baseline,
      minSamples: input.min_samples,
      minMean,
      maxMean,
      maxMeanDrop,
      maxMeanRise,
      createdAt: this.clock.now().toISOString(),
      createdBy: principalRef(caller),
    };
    if (await this.store.createGate(gate)) return { gate, created: true };
    const stored = await this.store.getGate(project.id, gate.gateId);
    if (!stored) throw new Error(`gate ${gate.gateId} was neither created nor found`);
    const differs = (
      [
        ['display_name', stored.displayName, gate.displayName],
        ['evaluator.evaluator_id', stored.evaluatorId, gate.evaluatorId],
        ['evaluator.version', stored.evaluatorVersion, gate.evaluatorVersion],
        ['release', stored.release, gate.release],
        ['baseline_release', stored.baselineRelease, gate.baselineRelease],
        ['min_samples', stored.minSamples, gate.minSamples],
        ['min_mean', stored.minMean, gate.minMean],
        ['max_mean', stored.maxMean, gate.maxMean],
        ['max_mean_drop', stored.maxMeanDrop, gate.maxMeanDrop],
        ['max_mean_rise', stored.maxMeanRise, gate.maxMeanRise],
      ] as const
    )
      .filter(([, a, b]) => a !== b)
      .map(([f]) => f);
    if (differs.length > 0) throw conflict(`gate ${gate.gateId} exists with another definition (${differs.join(', ')} differ); a gate never changes: create one under a new gate_id`);
    return { gate: stored, created: false };
  }

  async get(projectId: string, gateId: string): Promise<GateWithHistory> {
    const gate = await this.gate(projectId, gateId);
    const [decisions, decisionCount] = await Promise.all([this.store.decisions(projectId, gateId, DECISION_HISTORY), this.store.countDecisions(projectId, gateId)]);
    return { gate, decisions, decisionCount };
  }

  list(filter: { projectId: string; release?: string; evaluatorId?: string }, o: { after?: string; limit: number }) {
    if (filter.release !== undefined) checkRelease('release', filter.release);
    if (filter.evaluatorId !== undefined) checkEvaluatorId(filter.evaluatorId);
    return this.store.listGates(filter, o);
  }

  /** Appends a decision (`created: true`), or answers the decision already recorded under the idempotency key. */
  async evaluate(caller: Principal, projectId: string, gateId: string, idempotencyKey: string | undefined): Promise<{ decision: DecisionRecord; created: boolean }> {
    const key = idempotencyKey ?? DEFAULT_INTENT_KEY;
    if (!new RegExp(IDEMPOTENCY_KEY_PATTERN).test(key)) throw invalidRequest(`idempotency_key must match ${IDEMPOTENCY_KEY_PATTERN}`);
    const gate = await this.gate(projectId, gateId);
    const existing = await this.store.findDecision(projectId, gateId, key);
    if (existing) return { decision: existing, created: false };
    const { outcome, reading, reasons, evidence } = await this.decide(gate);
    return this.store.appendDecision({
      decisionId: this.ids.uuid(),
      projectId,
      gateId,
      idempotencyKey: key,
      decidedAt: this.clock.now().toISOString(),
      decidedBy: principalRef(caller),
      outcome,
      reading,
      reasons,
      evidence: evidence as unknown as Record<string, unknown>,
    });
  }

  private async gate(projectId: string, gateId: string): Promise<GateRecord> {
    if (!new RegExp(GATE_ID_PATTERN).test(gateId)) throw invalidRequest(`gateId must match ${GATE_ID_PATTERN}`);
    const gate = await this.store.getGate(projectId, gateId);
    if (!gate) throw notFound('gate');
    return gate;
  }

  /** Reads the evidence now and decides: ADMIT only when every check passes; anything unknown holds. */
  async decide(g: GateRecord): Promise<{ outcome: 'ADMIT' | 'HOLD'; reading: GateReading; reasons: { code: ReasonCode; message: string }[]; evidence: Evidence }> {
    const scope = { projectId: g.projectId, evaluatorId: g.evaluatorId, evaluatorVersion: g.evaluatorVersion, metricName: g.metricName };
    const cand = await this.store.releaseEvidence(scope, g.release);
    let baselineRelease = g.baselineRelease;
    let source: Evidence['baseline_source'] = baselineRelease === null ? 'NONE' : 'DECLARED';
    let strategy: string | null = null;
    if (baselineRelease === null) {
      const s = await this.series.compute({ projectId: g.projectId, evaluatorId: g.evaluatorId, evaluatorVersion: g.evaluatorVersion }, g.metricName);
      strategy = s.strategy;
      const at = s.points.findIndex((p) => p.release === g.release);
      if (at > 0) {
        baselineRelease = s.points[at - 1].release;
        source = 'PREVIOUS_IN_SERIES';
      }
    }
    const base = baselineRelease === null ? undefined : await this.store.releaseEvidence(scope, baselineRelease);
    const delta = cand.admissible && base?.admissible ? cand.admissible.mean - base.admissible.mean : null;
    const reading: GateReading = cand.admissible ? 'EVIDENCE' : hasUnusable(cand.excluded) ? 'INADMISSIBLE' : 'NO_EVIDENCE';
    const reasons: { code: ReasonCode; message: string }[] = [];
    const ver = `${g.evaluatorId} version ${g.evaluatorVersion}`;
    if (reading === 'NO_EVIDENCE') {
      const others = cand.excluded.other_evaluator_version ?? 0;
      reasons.push({
        code: 'no_evidence',
        message: `no results of ${ver} for release ${g.release}` + (others > 0 ? ` (${others} results of other versions of ${g.evaluatorId} are not this gate's evidence)` : ''),
      });
    } else if (reading === 'INADMISSIBLE') {
      const what = Object.entries(cand.excluded)
        .filter(([k, n]) => k !== 'other_evaluator_version' && (n ?? 0) > 0)
        .map(([k, n]) => `${n} ${k}`)
        .join(', ');
      reasons.push({ code: 'inadmissible_evidence', message: `results for release ${g.release} exist but none is usable evidence of ${ver} (${what})` });
    } else {
      const c = cand.admissible!;
      if (c.sampleCount < g.minSamples) reasons.push({ code: 'insufficient_samples', message: `release ${g.release} has ${c.sampleCount} admissible results; the gate needs ${g.minSamples}` });
      if (g.minMean !== null && c.mean < g.minMean - EPSILON) reasons.push({ code: 'below_min_mean', message: `mean ${fmt(c.mean)} is below min_mean ${fmt(g.minMean)}` });
      if (g.maxMean !== null && c.mean > g.maxMean + EPSILON) reasons.push({ code: 'above_max_mean', message: `mean ${fmt(c.mean)} is above max_mean ${fmt(g.maxMean)}` });
      if (g.maxMeanDrop !== null || g.maxMeanRise !== null) {
        if (baselineRelease === null)
          reasons.push({ code: 'no_baseline', message: `no baseline to compare with: none was declared and release ${g.release} has no earlier release in the series of ${ver}` });
        else if (!base?.admissible) reasons.push({ code: 'baseline_no_evidence', message: `baseline release ${baselineRelease} has no admissible results of ${ver}` });
        else if (base.admissible.sampleCount < g.minSamples)
          reasons.push({ code: 'baseline_insufficient_samples', message: `baseline release ${baselineRelease} has ${base.admissible.sampleCount} admissible results; the gate needs ${g.minSamples}` });
        else {
          const d = delta!;
          if (g.maxMeanDrop !== null && -d > g.maxMeanDrop + EPSILON)
            reasons.push({ code: 'mean_dropped', message: `mean fell ${fmt(-d)} from ${fmt(base.admissible.mean)} (${baselineRelease}) to ${fmt(c.mean)}; max_mean_drop is ${fmt(g.maxMeanDrop)}` });
          if (g.maxMeanRise !== null && d > g.maxMeanRise + EPSILON)
            reasons.push({ code: 'mean_rose', message: `mean rose ${fmt(d)} from ${fmt(base.admissible.mean)} (${baselineRelease}) to ${fmt(c.mean)}; max_mean_rise is ${fmt(g.maxMeanRise)}` });
        }
      }
    }
    const evidence: Evidence = {
      evaluator: { evaluator_id: g.evaluatorId, version: g.evaluatorVersion },
      metric_name: g.metricName,
      candidate: side(g.release, cand.admissible, cand.excluded),
      baseline: baselineRelease === null ? null : side(baselineRelease, base?.admissible, base?.excluded ?? {}),
      baseline_source: source,
      ordering_strategy: strategy,
      delta_mean: delta,
      thresholds: { min_samples: g.minSamples, min_mean: g.minMean, max_mean: g.maxMean, max_mean_drop: g.maxMeanDrop, max_mean_rise: g.maxMeanRise },
    };
    return { outcome: reasons.length === 0 ? 'ADMIT' : 'HOLD', reading, reasons, evidence };
  }
}
