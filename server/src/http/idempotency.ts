/**
 * The request side of idempotent writes: after authentication and validation, a write carrying
 * `Idempotency-Key` is admitted once per credential and key; its successful answer is stored
 * before it is sent, and a retry is answered from the store with `Idempotent-Replayed: true`.
 * Routes that do not write (`audit: 'read'`) or are not under the REST API ignore the header.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { credentialSecret } from './auth.js';
import {
  IDEMPOTENCY_HEADER,
  parseIdempotencyKey,
  REPLAYED_HEADER,
  type Claim,
  type IdempotencyService,
} from '../domains/idempotency/service.js';

declare module 'fastify' {
  interface FastifyRequest {
    idempotencyClaim?: Claim;
    /** This answer is a replay of an earlier one: nothing ran, nothing is audited again. */
    idempotentReplay?: boolean;
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const KEPT_HEADERS = ['content-type', 'location'];

function applies(req: FastifyRequest): boolean {
  const mode = req.routeOptions.config.audit;
  return WRITES.has(req.method) && !req.is404 && req.principal !== null && mode !== 'read' && mode !== 'none';
}

export function registerIdempotency(app: FastifyInstance, idempotency: IdempotencyService) {
  app.addHook('preHandler', async (req, reply) => {
    if (!applies(req)) return;
    const key = parseIdempotencyKey(req.headers[IDEMPOTENCY_HEADER]);
    if (key === undefined) return;
    const secret = credentialSecret(req);
    if (secret === undefined) return; // authenticated requests always carry one
    const fp = idempotency.fingerprint({ method: req.method, route: req.routeOptions.url ?? '', url: req.url, body: req.body });
    const admission = await idempotency.admit(req.principal, secret, key, fp);
    if (admission.kind === 'run') {
      req.idempotencyClaim = admission.claim;
      return;
    }
    req.idempotentReplay = true;
    const { status, headers, body } = admission.response;
    return reply.code(status).headers({ ...headers, [REPLAYED_HEADER]: 'true' }).send(body === '' ? undefined : body);
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const claim = req.idempotencyClaim;
    if (!claim) return payload;
    req.idempotencyClaim = undefined;
    const ok = reply.statusCode >= 200 && reply.statusCode < 300;
    const body = payload === null || payload === undefined ? '' : typeof payload === 'string' ? payload : Buffer.isBuffer(payload) ? payload.toString('utf8') : null;
    try {
      if (ok && body !== null) {
        const headers: Record<string, string> = {};
        for (const h of KEPT_HEADERS) {
          const v = reply.getHeader(h);
          if (v !== undefined) headers[h] = String(v);
        }
        await idempotency.complete(claim, { status: reply.statusCode, headers, body });
      } else {
        await idempotency.release(claim);
      }
    } catch (err) {
      // The write happened; only its replay is lost. A retry then runs again, as without a key.
      req.log.error({ err }, 'idempotency record could not be written');
      await idempotency.release(claim).catch(() => {});
    }
    return payload;
  });

  // A request that ended without reaching onSend (the connection dropped) gives its claim back.
  app.addHook('onResponse', async (req) => {
    const claim = req.idempotencyClaim;
    if (claim) await idempotency.release(claim).catch((err) => req.log.error({ err }, 'idempotency claim could not be released'));
  });
}
