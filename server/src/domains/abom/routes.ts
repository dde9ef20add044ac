/**
 * `/abom-manifests`: signed bills of materials (docs/signatures.md). Declaring needs `agents:write` and
 * the owner or admin role; reading needs `agents:read`. What is signed is never client-supplied: a body
 * carrying a derived member is refused, naming it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { requestProject, resolveProject } from '../../http/project-scope.js';
import { errors } from '../../http/schemas.js';
import { DeclareManifestBody, ManifestParams, ManifestQuery, ManifestView } from './schemas.js';
import { manifestView } from './views.js';

const tags = ['attestations'];

/** The members the service derives; a body naming any of them is refused (400 naming them). */
export const DERIVED_FIELDS = ['canonical_form', 'manifest_sha256', 'signature', 'signing_key_id', 'authority'];
/** Also the service's own: identity, schema, algorithm, and who acted (from the credential). */
const SERVICE_FIELDS = ['manifest_id', 'schema', 'signature_alg', 'valid', 'defect', 'created_by', 'declared_by_principal', 'actor'];

export async function refuseDerived(req: FastifyRequest) {
  const body = req.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) return;
  const derived = DERIVED_FIELDS.filter((f) => Object.hasOwn(body, f));
  if (derived.length) throw invalidRequest(`${derived.join(', ')} ${derived.length === 1 ? 'is' : 'are'} derived by the service and must be absent`, { fields: derived });
  const own = SERVICE_FIELDS.filter((f) => Object.hasOwn(body, f));
  if (own.length) throw invalidRequest(`${own.join(', ')} ${own.length === 1 ? 'is' : 'are'} set by the service and cannot be sent`, { fields: own });
}

export function abomRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const project = requestProject(ctx.projects);

  app.post(
    '/abom-manifests',
    {
      config: { scope: 'agents:write' },
      preValidation: refuseDerived,
      schema: {
        operationId: 'declareAbomManifest',
        tags,
        summary: 'declare a bill of materials of an asset; the service signs it (owner or admin)',
        description:
          'Needs agents:write and the owner or admin role (a key acts with the role of the person who minted it). The five derived members ' +
          '(`canonical_form`, `manifest_sha256`, `signature`, `signing_key_id`, `authority`) must be absent (400 naming them). ' +
          'The answer is the complete signed artifact with `authority: declared`.',
        body: DeclareManifestBody,
        response: { 201: ManifestView, ...errors(400, 401, 403, 404, 409, 503) },
      },
    },
    async (req, reply) => {
      const p = await resolveProject(req.principal, ctx.projects, req.body.scope.project_id);
      return reply.code(201).send(manifestView(await ctx.abom.declare(req.principal, p, req.body)));
    },
  );

  app.get(
    '/abom-manifests/:manifestId',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'getAbomManifest',
        tags,
        summary: 'one bill of materials: members, canonical form, digest, signature, and the verdict `valid` with `defect`',
        description: '`valid: false` comes with HTTP 200 and the manifest as stored.',
        params: ManifestParams,
        querystring: ManifestQuery,
        response: { 200: ManifestView, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => manifestView(await ctx.abom.get(req.principal, await project(req), req.params.manifestId)),
  );
}
