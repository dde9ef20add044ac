/**
 * What the browser tests share: the service (global-setup.ts), its owner key for setting things up over the
 * API, people made by invitation, a signed-in browser context per person, and a guard that fails a test
 * on any console error or failed request of its pages.
 */
import { randomBytes } from 'node:crypto';
import { test as base, expect, type BrowserContext, type Page } from '@playwright/test';

export const BASE = process.env.SVC_E2E_BASE!;
export const OWNER_KEY = process.env.SVC_E2E_KEY!;
export const PROJECT = process.env.SVC_E2E_PROJECT!;
export const PASSWORD = 'correct horse battery staple';

/** The owner key's call of the API (JSON in and out); throws unless the status is `expect`. */
export async function owner<T = any>(method: string, path: string, body?: unknown, expectStatus?: number): Promise<T> {
  const res = await fetch(`${BASE}/api/v1${path}`, {
    method,
    headers: { 'x-svc-api-key': OWNER_KEY, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (expectStatus ? res.status !== expectStatus : !res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/** An invitation link's token, for a new email. */
export async function invite(role: 'owner' | 'admin' | 'member', email = `${unique('p')}@example.com`) {
  const inv = await owner<{ token: string }>('POST', '/invitations', { email, role }, 201);
  return { email, token: inv.token };
}

/** A person with an account (invited and accepted over the API). */
export async function person(role: 'owner' | 'admin' | 'member', name = 'Grace') {
  const { email, token } = await invite(role);
  await owner('POST', '/invitations/accept', { token, name, password: PASSWORD }, 201);
  return { email, name, role };
}

/** A new project of the organization (its id). */
export async function project(name = unique('ui')) {
  const p = await owner<{ id: string }>('POST', '/projects', { name }, 201);
  return p.id;
}

/** A key of project `p` holding only `ingest:write`, as a service's OpenTelemetry exporter would have. */
export async function ingestKey(p: string): Promise<{ id: string; key: string }> {
  return owner('POST', '/account/api-keys', { name: unique('ingest'), scopes: ['ingest:write'], project_id: p }, 201);
}

/** Signs `context` in as `who` (the session cookie set by POST /auth/login, shared with its pages). */
export async function signIn(context: BrowserContext, who: { email: string }) {
  const res = await context.request.post(`${BASE}/api/v1/auth/login`, { data: { email: who.email, password: PASSWORD } });
  expect(res.status(), await res.text()).toBe(200);
}

/** Collects console errors, uncaught page errors and failed requests (no answer, or a 4xx/5xx) of a page. */
export function guard(page: Page) {
  const problems: string[] = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    // A read the page or the test's own navigation cancelled (leaving the live tail, a reload while a list
    // refreshes) is not a failure; a refused connection, or any write that did not finish, is.
    if (r.failure()?.errorText === 'net::ERR_ABORTED' && r.method() === 'GET') return;
    problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
  });
  page.on('response', (r) => r.status() >= 400 && problems.push(`response ${r.status()}: ${r.request().method()} ${r.url()}`));
  return {
    problems,
    expectNone: () => expect(problems, problems.join('\n')).toEqual([]),
  };
}

/** Playwright's test, with pages addressed relative to the service (its address is known only after global setup). */
export const test = base.extend({
  baseURL: async ({}, use) => use(process.env.SVC_E2E_BASE),
});
export { expect };
