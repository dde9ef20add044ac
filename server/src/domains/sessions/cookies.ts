/**
 * The two browser-session cookies. Both are HttpOnly (scripts cannot read them) and SameSite=Strict
 * (a browser never sends them on a request started by another site). The refresh cookie is only
 * sent to the sign-in endpoints, so ordinary requests never carry it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { SignedIn } from './service.js';
import { ACCESS_TTL_MS, REFRESH_TTL_MS } from './service.js';

export const SESSION_COOKIE = 'svc_session';
export const REFRESH_COOKIE = 'svc_refresh';
/** Where the login, refresh and logout routes live ({base_url}/auth). */
export const REFRESH_COOKIE_PATH = '/api/v1/auth';

function options(path: string, maxAgeMs: number, secure: boolean): CookieSerializeOptions {
  return { path, maxAge: Math.floor(maxAgeMs / 1000), httpOnly: true, sameSite: 'strict', secure };
}

export function setSessionCookies(reply: FastifyReply, s: SignedIn, secure: boolean): void {
  reply.setCookie(SESSION_COOKIE, s.access.secret, options('/', ACCESS_TTL_MS, secure));
  reply.setCookie(REFRESH_COOKIE, s.refresh.secret, options(REFRESH_COOKIE_PATH, REFRESH_TTL_MS, secure));
}

export function clearSessionCookies(reply: FastifyReply, secure: boolean): void {
  reply.clearCookie(SESSION_COOKIE, options('/', 0, secure));
  reply.clearCookie(REFRESH_COOKIE, options(REFRESH_COOKIE_PATH, 0, secure));
}

/** A cookie's value; an empty value is a cleared cookie and counts as absent. */
export function readCookie(req: FastifyRequest, name: string): string | undefined {
  const v = req.cookies?.[name];
  return v === undefined || v === '' ? undefined : v;
}
