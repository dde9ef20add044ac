/**
 * The agent inventory (`/assets`) and attribution reads; review signals and the outbox are in
 * signals-routes.ts. Asset routes take scope by project (query `project_id`, or in a write's body
 * `scope.project_id` / `project_id`); an `environment` parameter is refused everywhere. Writes need
 * `agents:write`, reads `agents:read`; the request-level audit hook records every write.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { readLimit } from '../../http/pagination.js';
import { resolveProject } from '../../http/project-scope.js';
import { errors } from '../../http/schemas.js';
import { closedFilter, cursorNumber, fingerprint, makeCursor, pageOf, readCursor } from '../agent-runs/request-rules.js';
import {
  ASSET_PAGE,
  AssetPathParams,
  AssetQuery,
  Asset,
  AttributionQuery,
  AttributionResponse,
  ClassificationBody,
  DeclareAssetBody,
  DismissBody,
  ListAssetsQuery,
  ListAssetsResponse,
  ListOutboxQuery,
  ListOutboxResponse,
  ListSignalsQuery,
  ListSignalsResponse,
  ListVersionsQuery,
  ListVersionsResponse,
  OwnershipBody,
  ReviewBody,
  ReviewSignal,
  SIGNAL_PAGE,
  SignalPathParams,
} from './schemas.js';
import { APPROVAL_STATES, DATA_CLASSIFICATIONS, RISK_TIERS, SIGNAL_KINDS, SIGNAL_SEVERITIES, SIGNAL_STATUSES, type AssetRecord } from './store.js';
import { assetView, attributionView, outboxView, signalView, versionView } from './views.js';

const tags = ['assets'];
const read = { scope: 'agents:read' };
const write = { scope: 'agents:write' };

/** Who acts comes from the credential: a body naming an actor is refused, not ignored. */
export const ACTOR_FIELDS = [
  'approver_principal',
  'approver',
  'approved_by',
  'reviewer',
  'reviewed_by',
  'reviewed_at',
  'classified_by',
  'classifier',
  'classified_at',
  'ownership_set_by',
  'ownership_set_at',
  'created_by',
  'updated_by',
  'actor',
  'acknowledged_by',
  'resolved_by',
  'dismissed_by',
];

const ENVIRONMENT_REFUSED = 'asset routes take scope by project, not environment: remove the environment parameter';

/** Refuses `environment` (query, body, body scope) and actor fields before validation, with a message saying why. */
export async function refuseEnvironmentAndActors(req: FastifyRequest) {
  const query = (req.query ?? {}) as Record<string, unknown>;
  if (Object.hasOwn(query, 'environment')) throw invalidRequest(ENVIRONMENT_REFUSED);
  const body = req.body;
  if (body && typeof body === 'object' && !Array.isArray(body)) {
    const b = body as Record<string, unknown>;
    const scope = b.scope;
    if (Object.hasOwn(b, 'environment') || (scope && typeof scope === 'object' && Object.hasOwn(scope, 'environment'))) throw invalidRequest(ENVIRONMENT_REFUSED);
    const named = ACTOR_FIELDS.find((f) => Object.hasOwn(b, f));
    if (named) throw invalidRequest(`${named} is taken from the credential and cannot be sent`);
  }
}

/** The project named by the request: query `project_id`, body `project_id` or body `scope.project_id` (all that are sent must agree). */
function selectorOf(req: FastifyRequest): string | undefined {
  const q = (req.query ?? {}) as { project_id?: string };
  const b = (req.body ?? {}) as { project_id?: string; scope?: { project_id?: string } };
  const named = [q.project_id, b.project_id, b.scope?.project_id].filter((v): v is string => v !== undefined && v !== '');
  if (new Set(named).size > 1) throw invalidRequest('project_id and scope.project_id name different projects');
  return named[0];
}

export function assetRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.assets;
  const project = (req: FastifyRequest) => resolveProject(req.principal, ctx.projects, selectorOf(req));
  const hooks = { preValidation: refuseEnvironmentAndActors };
  /** The asset as every route answers it: with where it was seen, read from its sightings. */
  const view = async (a: AssetRecord) => assetView((await svc.withEnvironments([a]))[0]!);

  app.post(
    '/assets',
    {
      config: write,
      ...hooks,
      schema: {
        operationId: 'declareAsset',
        tags,
        summary: 'declare an agent asset',
        description:
          'Adds an agent to the inventory with its observation keys (the agent identities its telemetry carries). ' +
          'A key maps to at most one asset per project. When the keys already map to one discovered (shadow) asset and to no other, the declaration ' +
          'adopts it (200): it becomes declared (`shadow` false) with this name and description and any further keys, keeping its history, reviews ' +
          'and signals. A key of a declared asset, or keys of several assets, is 409. ' +
          'The asset starts UNREVIEWED, UNASSESSED, UNCLASSIFIED and unowned; `created_by` comes from the credential.',
        querystring: AssetQuery,
        body: DeclareAssetBody,
        response: { 200: Asset, 201: Asset, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req, reply) => {
      const { asset, adopted } = await svc.declare(req.principal, await project(req), req.body);
      return reply.code(adopted ? 200 : 201).send(await view(asset));
    },
  );

  app.get(
    '/assets',
    {
      config: read,
      ...hooks,
      schema: {
        operationId: 'listAssets',
        tags,
        summary: 'list the agent inventory of a project',
        description: 'Newest first. Filters are ANDed; a repeatable filter is OR within (repeated or comma-separated); an unknown value is 400. Default 100, at most 200 a page.',
        querystring: ListAssetsQuery,
        response: { 200: ListAssetsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const q = req.query;
      const { id: projectId } = await project(req);
      const filter = {
        projectId,
        ...(q.shadow !== undefined ? { origin: q.shadow ? ('discovered' as const) : ('declared' as const) } : {}),
        riskTiers: closedFilter('risk_tier', q.risk_tier, RISK_TIERS),
        approvalStates: closedFilter('approval_state', q.approval_state, APPROVAL_STATES),
        dataClassifications: closedFilter('data_classification', q.data_classification, DATA_CLASSIFICATIONS),
        ownerTeam: q.owner_team,
        unowned: q.owned === undefined ? undefined : !q.owned,
      };
      const limit = readLimit(q.limit, ASSET_PAGE);
      const fp = fingerprint(['assets', filter]);
      const pos = readCursor(q.cursor, fp);
      const rows = await svc.list(filter, { limit, after: pos && { createdAt: String(pos.k), id: pos.id } });
      const { items, next_cursor } = pageOf(rows, limit, (a) => makeCursor(fp, a.createdAt, a.id));
      return { assets: (await svc.withEnvironments(items)).map(assetView), next_cursor };
    },
  );

  app.get(
    '/assets/attribution',
    {
      config: read,
      ...hooks,
      schema: {
        operationId: 'getAssetAttribution',
        tags,
        summary: 'which asset each observation key maps to, and which credentials sent it',
        description:
          'Repeat `observation_key` (at most 100). Each mapping names the current asset (null when none) and, when `availability` is answered, ' +
          'the credentials recorded for the key (empty: nothing was recorded). When the telemetry store cannot be read, `availability` is unavailable ' +
          'and no mapping carries credentials: an unanswerable lookup is never an empty list.',
        querystring: AttributionQuery,
        response: { 200: AttributionResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await project(req);
      const keys = [...new Set(req.query.observation_key)];
      return attributionView(await svc.attribution(projectId, keys));
    },
  );

  app.get(
    '/assets/:assetId',
    {
      config: read,
      ...hooks,
      schema: {
        operationId: 'getAsset',
        tags,
        summary: 'get one asset',
        description: "Another project's or organization's asset answers 404, like a missing one.",
        params: AssetPathParams,
        querystring: AssetQuery,
        response: { 200: Asset, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => view(await svc.get(req.principal, req.params.assetId, selectorOf(req))),
  );

  app.get(
    '/assets/:assetId/versions',
    {
      config: read,
      ...hooks,
      schema: {
        operationId: 'listAssetVersions',
        tags,
        summary: 'every version of an asset, oldest first',
        description: 'Each write (declaration or discovery, review, classification, ownership, quarantine mark) appends one version with the asset as it left it.',
        params: AssetPathParams,
        querystring: ListVersionsQuery,
        response: { 200: ListVersionsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const limit = readLimit(req.query.limit, ASSET_PAGE);
      const fp = fingerprint(['asset-versions', req.params.assetId]);
      const pos = readCursor(req.query.cursor, fp);
      const afterVersion = pos === undefined ? undefined : Number(pos.k);
      if (afterVersion !== undefined && !Number.isSafeInteger(afterVersion)) throw invalidRequest('cursor is malformed or expired');
      const { rows, seen } = await svc.versions(req.principal, req.params.assetId, selectorOf(req), { afterVersion, limit });
      const { items, next_cursor } = pageOf(rows, limit, (v) => makeCursor(fp, v.version, ''));
      return { versions: items.map((v) => versionView(v, seen)), next_cursor };
    },
  );

  app.get(
    '/assets/:assetId/attribution',
    {
      config: read,
      ...hooks,
      schema: {
        operationId: 'getAssetAttributionById',
        tags,
        summary: 'every observation key mapped to the asset, with the credentials that sent it',
        description: 'Same mapping shape and `availability` rule as GET /assets/attribution.',
        params: AssetPathParams,
        querystring: AssetQuery,
        response: { 200: AttributionResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const a = await svc.get(req.principal, req.params.assetId, selectorOf(req));
      return { ...attributionView(await svc.attribution(a.projectId, a.observationKeys)), asset_id: a.id };
    },
  );

  app.post(
    '/assets/:assetId/reviews',
    {
      config: write,
      ...hooks,
      schema: {
        operationId: 'reviewAsset',
        tags,
        summary: 'record a review: approval state, risk tier and reason',
        description:
          'The only writer of `risk_tier`. The approver is the credential (sending one is 400). APPROVED or REJECTED resolves the asset\'s open ' +
          'SHADOW_ASSET and UNREVIEWED_ASSET signals. Approving a quarantined asset does not lift the quarantine. *_UNSPECIFIED values are refused.',
        params: AssetPathParams,
        querystring: AssetQuery,
        body: ReviewBody,
        response: { 200: Asset, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => view(await svc.review(req.principal, req.params.assetId, selectorOf(req), req.body)),
  );

  app.put(
    '/assets/:assetId/data-classification',
    {
      config: write,
      ...hooks,
      schema: {
        operationId: 'classifyAsset',
        tags,
        summary: 'set the data classification of an asset',
        description: 'Independent of approval, tier, owner and lifecycle. The classifier is the credential (sending one is 400). *_UNSPECIFIED is refused.',
        params: AssetPathParams,
        querystring: AssetQuery,
        body: ClassificationBody,
        response: { 200: Asset, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => view(await svc.classify(req.principal, req.params.assetId, selectorOf(req), req.body)),
  );

  app.put(
    '/assets/:assetId/ownership',
    {
      config: write,
      ...hooks,
      schema: {
        operationId: 'setAssetOwnership',
        tags,
        summary: 'set the owner team and/or owner principal of an asset',
        description: 'A field omitted keeps its value; null clears it; at least one must be named. Setting either resolves the open UNOWNED_ASSET signal.',
        params: AssetPathParams,
        querystring: AssetQuery,
        body: OwnershipBody,
        response: { 200: Asset, ...errors(400, 401, 403, 404, 409) },
      },
    },
    async (req) => view(await svc.setOwnership(req.principal, req.params.assetId, selectorOf(req), req.body)),
  );
}
