/**
 * Sign-in endpoints of browser sessions. They take no credential header: login is the proof of a
 * password, refresh and logout read their cookies. They are exempt from the X-Svc-CSRF header
 * rule because the cookies are SameSite=Strict, so another site cannot make a browser send them.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { ApiError } from '../../http/errors.js';
import { errors } from '../../http/schemas.js';
import { clearSessionCookies, readCookie, REFRESH_COOKIE, SESSION_COOKIE, setSessionCookies } from './cookies.js';
import { LoginBody, SessionResponse } from './schemas.js';

const tags = ['auth'];
const config = { auth: 'none' as const };

export function sessionRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.sessions;
  const secure = ctx.config.cookieSecure;

  app.post(
    '/auth/login',
    { config, schema: { operationId: 'createSession', summary: 'sign in with email and password (sets the session cookies)', tags, security: [], body: LoginBody, response: { 200: SessionResponse, ...errors(400, 401, 403) } } },
    async (req, reply) => {
      const s = await svc.login({ email: req.body.email, password: req.body.password, orgId: req.body.org_id });
      setSessionCookies(reply, s, secure);
      return { user: s.user, organization: s.organization };
    },
  );

  app.post(
    '/auth/refresh',
    { config, schema: { operationId: 'refreshSession', tags, security: [], summary: 'rotates the svc_refresh cookie', response: { 200: SessionResponse, ...errors(401, 503) } } },
    async (req, reply) => {
      try {
        const s = await svc.refresh(readCookie(req, REFRESH_COOKIE));
        setSessionCookies(reply, s, secure);
        return { user: s.user, organization: s.organization };
      } catch (e) {
        // A refused refresh credential is dead for good: drop the cookies. A 503 leaves them as they are.
        if (e instanceof ApiError && e.status === 401) clearSessionCookies(reply, secure);
        throw e;
      }
    },
  );

  app.post(
    '/auth/logout',
    {
      config,
      schema: {
        operationId: 'deleteSession',
        tags,
        security: [],
        summary: 'revokes the refresh family, then clears both cookies; 503 with Retry-After leaves the cookies unchanged',
        response: { 204: Type.Null({ description: 'signed out: both cookies cleared; no body' }), ...errors(503) },
      },
    },
    async (req, reply) => {
      await svc.logout({ refresh: readCookie(req, REFRESH_COOKIE), session: readCookie(req, SESSION_COOKIE) });
      clearSessionCookies(reply, secure);
      return reply.code(204).send(null);
    },
  );
}
