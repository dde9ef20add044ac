/**
 * Sampling rules (docs/evaluations.md "Sampling rules"): which new runs of a project an evaluator version
 * scores automatically. A rule is upserted by its caller-chosen `rule_id` (a retried PUT is safe: an
 * identical one changes nothing), cites an exact existing evaluator version (checked when written), and
 * selects runs only. A zero rate, `enabled: false` or a per-tick limit of 0 disables it.
 */
import { conflict, invalidRequest, notFound } from '../../../http/errors.js';
import type { Principal } from '../../../http/principal.js';
import type { Clock } from '../../../lib/clock.js';
import type { ControlStore } from '../../../storage/control/stores.js';
import { principalRef } from '../../assets/signals.js';
import type { ProjectRecord } from '../../projects/store.js';
import { SAMPLED_SUBJECT_KINDS, type SubjectKind } from '../model.js';
import type { EvaluatorVersions, SamplingRuleRecord, SamplingRules } from '../ports.js';
import { scoresOnlySessions } from './config.js';
import { EVALUATOR_ID_PATTERN, checkEvaluatorId } from './service.js';
import type { SamplingRuleFilter, SamplingRuleWrite, StoredSamplingRule } from './store.js';

export const RULE_ID_PATTERN = EVALUATOR_ID_PATTERN;
/** The most runs one rule may select in one sampling tick. */
export const MAX_PER_TICK_LIMIT = 1000;
/** Rules one project may hold. */
export const MAX_RULES_PER_PROJECT = 200;
export const RULE_PAGE = { default: 50, max: 200 };

export interface RuleInput {
  rule_id: string;
  evaluator: { evaluator_id: string; version: number };
  subject_kind: SubjectKind;
  sampling_rate: number;
  per_tick_limit: number;
  enabled: boolean;
}

/** Whether a rule can select anything. */
export const isActive = (r: Pick<SamplingRuleRecord, 'enabled' | 'samplingRate' | 'perTickLimit'>) => r.enabled && r.samplingRate > 0 && r.perTickLimit > 0;

export function checkRuleId(id: string, field = 'rule_id'): string {
  if (!new RegExp(RULE_ID_PATTERN).test(id)) throw invalidRequest(`${field} must match ${RULE_ID_PATTERN} (lower-case letters, digits, '.', '_', '-'; at most 128)`);
  return id;
}

const same = (r: StoredSamplingRule, w: SamplingRuleWrite) =>
  r.evaluator.evaluator_id === w.evaluator.evaluator_id &&
  r.evaluator.version === w.evaluator.version &&
  r.subjectKind === w.subjectKind &&
  r.samplingRate === w.samplingRate &&
  r.perTickLimit === w.perTickLimit &&
  r.enabled === w.enabled;

export class SamplingRuleService implements SamplingRules {
  constructor(
    private readonly control: ControlStore,
    private readonly evaluators: EvaluatorVersions,
    private readonly clock: Clock,
  ) {}

  /** Creates or replaces the rule; `created` says which. 404 when the cited evaluator version does not exist. */
  async put(caller: Principal, project: ProjectRecord, input: RuleInput): Promise<{ rule: StoredSamplingRule; created: boolean }> {
    const ruleId = checkRuleId(input.rule_id);
    checkEvaluatorId(input.evaluator.evaluator_id, 'evaluator.evaluator_id');
    if (!(SAMPLED_SUBJECT_KINDS as readonly string[]).includes(input.subject_kind))
      throw invalidRequest(
        `subject_kind ${input.subject_kind} cannot be sampled: a rule selects new runs (${SAMPLED_SUBJECT_KINDS.join(', ')}); evaluate steps and sessions on demand`,
      );
    if (!Number.isFinite(input.sampling_rate) || input.sampling_rate < 0 || input.sampling_rate > 1) throw invalidRequest('sampling_rate must be a number from 0 to 1');
    if (!Number.isSafeInteger(input.per_tick_limit) || input.per_tick_limit < 0 || input.per_tick_limit > MAX_PER_TICK_LIMIT)
      throw invalidRequest(`per_tick_limit must be an integer from 0 to ${MAX_PER_TICK_LIMIT}`);
    const { parsed } = await this.evaluators.version(project.id, input.evaluator);
    if (scoresOnlySessions(parsed))
      throw invalidRequest(
        `evaluator ${input.evaluator.evaluator_id} version ${input.evaluator.version} scores only sessions (session.* fields), and a sampling rule selects runs: evaluate sessions on demand`,
      );
    const w: SamplingRuleWrite = {
      evaluator: { evaluator_id: input.evaluator.evaluator_id, version: input.evaluator.version },
      subjectKind: input.subject_kind,
      samplingRate: input.sampling_rate,
      perTickLimit: input.per_tick_limit,
      enabled: input.enabled,
    };
    const at = this.clock.now().toISOString();
    const by = principalRef(caller);
    return this.control.transaction(async (tx) => {
      const existing = await tx.samplingRules.get(project.id, ruleId);
      if (!existing && (await tx.samplingRules.count(project.id)) >= MAX_RULES_PER_PROJECT)
        throw conflict(`this project holds ${MAX_RULES_PER_PROJECT} sampling rules, the most it may: delete one or change an existing rule`);
      const fresh: StoredSamplingRule = { ruleId, orgId: project.orgId, projectId: project.id, ...w, createdAt: at, createdBy: by, updatedAt: at, updatedBy: by };
      if (!existing && (await tx.samplingRules.insertIfMissing(fresh))) return { rule: fresh, created: true };
      // Written meanwhile by a concurrent PUT, or already there: replace it unless it is identical.
      const current = existing ?? (await tx.samplingRules.get(project.id, ruleId))!;
      if (same(current, w)) return { rule: current, created: false };
      await tx.samplingRules.update(project.id, ruleId, w, at, by);
      return { rule: { ...current, ...w, updatedAt: at, updatedBy: by }, created: false };
    });
  }

  list(filter: SamplingRuleFilter, opts: { after?: string; limit: number }) {
    return this.control.samplingRules.list(filter, opts);
  }

  /** 404 when the project has no such rule. */
  async delete(projectId: string, ruleIdRaw: string): Promise<void> {
    const ruleId = checkRuleId(ruleIdRaw, 'ruleId');
    if (!(await this.control.samplingRules.delete(projectId, ruleId))) throw notFound('sampling rule');
  }

  /** The port the sampling job reads: every rule that can select anything, of every live project. */
  async active(): Promise<SamplingRuleRecord[]> {
    return (await this.control.samplingRules.active()).filter(isActive);
  }
}
