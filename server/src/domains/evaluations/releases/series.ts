/**
 * The release series (docs/evaluations-gates.md "Release series"): one exact evaluator version's
 * admissible results, one point per release, oldest release first.
 *
 * - Ordering: semantic-version precedence when every release name of the series is a semantic version
 *   (a leading `v` is accepted, `v1.2.0` and `1.2.0` having the same precedence; equal precedence, such as
 *   two builds `1.0.0+a` and `1.0.0+b`, falls back to the label). Otherwise the whole series is ordered by
 *   first-observed run time, the label breaking ties.
 * - After the first point, `delta_mean` is the arithmetic change of the mean from the previous point: a
 *   neutral number, not a verdict.
 * - Runs that declared no release are one separate aggregate, never a point.
 * - At most MAX_POINTS releases: past it the most recently first-observed are kept and `truncated` says so.
 */
import semver from 'semver';
import { invalidRequest } from '../../../http/errors.js';
import { checkOrder, parseTimeUs } from '../../../http/time.js';
import { isoMicros } from '../../traces/query-rules.js';
import type { EvaluatorVersions } from '../ports.js';
import { MAX_FILTER_LENGTH } from '../results/service.js';
import { checkEvaluatorId } from '../evaluators/service.js';
import type { ExcludedCounts, ReleaseAggregate, ReleaseGateStore } from './store.js';

export const MAX_POINTS = 1000;
export const ORDERING_STRATEGIES = ['SEMANTIC_VERSION', 'FIRST_OBSERVED'] as const;
export type OrderingStrategy = (typeof ORDERING_STRATEGIES)[number];

/** A release name read as a semantic version (a leading `v` accepted); null when it is not one. */
export function semanticVersion(name: string): string | null {
  return name === name.trim() ? semver.valid(name) : null;
}

/** Orders releases oldest first by the series rule, and names the rule used. */
export function orderReleases<T extends { release: string | null; firstObservedAt: string }>(points: T[]): { strategy: OrderingStrategy; ordered: T[] } {
  const byLabel = (a: T, b: T) => ((a.release ?? '') < (b.release ?? '') ? -1 : (a.release ?? '') > (b.release ?? '') ? 1 : 0);
  if (points.every((p) => p.release !== null && semanticVersion(p.release) !== null)) {
    const ordered = [...points].sort((a, b) => semver.compare(semanticVersion(a.release!)!, semanticVersion(b.release!)!) || byLabel(a, b));
    return { strategy: 'SEMANTIC_VERSION', ordered };
  }
  const ordered = [...points].sort((a, b) => (a.firstObservedAt < b.firstObservedAt ? -1 : a.firstObservedAt > b.firstObservedAt ? 1 : byLabel(a, b)));
  return { strategy: 'FIRST_OBSERVED', ordered };
}

export interface SeriesQuery {
  evaluator_id: string;
  evaluator_version: number;
  metric_name?: string;
  start?: string;
  end?: string;
}

export interface SeriesPoint extends ReleaseAggregate {
  release: string;
  /** Null for the first point. */
  deltaMean: number | null;
}

export interface Series {
  evaluatorId: string;
  evaluatorVersion: number;
  metricName: string;
  strategy: OrderingStrategy;
  points: SeriesPoint[];
  unreleased: ReleaseAggregate | null;
  excluded: ExcludedCounts;
  truncated: boolean;
}

/** Points oldest first with their change from the previous one. */
export function withDeltas(ordered: ReleaseAggregate[]): SeriesPoint[] {
  return ordered.map((p, i) => ({ ...p, release: p.release!, deltaMean: i === 0 ? null : p.mean - ordered[i - 1].mean }));
}

export class ReleaseSeriesService {
  constructor(
    private readonly store: ReleaseGateStore,
    private readonly versions: EvaluatorVersions,
  ) {}

  async read(projectId: string, q: SeriesQuery, nowMs: number): Promise<Series> {
    checkEvaluatorId(q.evaluator_id);
    if (q.evaluator_version === 0) throw invalidRequest('evaluator_version 0 belongs to legacy results, which are never a release series: name a version from 1');
    if (q.metric_name !== undefined && (q.metric_name === '' || q.metric_name.length > MAX_FILTER_LENGTH))
      throw invalidRequest(`metric_name must be 1 to ${MAX_FILTER_LENGTH} characters`);
    const startUs = q.start === undefined ? undefined : parseTimeUs('start', q.start, nowMs);
    const endUs = q.end === undefined ? undefined : parseTimeUs('end', q.end, nowMs);
    checkOrder('start', 'end', startUs, endUs);
    // The exact version must exist (404 otherwise): there is no latest alias.
    const { record } = await this.versions.version(projectId, { evaluator_id: q.evaluator_id, version: q.evaluator_version });
    const scope = {
      projectId,
      evaluatorId: q.evaluator_id,
      evaluatorVersion: q.evaluator_version,
      metricName: q.metric_name,
      start: startUs === undefined ? undefined : isoMicros(startUs),
      end: endUs === undefined ? undefined : isoMicros(endUs),
    };
    return this.compute(scope, record.metricName);
  }

  /** The whole series of a version (no window), as a gate reads it to find a default baseline. */
  async compute(scope: Parameters<ReleaseGateStore['releasePoints']>[0], metricName: string): Promise<Series> {
    const [rows, unreleased, excluded] = await Promise.all([this.store.releasePoints(scope, MAX_POINTS + 1), this.store.unreleased(scope), this.store.excluded(scope)]);
    const truncated = rows.length > MAX_POINTS;
    const { strategy, ordered } = orderReleases(rows.slice(0, MAX_POINTS));
    return {
      evaluatorId: scope.evaluatorId,
      evaluatorVersion: scope.evaluatorVersion,
      metricName,
      strategy,
      points: withDeltas(ordered),
      unreleased: unreleased ?? null,
      excluded,
      truncated,
    };
  }
}
