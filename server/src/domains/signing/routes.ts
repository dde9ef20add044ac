/**
 * The published JWK Set (`/.well-known/svc-signing-keys.json`, at the root, no credential) and the key
 * administration routes under /api/v1 (`/signing-keys`, `/signing-keys/rotate`). docs/signatures.md.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.js';
import { invalidRequest } from '../../http/errors.js';
import { errors } from '../../http/schemas.js';
import { JwkSet, ListSigningKeysResponse, RotateResponse } from './schemas.js';
import type { SigningKeyRecord } from './store.js';

const tags = ['attestations'];
export const JWKS_PATH = '/.well-known/svc-signing-keys.json';

const keyView = (k: SigningKeyRecord) => ({
  kid: k.kid,
  x: k.x,
  status: k.current ? ('current' as const) : ('retired' as const),
  created_at: k.createdAt,
  created_by: k.createdBy ?? 'platform',
  ...(k.retiredAt !== null ? { retired_at: k.retiredAt, retired_by: k.retiredBy ?? '' } : {}),
});

/** Root-level: the JWK Set anyone verifies artifacts with. */
export function jwksRoutes(app: FastifyInstance, ctx: AppContext) {
  app.get(
    JWKS_PATH,
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'getSigningKeys',
        tags,
        summary: 'the JWK Set of the artifact signing keys (no credential)',
        description: 'Ed25519 keys (`kty: OKP`, `crv: Ed25519`, `alg: EdDSA`, `use: sig`); `x` is the raw 32-byte public key as unpadded base64url. Retired keys stay published permanently.',
        response: { 200: JwkSet },
      },
    },
    async (_req, reply) => {
      reply.header('cache-control', 'public, max-age=300');
      return ctx.signing.jwks();
    },
  );
}

async function refuseBody(req: FastifyRequest) {
  const body = req.body;
  if (body === undefined || body === null) return;
  if (typeof body !== 'object' || Array.isArray(body) || Object.keys(body).length > 0) throw invalidRequest('this request takes no body');
}

/** Under /api/v1. */
export function signingKeyRoutes(app: FastifyInstance, ctx: AppContext) {
  app.get(
    '/signing-keys',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'listSigningKeys',
        tags,
        summary: 'the artifact signing keys with their status (current or retired)',
        response: { 200: ListSigningKeysResponse, ...errors(401, 403) },
      },
    },
    async () => ({ signing_keys: (await ctx.signing.list()).map(keyView) }),
  );

  app.post(
    '/signing-keys/rotate',
    {
      config: { scope: 'governance:write' },
      preValidation: refuseBody,
      schema: {
        operationId: 'rotateSigningKey',
        tags,
        summary: 'make a new current signing key; the old one is retired and stays published (owner or admin)',
        description:
          'Needs governance:write and the owner or admin role. Artifacts signed before keep verifying under their key, which stays in the JWK Set. ' +
          'The signing key belongs to the service: every organization of this service signs with it.',
        response: { 200: RotateResponse, ...errors(400, 401, 403, 503) },
      },
    },
    async (req) => {
      const { current, retired } = await ctx.signing.rotate(req.principal);
      return { current: keyView(current), retired: keyView(retired) };
    },
  );
}
