/**
 * `/deployments` and `/config-snapshots` (docs/signatures.md): deployments of an asset attested by a
 * signed bill of materials, and the configuration registered for them. Writes need `agents:write`, reads
 * `agents:read`; the project comes from `project_id` (a project key may omit it).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { readLimit } from '../../http/pagination.js';
import { requestProject } from '../../http/project-scope.js';
import { errors } from '../../http/schemas.js';
import { fingerprint, makeCursor, pageOf, readCursor } from '../agent-runs/request-rules.js';
import {
  CreateDeploymentBody,
  DEPLOYMENT_PAGE,
  DeploymentParams,
  DeploymentView,
  ListDeploymentsQuery,
  ListDeploymentsResponse,
  ListSnapshotsQuery,
  ListSnapshotsResponse,
  ProjectOnlyQuery,
  RegisterConfigBody,
  RegisterConfigResponse,
  SNAPSHOT_PAGE,
} from './schemas.js';
import { deploymentView, snapshotView } from './views.js';

const tags = ['attestations'];

/** Who acts and what the service derives cannot be sent. */
const REFUSED = ['created_by', 'created_at', 'registered_by', 'registered_at', 'config_state', 'matches', 'drift', 'config_sha256', 'current_snapshot_id', 'actor'];

async function refuseDerived(req: FastifyRequest) {
  const body = req.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  const named = REFUSED.filter((f) => Object.hasOwn(body, f));
  if (named.length) throw invalidRequest(`${named.join(', ')} ${named.length === 1 ? 'is' : 'are'} set by the service and cannot be sent`, { fields: named });
}

const cursorKey = (k: string | number) => {
  if (typeof k !== 'string') throw invalidRequest('cursor is malformed or expired');
  return k;
};

export function deploymentRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.deployments;
  const project = requestProject(ctx.projects);
  const view = async (d: Parameters<typeof deploymentView>[0]) => deploymentView(d, (await svc.currentSnapshots([d])).get(d.id));

  app.post(
    '/deployments',
    {
      config: { scope: 'agents:write' },
      preValidation: refuseDerived,
      schema: {
        operationId: 'createDeployment',
        tags,
        summary: 'record a deployment of an asset, attested by a signed bill of materials',
        description:
          'The manifest must verify and describe the same asset; `environment` must equal its scope environment (when set) and `release` its release ' +
          '(when it names one). Opens REVIEW_SIGNAL_KIND_CONFIG_UNREGISTERED until a matching configuration is registered.',
        querystring: ProjectOnlyQuery,
        body: CreateDeploymentBody,
        response: { 201: DeploymentView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req, reply) => reply.code(201).send(await view(await svc.create(req.principal, await project(req), req.body))),
  );

  app.get(
    '/deployments',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'listDeployments',
        tags,
        summary: 'deployments of the project, newest first',
        description: `Filters \`asset_id\`, \`environment\`. Paged with \`cursor\` and \`limit\` (default ${DEPLOYMENT_PAGE.default}, at most ${DEPLOYMENT_PAGE.max}).`,
        querystring: ListDeploymentsQuery,
        response: { 200: ListDeploymentsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const p = await project(req);
      const limit = readLimit(req.query.limit, DEPLOYMENT_PAGE);
      const fp = fingerprint(['deployments', p.id, req.query.asset_id ?? null, req.query.environment ?? null]);
      const after = readCursor(req.query.cursor, fp);
      const rows = await svc.list(p, { assetId: req.query.asset_id, environment: req.query.environment }, { limit, after: after && { createdAt: cursorKey(after.k), id: after.id } });
      const { items, next_cursor } = pageOf(rows, limit, (d) => makeCursor(fp, d.createdAt, d.id));
      const current = await svc.currentSnapshots(items);
      return { deployments: items.map((d) => deploymentView(d, current.get(d.id))), next_cursor };
    },
  );

  app.get(
    '/deployments/:deploymentId',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'getDeployment',
        tags,
        summary: 'one deployment, with the first difference of its current configuration when it drifted',
        params: DeploymentParams,
        querystring: ProjectOnlyQuery,
        response: { 200: DeploymentView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => view(await svc.get(req.principal, await project(req), req.params.deploymentId)),
  );

  app.post(
    '/config-snapshots',
    {
      config: { scope: 'agents:write' },
      preValidation: refuseDerived,
      schema: {
        operationId: 'registerConfigSnapshot',
        tags,
        summary: 'register the field configuration of a deployment; compared with its attesting manifest',
        description:
          "A configuration equal to the manifest's components (declared_by aside) clears CONFIG_UNREGISTERED and ABOM_DRIFT of the deployment; " +
          'one that differs opens ABOM_DRIFT (detail_code `<reason>:<kind>` of the first difference) or refreshes the open one.',
        querystring: ProjectOnlyQuery,
        body: RegisterConfigBody,
        response: { 201: RegisterConfigResponse, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { deployment, snapshot } = await svc.register(req.principal, await project(req), req.body);
      return reply.code(201).send({ ...snapshotView(snapshot), deployment: deploymentView(deployment, snapshot) });
    },
  );

  app.get(
    '/config-snapshots',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'listConfigSnapshots',
        tags,
        summary: 'configuration snapshots of one deployment, newest first',
        description: `\`deployment_id\` required. Paged with \`cursor\` and \`limit\` (default ${SNAPSHOT_PAGE.default}, at most ${SNAPSHOT_PAGE.max}).`,
        querystring: ListSnapshotsQuery,
        response: { 200: ListSnapshotsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const p = await project(req);
      const limit = readLimit(req.query.limit, SNAPSHOT_PAGE);
      const fp = fingerprint(['config-snapshots', p.id, req.query.deployment_id]);
      const after = readCursor(req.query.cursor, fp);
      const rows = await svc.snapshots(req.principal, p, req.query.deployment_id, { limit, after: after && { registeredAt: cursorKey(after.k), id: after.id } });
      const { items, next_cursor } = pageOf(rows, limit, (s) => makeCursor(fp, s.registeredAt, s.id));
      return { config_snapshots: items.map(snapshotView), next_cursor };
    },
  );
}
