/**
 * Evaluators and their versions (docs/evaluations.md "Evaluators").
 *
 * - An evaluator is a caller-chosen id in a project, a kind it keeps for life, and versions 1, 2, ...
 *   Each version is immutable (display name, metric name, configuration exactly as sent); changing the
 *   rule appends a version. There is no update, patch or delete, and no "latest" alias: every reference
 *   names an exact version.
 * - Appending is serialized per evaluator, so concurrent appends take distinct consecutive numbers. An
 *   append identical to the latest version (same display name, metric name and configuration text)
 *   creates nothing and answers that version (`created: false`): a retried append is safe.
 * - Who created a version comes from the credential.
 */
import { conflict, invalidRequest, notFound } from '../../../http/errors.js';
import type { Principal } from '../../../http/principal.js';
import type { Clock } from '../../../lib/clock.js';
import type { ControlStore } from '../../../storage/control/stores.js';
import { isUniqueViolation } from '../../../storage/control/unique.js';
import { principalRef } from '../../assets/signals.js';
import type { ProjectRecord } from '../../projects/store.js';
import { LEGACY_VERSION, isLegacyEvaluatorId, type EvaluatorConfig, type EvaluatorKind, type EvaluatorRef, type EvaluatorVersionRecord } from '../model.js';
import type { EvaluatorVersions } from '../ports.js';
import { parseEvaluatorConfig, writableKind } from './config.js';
import type { EvaluatorHead, EvaluatorListFilter } from './store.js';

/** A caller-chosen slug; `/` is outside it, so no id can take the reserved `legacy/` form. */
export const EVALUATOR_ID_PATTERN = '^[a-z0-9][a-z0-9._-]{0,127}$';
/** Metric names are lower-case slugs too (human judgments lower-case theirs). */
export const METRIC_NAME_PATTERN = '^[a-z0-9][a-z0-9._-]{0,127}$';
export const MAX_DISPLAY_NAME = 200;
/** Versions one evaluator may hold; past it, create a new evaluator. */
export const MAX_VERSIONS = 1000;
export const EVALUATOR_PAGE = { default: 50, max: 200 };
/** The largest version number a path or body may name (a 32-bit signed integer). */
export const MAX_VERSION_NUMBER = 2_147_483_647;

export interface CreateInput {
  evaluator_id: string;
  display_name: string;
  metric_name: string;
  kind: string;
  config_json: unknown;
}

export interface AppendInput {
  display_name?: string;
  metric_name?: string;
  kind: string;
  config_json: unknown;
}

/** An evaluator as it is read: the evaluator and its latest version. */
export interface EvaluatorWithLatest {
  head: EvaluatorHead;
  latest: EvaluatorVersionRecord;
}

export function checkEvaluatorId(id: string, field = 'evaluator_id'): string {
  if (isLegacyEvaluatorId(id))
    throw invalidRequest(`${field} "${id.slice(0, 140)}" is a legacy id: legacy ids are reserved for results recorded before evaluators existed, and have no versions`);
  if (!new RegExp(EVALUATOR_ID_PATTERN).test(id)) throw invalidRequest(`${field} must match ${EVALUATOR_ID_PATTERN} (lower-case letters, digits, '.', '_', '-'; at most 128)`);
  return id;
}

function checkDisplayName(v: string): string {
  if (v.trim() === '') throw invalidRequest('display_name must not be blank');
  if (v.length > MAX_DISPLAY_NAME) throw invalidRequest(`display_name is at most ${MAX_DISPLAY_NAME} characters`);
  if (v.includes('\u0000')) throw invalidRequest('display_name must not contain the NUL character');
  return v;
}

function checkMetricName(v: string): string {
  if (!new RegExp(METRIC_NAME_PATTERN).test(v)) throw invalidRequest(`metric_name must match ${METRIC_NAME_PATTERN} (lower-case letters, digits, '.', '_', '-'; at most 128)`);
  return v;
}

/** A version named in a path: an exact integer of at least 1. There is no alias; 0 belongs to legacy results. */
export function parseVersionParam(raw: string): number {
  if (raw === 'latest') throw invalidRequest('there is no "latest" alias: name an exact version (the evaluator shows its latest_version)');
  if (raw === String(LEGACY_VERSION)) throw invalidRequest('version 0 is reserved for legacy results; evaluator versions start at 1');
  if (!/^[1-9][0-9]{0,9}$/.test(raw) || Number(raw) > MAX_VERSION_NUMBER) throw invalidRequest(`version must be an exact integer from 1 to ${MAX_VERSION_NUMBER}`);
  return Number(raw);
}

export class EvaluatorService implements EvaluatorVersions {
  constructor(
    private readonly control: ControlStore,
    private readonly clock: Clock,
  ) {}

  /** Creates the evaluator with version 1; 409 when the project already has the id. */
  async create(caller: Principal, project: ProjectRecord, input: CreateInput): Promise<EvaluatorWithLatest> {
    const evaluatorId = checkEvaluatorId(input.evaluator_id);
    const kind = writableKind(input.kind);
    const displayName = checkDisplayName(input.display_name);
    const metricName = checkMetricName(input.metric_name);
    parseEvaluatorConfig(kind, input.config_json);
    const at = this.clock.now().toISOString();
    const by = principalRef(caller);
    const head: EvaluatorHead = { orgId: project.orgId, projectId: project.id, evaluatorId, kind, latestVersion: 1, createdAt: at, createdBy: by };
    const latest: EvaluatorVersionRecord = {
      orgId: project.orgId,
      projectId: project.id,
      evaluatorId,
      version: 1,
      displayName,
      metricName,
      kind,
      configJson: input.config_json as string,
      createdAt: at,
      createdBy: by,
    };
    try {
      await this.control.transaction((tx) => tx.evaluators.create(head, latest));
    } catch (e) {
      if (isUniqueViolation(e)) throw conflict(`evaluator ${evaluatorId} already exists in this project: append a version to change it`);
      throw e;
    }
    return { head, latest };
  }

  /**
   * Appends version n+1 (display name and metric name default to the latest version's). The kind cannot
   * change (409). An append identical to the latest version answers it with `created: false`.
   */
  async appendVersion(caller: Principal, project: ProjectRecord, evaluatorIdRaw: string, input: AppendInput): Promise<{ record: EvaluatorVersionRecord; created: boolean }> {
    const evaluatorId = checkEvaluatorId(evaluatorIdRaw, 'evaluatorId');
    const kind = writableKind(input.kind);
    const displayName = input.display_name === undefined ? undefined : checkDisplayName(input.display_name);
    const metricName = input.metric_name === undefined ? undefined : checkMetricName(input.metric_name);
    parseEvaluatorConfig(kind, input.config_json);
    return this.control.transaction(async (tx) => {
      const head = await tx.evaluators.lock(project.id, evaluatorId);
      if (!head) throw notFound('evaluator');
      if (head.kind !== kind)
        throw conflict(`evaluator ${evaluatorId} is ${head.kind}; its kind is fixed for life (create another evaluator for ${kind})`);
      const latest = await tx.evaluators.version(project.id, evaluatorId, head.latestVersion);
      if (!latest) throw new Error(`evaluator ${evaluatorId} has no version ${head.latestVersion}`);
      const next = {
        displayName: displayName ?? latest.displayName,
        metricName: metricName ?? latest.metricName,
        configJson: input.config_json as string,
      };
      if (next.displayName === latest.displayName && next.metricName === latest.metricName && next.configJson === latest.configJson) return { record: latest, created: false };
      if (head.latestVersion >= MAX_VERSIONS) throw conflict(`evaluator ${evaluatorId} holds ${MAX_VERSIONS} versions, the most one evaluator may hold: create a new evaluator`);
      const record: EvaluatorVersionRecord = {
        orgId: head.orgId,
        projectId: project.id,
        evaluatorId,
        version: head.latestVersion + 1,
        kind,
        ...next,
        createdAt: this.clock.now().toISOString(),
        createdBy: principalRef(caller),
      };
      await tx.evaluators.append(record);
      return { record, created: true };
    });
  }

  /** The evaluator and its latest version; 404 when the project has no such evaluator. */
  async get(projectId: string, evaluatorIdRaw: string): Promise<EvaluatorWithLatest> {
    const evaluatorId = checkEvaluatorId(evaluatorIdRaw, 'evaluatorId');
    const head = await this.control.evaluators.head(projectId, evaluatorId);
    if (!head) throw notFound('evaluator');
    const latest = await this.control.evaluators.version(projectId, evaluatorId, head.latestVersion);
    if (!latest) throw new Error(`evaluator ${evaluatorId} has no version ${head.latestVersion}`);
    return { head, latest };
  }

  /** One exact version; 404 (`evaluator version`) when missing. */
  async getVersion(projectId: string, evaluatorIdRaw: string, version: number): Promise<EvaluatorVersionRecord> {
    const evaluatorId = checkEvaluatorId(evaluatorIdRaw, 'evaluatorId');
    const r = await this.control.evaluators.version(projectId, evaluatorId, version);
    if (!r) throw notFound('evaluator version');
    return r;
  }

  list(filter: EvaluatorListFilter, opts: { after?: string; limit: number }) {
    return this.control.evaluators.list(filter, opts);
  }

  /** The port: an exact version and its parsed configuration. Legacy ids and version 0 match nothing (404). */
  async version(projectId: string, ref: EvaluatorRef): Promise<{ record: EvaluatorVersionRecord; parsed: EvaluatorConfig }> {
    if (isLegacyEvaluatorId(ref.evaluator_id) || !Number.isSafeInteger(ref.version) || ref.version < 1) throw notFound('evaluator version');
    const record = await this.control.evaluators.version(projectId, ref.evaluator_id, ref.version);
    if (!record) throw notFound('evaluator version');
    return { record, parsed: parseEvaluatorConfig(record.kind as EvaluatorKind, record.configJson) };
  }
}
