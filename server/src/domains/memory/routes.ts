/**
 * Memory labels and propagation (docs/memory.md): `PUT|GET /memory-items/{itemKey}/label`,
 * `GET /memory-item-labels`, `GET /memory-items/{itemKey}/propagation`. Scope by project like the asset
 * routes (query `project_id`; an `environment` parameter is refused). The write needs `agents:write`,
 * the reads `agents:read`; the request-level audit hook records every write.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { readLimit } from '../../http/pagination.js';
import { resolveProject } from '../../http/project-scope.js';
import { errors } from '../../http/schemas.js';
import { closedFilter, fingerprint, makeCursor, pageOf, readCursor } from '../agent-runs/request-rules.js';
import { refuseEnvironmentAndActors } from '../assets/routes.js';
import { ItemPathParams, ItemQuery, LabelBody, ListLabelsQuery, ListLabelsResponse, MemoryLabel, PropagationQuery, PropagationResponse } from './schemas.js';
import { LABEL_PAGE, PROPAGATION_LIMIT, checkItemKey } from './service.js';
import { MEMORY_TRUST_LABELS } from './store.js';
import { labelView, propagationView } from './views.js';

const tags = ['memory'];
const read = { scope: 'agents:read' };
const write = { scope: 'agents:write' };

/** Fields of the label record the server sets: sending one is refused, naming it. */
const SERVER_SET = ['labeled_by', 'labeled_at', 'labeler', 'labeller', 'revision', 'review_signal_opened', 'review_signal_resolved', 'id'];

async function refuseServerSet(req: FastifyRequest) {
  await refuseEnvironmentAndActors(req);
  const b = req.body;
  if (b && typeof b === 'object' && !Array.isArray(b)) {
    const named = SERVER_SET.find((f) => Object.hasOwn(b, f));
    if (named) throw invalidRequest(`${named} is set by the server (the labeller comes from the credential) and cannot be sent`);
  }
}

export function memoryRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.memory;
  const project = (req: FastifyRequest) => resolveProject(req.principal, ctx.projects, (req.query as { project_id?: string }).project_id);

  app.put(
    '/memory-items/:itemKey/label',
    {
      config: write,
      preValidation: refuseServerSet,
      schema: {
        operationId: 'labelMemoryItem',
        tags,
        summary: 'label a memory item trusted, suspect or quarantined (appends a revision)',
        description:
          'Appends revision n+1 of the item\'s label; history is never replaced, and concurrent writes land as distinct revisions. ' +
          'labeled_by and labeled_at come from the credential (sending them is 400); a credential with neither a person nor an API key behind it is 403. ' +
          'QUARANTINED opens one REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM signal (a repeat refreshes it), TRUSTED resolves it, SUSPECT leaves it as it is. ' +
          'An item may be labelled before it was ever recorded. A label records a judgement only: it revokes and blocks nothing.',
        params: ItemPathParams,
        querystring: ItemQuery,
        body: LabelBody,
        response: { 200: MemoryLabel, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => labelView(await svc.label(req.principal, await project(req), req.params.itemKey, req.body)),
  );

  app.get(
    '/memory-items/:itemKey/label',
    {
      config: read,
      preValidation: refuseEnvironmentAndActors,
      schema: {
        operationId: 'getMemoryItemLabel',
        tags,
        summary: 'the current label of a memory item (its highest revision)',
        description: '404 when nobody labelled the item (also when it was recorded: recording is not labelling).',
        params: ItemPathParams,
        querystring: ItemQuery,
        response: { 200: MemoryLabel, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => labelView(await svc.current((await project(req)).id, req.params.itemKey)),
  );

  app.get(
    '/memory-item-labels',
    {
      config: read,
      preValidation: refuseEnvironmentAndActors,
      schema: {
        operationId: 'listMemoryItemLabels',
        tags,
        summary: 'every label revision of a project, newest first',
        description: `Filters memory_item_key (exact) and label (repeated or comma-separated; an unrecognized value is 400). Default ${LABEL_PAGE.default}, at most ${LABEL_PAGE.max} a page; cursor paging.`,
        querystring: ListLabelsQuery,
        response: { 200: ListLabelsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const q = req.query;
      const { id: projectId } = await project(req);
      const filter = {
        projectId,
        itemKey: q.memory_item_key === undefined ? undefined : checkItemKey(q.memory_item_key, 'memory_item_key'),
        labels: closedFilter('label', q.label, MEMORY_TRUST_LABELS),
      };
      const limit = readLimit(q.limit, LABEL_PAGE);
      const fp = fingerprint(['memory-labels', filter]);
      const pos = readCursor(q.cursor, fp);
      const rows = await svc.list(filter, { limit, after: pos && { labeledAt: String(pos.k), id: pos.id } });
      const { items, next_cursor } = pageOf(rows, limit, (r) => makeCursor(fp, r.labeledAt, r.id));
      return { memory_item_labels: items.map(labelView), next_cursor };
    },
  );

  app.get(
    '/memory-items/:itemKey/propagation',
    {
      config: read,
      preValidation: refuseEnvironmentAndActors,
      schema: {
        operationId: 'getMemoryItemPropagation',
        tags,
        summary: 'where a memory item went: its recorded operations, oldest first, with the label in force at each',
        description:
          `limit default ${PROPAGATION_LIMIT.default}, at most ${PROPAGATION_LIMIT.max} (above is 400); more operations than limit sets truncated. ` +
          'label_in_force is historical (the label at that entry\'s time), not the current label. distinct_session_count counts every operation. ' +
          '404 when the item was never recorded and never labelled; an item labelled before it was recorded answers its label and no entries. ' +
          'When the labels or the recorded operations cannot be read the answer is 503 unavailable, never a partial or empty list.',
        params: ItemPathParams,
        querystring: PropagationQuery,
        response: { 200: PropagationResponse, ...errors(400, 401, 403, 404, 503) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const limit = readLimit(req.query.limit, PROPAGATION_LIMIT);
      return propagationView(projectId, req.params.itemKey, await svc.propagation(projectId, req.params.itemKey, limit));
    },
  );
}
