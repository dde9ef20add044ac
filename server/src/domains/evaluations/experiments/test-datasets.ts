/**
 * Test fixture: a dataset version of frozen runs for experiment tests. Until the datasets service is
 * wired, it stands in for it (the cases are the runs' facts, read like the runner reads them).
 */
import { AgentFactsReader } from '../scoring/facts.js';
import { DuckDbReleaseQuery } from '../../../storage/telemetry/duckdb/release-query.js';
import type { TestApp } from '../../../testing/app.js';
import { notFound } from '../../../http/errors.js';
import type { RunFacts } from '../model.js';
import { ExperimentService, type ExperimentItem } from './service.js';

const versions = new Map<string, Array<ExperimentItem<RunFacts>>>();
let seq = 0;

export function useDatasets(t: TestApp) {
  const datasets = {
    version: async (projectId: string, datasetId: string, version: number) => {
      if (!versions.has(`${projectId}|${datasetId}|${version}`)) throw notFound('dataset version');
    },
    items: async (projectId: string, datasetId: string, version: number) => {
      const items = versions.get(`${projectId}|${datasetId}|${version}`);
      if (!items) throw notFound('dataset version');
      return items;
    },
  };
  (t.ctx as unknown as { experiments: unknown }).experiments = new ExperimentService<RunFacts>(t.ctx.control, t.ctx.evaluators, datasets, (c) => c, t.ctx.evaluationRunner, t.ctx.clock);
}

/** A dataset version holding the frozen cases of these runs (item ids in run order). */
export async function datasetOf(t: TestApp, p: { projectId: string }, runIds: string[]) {
  const facts = new AgentFactsReader(t.ctx.agentRuns, new DuckDbReleaseQuery(t.ctx.telemetry));
  const datasetId = `golden-${++seq}`;
  const items: Array<ExperimentItem<RunFacts>> = [];
  for (const [i, run] of runIds.entries()) items.push({ itemId: `item-${i + 1}`, case: await facts.run(p.projectId, run) });
  versions.set(`${p.projectId}|${datasetId}|1`, items);
  return { datasetId, version: 1, itemIds: items.map((i) => i.itemId) };
}
