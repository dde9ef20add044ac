/**
 * Test fixture: a dataset version of reviewed runs for experiment tests, built the way a user builds one:
 * a signed-in person judges each run (`POST /agent-runs/{run_id}/annotations`), then promotes the runs with
 * those reviews (`POST /evaluation/datasets/{id}/promotions`), which seals version 1.
 */
import { expect } from 'vitest';
import type { TestApp } from '../../../testing/app.js';
import { allowAllContent } from '../../../testing/content-policy.js';
import { addPerson, signIn, type Browser } from '../../../testing/people.js';

const reviewers = new WeakMap<TestApp, Promise<Browser>>();
let seq = 0;

/** Signs in the admin who reviews and promotes the runs of this app's experiments. */
export function useDatasets(t: TestApp) {
  if (!reviewers.has(t)) reviewers.set(t, addPerson(t, 'admin').then((a) => signIn(t, a)));
}

/** A dataset version (1) holding the frozen cases of these runs; item ids in run order. */
export async function datasetOf(t: TestApp, p: { projectId: string }, runIds: string[]) {
  useDatasets(t);
  const admin = await reviewers.get(t)!;
  const q = `project_id=${p.projectId}`;
  await allowAllContent(t, p.projectId);
  const datasetId = `golden-${++seq}`;
  const created = await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets?${q}`, payload: { dataset_id: datasetId } });
  expect(created.statusCode, created.body).toBe(201);
  const subjects = [];
  for (const runId of runIds) {
    const r = await admin.call({ method: 'POST', url: `/api/v1/agent-runs/${runId}/annotations?${q}`, payload: { metric_name: 'reviewed', label: 'good' } });
    expect(r.statusCode, r.body).toBe(201);
    subjects.push({ subject_kind: 'SUBJECT_KIND_AGENT_RUN', subject_ref: runId, review_annotation_id: r.json().annotation.annotation_id });
  }
  const promoted = await admin.call({ method: 'POST', url: `/api/v1/evaluation/datasets/${datasetId}/promotions?${q}`, payload: { subjects } });
  expect(promoted.statusCode, promoted.body).toBe(201);
  const byRun = new Map<string, string>((promoted.json().subjects as { subject_ref: string; item_id: string }[]).map((s) => [s.subject_ref, s.item_id]));
  return { datasetId, version: promoted.json().version.version as number, itemIds: runIds.map((r) => byRun.get(r)!) };
}
