/**
 * Datasets and sandbox replay (docs/evaluations-datasets.md): `GET|POST /evaluation/datasets`,
 * `GET|PATCH|DELETE /evaluation/datasets/{datasetId}`, `POST .../promotions`, `POST .../removals`,
 * `GET .../versions/{version}/items`, `POST .../versions/{version}/items/{itemId}/replays`. Every route
 * takes `?project_id=` (a project key is pinned to its project; naming another is 404). Reads and replay
 * need `evals:read`, writes `evals:write`; promotion also `scores:write` through a signed-in person.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../../context.js';
import { readLimit } from '../../../http/pagination.js';
import { errors, NoContent } from '../../../http/schemas.js';
import { cursorNumber, fingerprint, makeCursor, pageOf, readCursor } from '../../agent-runs/request-rules.js';
import { evaluationProject, refuseActors } from '../project.js';
import { parsePlan, replayCase } from '../replay/replay.js';
import * as S from './schemas.js';
import { checkDatasetId, checkItemId, DATASET_PAGE, ITEM_PAGE, parseDatasetVersion } from './service.js';
import { datasetSummaryView, datasetView, itemView, sealView } from './views.js';

const tags = ['evaluations'];
// A project key naming another project is 404, the same answer as a missing dataset.
const read = { scope: 'evals:read', foreignProject: 'not_found' } as const;
const write = { scope: 'evals:write', foreignProject: 'not_found' } as const;

export function datasetRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.datasets;
  const project = evaluationProject(ctx.projects);

  app.get(
    '/evaluation/datasets',
    {
      config: read,
      preValidation: refuseActors,
      schema: {
        operationId: 'listEvalDatasets',
        tags,
        summary: 'the datasets of a project, by id',
        description: `Default ${DATASET_PAGE.default}, at most ${DATASET_PAGE.max} a page; cursor paging.`,
        querystring: S.ListQuery,
        response: { 200: S.ListDatasetsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const limit = readLimit(req.query.limit, DATASET_PAGE);
      const fp = fingerprint(['datasets', projectId]);
      const pos = readCursor(req.query.cursor, fp);
      const rows = await svc.list(projectId, { limit, after: pos?.id });
      const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, 0, r.datasetId));
      return { datasets: items.map(datasetSummaryView), next_cursor };
    },
  );

  app.post(
    '/evaluation/datasets',
    {
      config: write,
      preValidation: refuseActors,
      schema: {
        operationId: 'createEvalDataset',
        tags,
        summary: 'create a dataset (no version yet: the first promotion seals version 1)',
        description: 'An existing dataset_id is 409. created_by comes from the credential.',
        querystring: S.ProjectOnlyQuery,
        body: S.CreateDatasetBody,
        response: { 201: S.DatasetSummary, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => reply.code(201).send(datasetSummaryView(await svc.create(req.principal, await project(req), req.body))),
  );

  app.get(
    '/evaluation/datasets/:datasetId',
    {
      config: read,
      preValidation: refuseActors,
      schema: {
        operationId: 'getEvalDataset',
        tags,
        summary: 'a dataset: its metadata and every sealed version (item counts, what sealed it, whether a score cites it)',
        params: S.DatasetPath,
        querystring: S.ProjectOnlyQuery,
        response: { 200: S.Dataset, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => datasetView(await svc.get((await project(req)).id, req.params.datasetId)),
  );

  app.patch(
    '/evaluation/datasets/:datasetId',
    {
      config: write,
      preValidation: refuseActors,
      schema: {
        operationId: 'updateEvalDataset',
        tags,
        summary: 'edit a dataset\'s metadata (display_name, description); versions never change',
        params: S.DatasetPath,
        querystring: S.ProjectOnlyQuery,
        body: S.PatchDatasetBody,
        response: { 200: S.DatasetSummary, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => datasetSummaryView(await svc.update(req.principal, await project(req), req.params.datasetId, req.body)),
  );

  app.delete(
    '/evaluation/datasets/:datasetId',
    {
      config: write,
      preValidation: refuseActors,
      schema: {
        operationId: 'deleteEvalDataset',
        tags,
        summary: 'delete a dataset and its versions',
        description: 'Refused (409, details.cited_versions) when a stored score cites any of its versions.',
        params: S.DatasetPath,
        querystring: S.ProjectOnlyQuery,
        response: { 204: NoContent, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      await svc.delete(await project(req), req.params.datasetId);
      return reply.code(204).send();
    },
  );

  app.post(
    '/evaluation/datasets/:datasetId/promotions',
    {
      config: write,
      preValidation: refuseActors,
      schema: {
        operationId: 'promoteEvalDatasetCases',
        tags,
        summary: 'promote human-reviewed runs: seals a new version with their frozen cases',
        description:
          'A signed-in person with evals:write and scores:write (an API key is 403). Each subject is a run with the id of a judgment recorded on that exact run in this project; ' +
          'one missing or mismatched review refuses the whole request before anything is frozen (400, details.reason, details.index). ' +
          'A case already in the dataset is not added twice; when nothing is new, nothing is sealed (200, sealed false).',
        params: S.DatasetPath,
        querystring: S.ProjectOnlyQuery,
        body: S.PromotionBody,
        response: { 200: S.SealResponse, 201: S.SealResponse, ...errors(400, 401, 403, 404, 409, 429) },
      },
    },
    async (req, reply) => {
      const p = await project(req);
      const a = await svc.promote(req.principal, p, req.params.datasetId, req.body.subjects);
      const cited = a.sealed ? false : (await svc.get(p.id, a.dataset.datasetId)).citedVersions.includes(a.version.version);
      return reply.code(a.sealed ? 201 : 200).send(sealView(a, cited));
    },
  );

  app.post(
    '/evaluation/datasets/:datasetId/removals',
    {
      config: write,
      preValidation: refuseActors,
      schema: {
        operationId: 'removeEvalDatasetCases',
        tags,
        summary: 'seal a new version without the named items',
        description: 'Every item must be in the latest version (400 names the unknown ones, details.unknown_item_ids); earlier versions keep them.',
        params: S.DatasetPath,
        querystring: S.ProjectOnlyQuery,
        body: S.RemovalBody,
        response: { 201: S.SealResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => reply.code(201).send(sealView(await svc.remove(req.principal, await project(req), req.params.datasetId, req.body.item_ids), false)),
  );

  app.get(
    '/evaluation/datasets/:datasetId/versions/:version/items',
    {
      config: read,
      preValidation: refuseActors,
      schema: {
        operationId: 'listEvalDatasetItems',
        tags,
        summary: 'the items of one exact version with their cases and reviews',
        description: `The version must be named (an exact integer; "latest" and 0 are 400). By position; default ${ITEM_PAGE.default}, at most ${ITEM_PAGE.max} a page.`,
        params: S.VersionPath,
        querystring: S.ListQuery,
        response: { 200: S.ItemsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const datasetId = checkDatasetId(req.params.datasetId, 'datasetId');
      const version = parseDatasetVersion(req.params.version);
      const limit = readLimit(req.query.limit, ITEM_PAGE);
      const fp = fingerprint(['dataset-items', projectId, datasetId, version]);
      const pos = readCursor(req.query.cursor, fp);
      const v = await svc.version(projectId, datasetId, version);
      const rows = await svc.itemsPage(projectId, datasetId, version, { afterPosition: pos ? cursorNumber(pos.k) : undefined, limit });
      const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.position, r.itemId));
      return { dataset_id: datasetId, version, item_count: v.itemCount, items: items.map(itemView), next_cursor };
    },
  );

  app.post(
    '/evaluation/datasets/:datasetId/versions/:version/items/:itemId/replays',
    {
      // Stores nothing: audited like a read (only refusals).
      config: { ...read, audit: 'read' },
      preValidation: refuseActors,
      schema: {
        operationId: 'replayEvalDatasetItem',
        tags,
        summary: 'replay a case\'s control flow in a sandbox (stores nothing)',
        description:
          'Body: a sandbox plan. Effects SANDBOX_EFFECT_NONE (replays the recorded answer if any), SANDBOX_EFFECT_INTERNAL and SANDBOX_EFFECT_EXTERNAL (a marked stub). ' +
          'An absent default_effect is EXTERNAL; a call whose recording names no tool is EXTERNAL. A tool declared twice, an unknown effect or SANDBOX_EFFECT_UNSPECIFIED is 400.',
        params: S.ItemPath,
        querystring: S.ProjectOnlyQuery,
        body: S.SandboxPlanBody,
        response: { 200: S.ReplayResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const datasetId = checkDatasetId(req.params.datasetId, 'datasetId');
      const version = parseDatasetVersion(req.params.version);
      const itemId = checkItemId(req.params.itemId);
      const plan = parsePlan(req.body ?? {});
      const item = await svc.item(projectId, datasetId, version, itemId);
      return { dataset_id: datasetId, version, item_id: itemId, ...replayCase(item.case, plan) };
    },
  );
}
