/**
 * `svc evals`: the evaluation area (`/api/v1/evaluation/...`; docs/evaluations.md), one subcommand per
 * endpoint. Structured declarations take `--body '<json>'` or `--file <path>` (`--file -` reads standard
 * input). Each part registers its subcommands on the one `evals` group.
 */
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { registerEvalsBudget } from './evals-budget.js';
import { registerEvalsDatasets } from './evals-datasets.js';
import { registerEvalsEvaluators } from './evals-evaluators.js';
import { registerEvalsResults } from './evals-results.js';
import { registerEvalsAnnotations } from './evals-annotations.js';
import { registerEvalsGates } from './evals-gates.js';
import { registerEvalsCalibrations } from './evals-calibrations.js';
import { registerEvalsExperiments } from './evals-experiments.js';

export function registerEvals(program: Command, ctx: Context): void {
  const evals = program.command('evals').description('evaluations: evaluators, sampling rules, budget, on-demand evaluation, results, release series, release gates');
  registerEvalsEvaluators(evals, ctx);
  registerEvalsBudget(evals, ctx);
  registerEvalsResults(evals, ctx);
  registerEvalsAnnotations(evals, ctx);
  registerEvalsGates(evals, ctx);
  registerEvalsCalibrations(evals, ctx);
  registerEvalsDatasets(evals, ctx);
  registerEvalsExperiments(evals, ctx);
}
