/**
 * The consent step over REST, for a signed-in person in a browser session (writes carry
 * X-Svc-CSRF: 1 like every cookie-authenticated write). An authorization request sends the
 * browser to GET /oauth/interactions/{uid}; a UI shows that description and posts approve or
 * deny, then sends the browser to `redirect_to`. A device's code is approved by its user_code.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { errors } from '../../http/schemas.js';
import {
  ApproveBody,
  ApprovedResponse,
  DeniedResponse,
  DeviceApproveBody,
  DeviceApprovedResponse,
  DeviceQuery,
  DeviceRequestResponse,
  InteractionParams,
  InteractionResponse,
  UserCodeBody,
} from './schemas.js';

const tags = ['oauth'];
const config = { scope: 'oauth:connections' };
/** Approving records the new agent approval in its own transaction. */
const approving = { scope: 'oauth:connections', audit: 'domain' as const };

export function consentRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.consent;

  app.get(
    '/oauth/interactions/:uid',
    {
      config,
      schema: { operationId: 'getOAuthInteraction', tags, summary: 'a pending authorization of this browser: who asks, for which scopes', params: InteractionParams, response: { 200: InteractionResponse, ...errors(401, 403, 404) } },
    },
    async (req, reply) => svc.describe(req.principal, req.params.uid, { req: req.raw, res: reply.raw }),
  );

  app.post(
    '/oauth/interactions/:uid/approve',
    {
      config: approving,
      schema: { operationId: 'approveOAuthInteraction', tags, summary: 'approves: a new grant and agent approval for the signed-in person', params: InteractionParams, body: ApproveBody, response: { 200: ApprovedResponse, ...errors(400, 401, 403, 404) } },
    },
    async (req, reply) => svc.approve(req.principal, req.params.uid, req.body ?? {}, { req: req.raw, res: reply.raw }),
  );

  app.post(
    '/oauth/interactions/:uid/deny',
    { config, schema: { operationId: 'denyOAuthInteraction', summary: 'denies a pending authorization (the client gets access_denied)', tags, params: InteractionParams, response: { 200: DeniedResponse, ...errors(401, 403, 404) } } },
    async (req, reply) => svc.deny(req.principal, req.params.uid, { req: req.raw, res: reply.raw }),
  );

  app.get(
    '/oauth/device',
    { config, schema: { operationId: 'getDeviceRequest', tags, summary: 'the pending device request with this user code', querystring: DeviceQuery, response: { 200: DeviceRequestResponse, ...errors(400, 401, 403, 404, 409, 410) } } },
    async (req) => svc.describeDevice(req.principal, req.query.user_code),
  );

  app.post(
    '/oauth/device/approve',
    { config: approving, schema: { operationId: 'approveDeviceRequest', tags, summary: 'approves a pending device code for the signed-in person', body: DeviceApproveBody, response: { 200: DeviceApprovedResponse, ...errors(400, 401, 403, 404, 409, 410) } } },
    async (req) => {
      const { user_code, ...input } = req.body;
      return svc.approveDevice(req.principal, user_code, input);
    },
  );

  app.post(
    '/oauth/device/deny',
    { config, schema: { operationId: 'denyDeviceRequest', summary: 'denies a pending device code; the polling client gets access_denied', tags, body: UserCodeBody, response: { 204: Type.Null({ description: 'denied; no body' }), ...errors(400, 401, 403, 404, 409, 410) } } },
    async (req, reply) => {
      await svc.denyDevice(req.principal, req.body.user_code);
      return reply.code(204).send(null);
    },
  );
}
