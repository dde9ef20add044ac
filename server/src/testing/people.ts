/** People and browser sessions in tests: invite and accept a person, and a cookie jar that acts like a browser. */
import { randomBytes } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { ALL_SCOPES } from '../domains/api-keys/scopes.js';
import { keyPrefix, newKeySecret } from '../domains/api-keys/secret.js';
import type { Role } from '../domains/people/roles.js';
import type { TestApp } from './app.js';

export const PASSWORD = 'correct horse battery staple';

export interface Person {
  userId: string;
  email: string;
  password: string;
}

export function uniqueEmail(label = 'person'): string {
  return `${label}-${randomBytes(4).toString('hex')}@Example.com`;
}

/** Invites (with `key`, by default the owner key) and accepts; the person then has `role` in the key's organization. */
export async function addPerson(t: TestApp, role: Role, opts: { key?: string; email?: string; password?: string; name?: string } = {}): Promise<Person> {
  const email = opts.email ?? uniqueEmail(role);
  const password = opts.password ?? PASSWORD;
  const inv = await t.call({ method: 'POST', url: '/api/v1/invitations', payload: { email, role }, key: opts.key });
  if (inv.statusCode !== 201) throw new Error(`invite failed: ${inv.body}`);
  const existing = await t.ctx.control.users.findByEmail(email.toLowerCase());
  const body = existing ? { token: inv.json().token, password } : { token: inv.json().token, name: opts.name ?? 'Test Person', password };
  const acc = await t.call({ method: 'POST', url: '/api/v1/invitations/accept', payload: body, key: null });
  if (acc.statusCode !== 201) throw new Error(`accept failed: ${acc.body}`);
  return { userId: acc.json().user.id, email: email.toLowerCase(), password };
}

/** A second organization with its own owner key (there is no API to create organizations yet). */
export async function secondOrganization(t: TestApp): Promise<{ orgId: string; ownerKey: string }> {
  const orgId = t.ctx.ids.uuid();
  const now = t.ctx.clock.now().toISOString();
  const secret = newKeySecret();
  await t.ctx.control.organizations.insert({ id: orgId, name: 'second', createdAt: now });
  await t.ctx.control.apiKeys.insert({
    id: t.ctx.ids.uuid(),
    orgId,
    projectId: null,
    name: 'owner (second org)',
    keyHash: t.ctx.keyHash.hash(secret),
    keyPrefix: keyPrefix(secret),
    scopes: [...ALL_SCOPES],
    status: 'active',
    expiresAt: '2999-01-01T00:00:00.000Z',
    lastUsedAt: null,
    createdAt: now,
    revokedAt: null,
    userId: null,
    createdByApiKeyId: null,
    createdByState: 'system',
  });
  return { orgId, ownerKey: secret };
}

export interface Browser {
  /** Current cookie values by name. */
  cookies: Record<string, string>;
  /** Sends the cookies a browser would send for this path; writes carry X-Svc-CSRF: 1 unless `csrf: false`. */
  call(opts: InjectOptions & { url: string; csrf?: boolean }): Promise<LightMyRequestResponse>;
  /** A copy of this browser's cookie jar (another tab that kept an old cookie, or a thief). */
  clone(): Browser;
}

interface JarEntry {
  value: string;
  path: string;
}

function makeBrowser(t: TestApp, jar: Map<string, JarEntry>): Browser {
  return {
    get cookies() {
      return Object.fromEntries([...jar].map(([k, v]) => [k, v.value]));
    },
    async call({ csrf = true, headers, ...opts }) {
      const path = opts.url.split('?')[0];
      const cookies = Object.fromEntries([...jar].filter(([, c]) => path.startsWith(c.path)).map(([k, c]) => [k, c.value]));
      const res = await t.app.inject({ ...opts, cookies, headers: { ...(csrf ? { 'x-svc-csrf': '1' } : {}), ...headers } });
      // Expiry is the server's business here (tests move a fake clock); only a clearing cookie removes one.
      for (const c of res.cookies as { name: string; value: string; path?: string; maxAge?: number }[]) {
        if (c.value === '' || c.maxAge === 0) jar.delete(c.name);
        else jar.set(c.name, { value: c.value, path: c.path ?? '/' });
      }
      return res;
    },
    clone() {
      return makeBrowser(t, new Map([...jar].map(([k, v]) => [k, { ...v }])));
    },
  };
}

export function browser(t: TestApp): Browser {
  return makeBrowser(t, new Map());
}

/** Signs in through POST /api/v1/auth/login and returns the browser holding the cookies. */
export async function signIn(t: TestApp, person: Pick<Person, 'email' | 'password'>, orgId?: string): Promise<Browser> {
  const b = browser(t);
  const res = await b.call({ method: 'POST', url: '/api/v1/auth/login', payload: { email: person.email, password: person.password, ...(orgId ? { org_id: orgId } : {}) } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
  return b;
}

/** The Set-Cookie attributes of a response, by cookie name. */
export function setCookies(res: LightMyRequestResponse): Record<string, string> {
  const raw = res.headers['set-cookie'];
  const list = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  return Object.fromEntries(list.map((line) => [line.slice(0, line.indexOf('=')), line]));
}
