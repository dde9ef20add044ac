/**
 * The OpenAPI description as a contract. The issue: "every operation has an `operationId` and a
 * `summary`; `servers` is set; every success response is documented; the Bearer and OAuth security
 * schemes are declared; the OTLP routes document their request bodies; shared shapes are named
 * components, not `def-0`. Add `@redocly/cli lint` with the recommended rules to the test suite at
 * 0 errors." (Every operation has operationId and summary: conventions.test.ts, with the coverage.)
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ALL_SCOPES } from '../domains/api-keys/scopes.js';
import { projectWithKey, testApp, type TestApp } from '../testing/app.js';
import { lintDocument } from '../testing/openapi-lint.js';
import { addPerson } from '../testing/people.js';

const PUBLIC_URL = 'https://svc.example.test';
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

type Json = Record<string, any>;

describe('the OpenAPI description', () => {
  let t: TestApp;
  let doc: Json;
  beforeAll(async () => {
    t = await testApp({ env: { SVC_PUBLIC_URL: PUBLIC_URL } });
    doc = (await t.call({ method: 'GET', url: '/api/v1/openapi.json', key: null })).json();
  });
  afterAll(async () => t.close());

  const operations = () =>
    Object.entries<Json>(doc.paths).flatMap(([path, item]) =>
      Object.entries<Json>(item)
        .filter(([m]) => METHODS.includes(m))
        .map(([method, op]) => ({ key: `${method.toUpperCase()} ${path}`, path, method, op })),
    );
  const op = (method: string, path: string): Json => doc.paths[path]?.[method.toLowerCase()];

  it('"servers is set": the public URL (SVC_PUBLIC_URL), and paths keep their /api/v1 prefix', () => {
    expect(doc.servers).toEqual([{ url: PUBLIC_URL, description: expect.any(String) }]);
    expect(doc.paths['/api/v1/projects']).toBeDefined();
    expect(doc.paths['/v1/metrics']).toBeDefined();
  });

  describe('"every success response is documented"', () => {
    // Each route that answers a status other than 200 is called, and its answer must be in the document.
    it('"DELETE /projects/{id} ... answer an undocumented 204": documented, without a body', async () => {
      const p = await t.call({ method: 'POST', url: '/api/v1/projects', payload: { name: 'to-delete' } });
      expect(p.statusCode).toBe(201);
      expect(op('POST', '/api/v1/projects').responses['201'].content['application/json']).toBeDefined();
      const del = await t.call({ method: 'DELETE', url: `/api/v1/projects/${p.json().id}` });
      expect(del.statusCode).toBe(204);
      expect(op('DELETE', '/api/v1/projects/{id}').responses['204']).toEqual({ description: expect.any(String) });
    });

    it('"DELETE /members/{user_id} ... answer an undocumented 204": documented, without a body', async () => {
      const person = await addPerson(t, 'member');
      const del = await t.call({ method: 'DELETE', url: `/api/v1/members/${person.userId}` });
      expect(del.statusCode).toBe(204);
      expect(op('DELETE', '/api/v1/members/{user_id}').responses['204']).toEqual({ description: expect.any(String) });
    });

    it('"DELETE /llm/pricing ... answer an undocumented 204": documented, without a body', async () => {
      const { key } = await projectWithKey(t, ['llm:read', 'llm:write'], 'pricing');
      const put = await t.call({
        method: 'PUT',
        url: '/api/v1/llm/pricing',
        key,
        payload: { model: 'm-1', input_usd_per_million_tokens: 1, output_usd_per_million_tokens: 2 },
      });
      expect(put.statusCode).toBe(200);
      const del = await t.call({ method: 'DELETE', url: '/api/v1/llm/pricing?model=m-1', key });
      expect(del.statusCode).toBe(204);
      expect(op('DELETE', '/api/v1/llm/pricing').responses['204']).toEqual({ description: expect.any(String) });
    });

    it('POST /auth/logout (204) and POST /invitations (201) are documented as they answer', async () => {
      expect((await t.call({ method: 'POST', url: '/api/v1/auth/logout', key: null })).statusCode).toBe(204);
      expect(op('POST', '/api/v1/auth/logout').responses['204']).toEqual({ description: expect.any(String) });
      expect(op('POST', '/api/v1/invitations').responses['201'].content['application/json']).toBeDefined();
      expect(op('POST', '/api/v1/account/api-keys').responses['201'].content['application/json']).toBeDefined();
    });

    it('GET /api/v1/openapi.json documents its own 200 (a JSON object)', () => {
      expect(op('GET', '/api/v1/openapi.json').responses['200'].content['application/json'].schema.type).toBe('object');
    });

    it('every operation documents a success answer (2xx; the browser endpoints of OAuth a 303 redirect)', () => {
      const without = operations().filter(({ op }) => !Object.keys(op.responses ?? {}).some((c) => /^2\d\d$/.test(c) || c === '303'));
      expect(without.map((o) => o.key)).toEqual([]);
    });
  });

  describe('errors: the shared ErrorResponse, from one helper', () => {
    it('every operation of an authenticated route documents 400, 401, 403 (and 429, the agent budget) as ErrorResponse', () => {
      const authenticated = t.app.declaredRoutes.filter((r) => r.config.auth !== 'none');
      expect(authenticated.length).toBeGreaterThan(40);
      for (const r of authenticated) {
        const o = op(r.method, r.url.replace(/:([A-Za-z_]+)/g, '{$1}'));
        for (const code of ['400', '401', '403', '429'])
          expect(o.responses[code]?.content?.['application/json']?.schema, `${r.method} ${r.url} ${code}`).toEqual({ $ref: '#/components/schemas/ErrorResponse' });
      }
    });

    it("route-specific answers are kept: 404 and 409 where the route says; 413 and 415 where Fastify reads a body", async () => {
      // Fastify reads the body of a POST even where the route takes none: the limit applies there too.
      const big = await t.call({ method: 'POST', url: '/api/v1/auth/logout', key: null, headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ a: 'x'.repeat(2_000_000) }) });
      expect(big.statusCode).toBe(413);
      expect(Object.keys(op('POST', '/api/v1/auth/logout').responses)).toEqual(expect.arrayContaining(['413', '415']));
      const xml = await t.call({ method: 'POST', url: '/api/v1/projects', headers: { 'content-type': 'application/xml' }, payload: '<p/>' });
      expect(xml.statusCode).toBe(415);
      expect(xml.json().error).toBe('unsupported_media_type');
      expect(Object.keys(op('GET', '/api/v1/projects/{id}').responses)).toContain('404');
      expect(Object.keys(op('PATCH', '/api/v1/account/api-keys/{id}').responses)).toEqual(expect.arrayContaining(['404', '409', '413', '415']));
      expect(Object.keys(op('POST', '/v1/traces').responses)).toEqual(expect.arrayContaining(['400', '401', '403', '413', '415', '429', '503']));
      expect(Object.keys(op('GET', '/api/v1/projects').responses)).not.toContain('413');
    });

    it('a documented error answer is what the route sends: 401 without a credential, in the ErrorResponse shape', async () => {
      const res = await t.call({ method: 'GET', url: '/api/v1/projects', key: null });
      expect(res.statusCode).toBe(401);
      expect(Object.keys(res.json()).sort()).toEqual(Object.keys(doc.components.schemas.ErrorResponse.properties).filter((k) => k !== 'details'));
    });
  });

  describe('"the Bearer and OAuth security schemes are declared"', () => {
    it('HTTP bearer (OAuth access tokens and svc_ keys) and oauth2 (authorization code + PKCE at /oauth/auth and /oauth/token)', () => {
      const schemes = doc.components.securitySchemes;
      expect(schemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
      expect(schemes.bearerAuth.description).toContain('Bearer svc_');
      expect(schemes.oauth2.type).toBe('oauth2');
      expect(schemes.oauth2.flows.authorizationCode).toMatchObject({ authorizationUrl: `${PUBLIC_URL}/oauth/auth`, tokenUrl: `${PUBLIC_URL}/oauth/token` });
      expect(Object.keys(schemes.oauth2.flows.authorizationCode.scopes).sort()).toEqual(['offline_access', 'openid', ...ALL_SCOPES].sort());
      expect(schemes.oauth2.description).toMatch(/RFC 8628/);
      expect(schemes.oauth2.description).toMatch(/PKCE/);
    });

    it("the oauth2 scheme names the same endpoints and scopes as the server's own metadata (RFC 8414)", async () => {
      const meta = (await t.call({ method: 'GET', url: '/.well-known/oauth-authorization-server/oauth', key: null })).json();
      const flow = doc.components.securitySchemes.oauth2.flows.authorizationCode;
      // The library names its endpoints by the request's origin (here the test's Host); the paths must agree.
      expect(new URL(meta.authorization_endpoint).pathname).toBe(new URL(flow.authorizationUrl).pathname);
      expect(new URL(meta.token_endpoint).pathname).toBe(new URL(flow.tokenUrl).pathname);
      expect(meta.issuer).toBe(`${PUBLIC_URL}/oauth`);
      expect([...meta.scopes_supported].sort()).toEqual(Object.keys(flow.scopes).sort());
    });

    it('public routes (config auth none) declare security: []; every other lists each credential with its scope', () => {
      for (const r of t.app.declaredRoutes) {
        const o = op(r.method, r.url.replace(/:([A-Za-z_]+)/g, '{$1}'));
        if (r.config.auth === 'none') expect(o.security, `${r.method} ${r.url}`).toEqual([]);
        else {
          const scopes = r.config.scope ? [r.config.scope] : [];
          expect(o.security, `${r.method} ${r.url}`).toEqual(expect.arrayContaining([{ bearerAuth: scopes }, { oauth2: scopes }, { svcApiKey: scopes }, { svcSession: scopes }]));
        }
      }
    });
  });

  describe('"shared shapes are named components, not def-0"', () => {
    it('components have readable names; the error body and the page cursor are among them', () => {
      const names = Object.keys(doc.components.schemas);
      expect(names.filter((n) => !/^[A-Z][A-Za-z0-9]+$/.test(n))).toEqual([]);
      expect(names).toEqual(
        expect.arrayContaining(['ErrorResponse', 'NextCursor', 'OAuthError', 'OAuthTokenResponse', 'ExportTraceServiceResponse', 'Project', 'ApiKey', 'Member', 'AgentRun']),
      );
      expect(JSON.stringify(doc)).not.toMatch(/def-\d/);
    });

    it('every $ref points at a component that exists, and list responses name NextCursor', () => {
      const refs = [...JSON.stringify(doc).matchAll(/"\$ref":"([^"]+)"/g)].map((m) => m[1]);
      expect(refs.length).toBeGreaterThan(100);
      for (const ref of new Set(refs)) {
        expect(ref).toMatch(/^#\/components\/schemas\//);
        expect(doc.components.schemas[ref.slice('#/components/schemas/'.length)], ref).toBeDefined();
      }
      const list = op('GET', '/api/v1/projects').responses['200'].content['application/json'].schema;
      expect(list.properties.next_cursor).toEqual({ $ref: '#/components/schemas/NextCursor' });
      expect(list.properties.projects.items).toEqual({ $ref: '#/components/schemas/Project' });
    });
  });

  describe('"the OTLP routes document their request bodies"', () => {
    it.each(['/v1/metrics', '/v1/traces', '/v1/logs'])('%s: protobuf (binary) or OTLP/JSON, Content-Encoding gzip, 200 with partialSuccess', (path) => {
      const o = op('POST', path);
      expect(o.requestBody.content['application/x-protobuf'].schema).toMatchObject({ type: 'string', format: 'binary' });
      expect(o.requestBody.content['application/json'].schema.$ref).toMatch(/^#\/components\/schemas\/Otlp\w+JsonRequest$/);
      expect(o.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ in: 'header', name: 'content-encoding', schema: expect.objectContaining({ enum: expect.arrayContaining(['gzip']) }) })]));
      const ok = o.responses['200'].content;
      expect(Object.keys(ok)).toEqual(expect.arrayContaining(['application/json', 'application/x-protobuf']));
      const name = ok['application/json'].schema.$ref.split('/').pop();
      expect(doc.components.schemas[name].properties.partialSuccess).toBeDefined();
    });

    it('documenting the body did not turn on body validation: a gzip protobuf body and an OTLP/JSON body with extra fields are still taken', async () => {
      const { key } = await projectWithKey(t, ['ingest:write'], 'otlp-doc');
      const proto = await t.call({
        method: 'POST',
        url: '/v1/metrics',
        key,
        headers: { 'content-type': 'application/x-protobuf', 'content-encoding': 'gzip' },
        payload: gzipSync(Buffer.alloc(0)),
      });
      expect(proto.statusCode).toBe(200);
      const json = await t.call({ method: 'POST', url: '/v1/logs', key, headers: { 'content-type': 'application/json' }, payload: '{"resourceLogs":[],"extra":1}' });
      expect(json.statusCode).toBe(200);
    });
  });

  describe('"/oauth/* and /.well-known/*" are documented', () => {
    it('form bodies are application/x-www-form-urlencoded; errors are the OAuth error shape', () => {
      for (const path of ['/oauth/token', '/oauth/token/revocation', '/oauth/device/auth', '/oauth/request'])
        expect(Object.keys(op('POST', path).requestBody.content), path).toEqual(['application/x-www-form-urlencoded']);
      expect(op('POST', '/oauth/token').responses['200'].content['application/json'].schema.$ref).toBe('#/components/schemas/OAuthTokenResponse');
      expect(op('POST', '/oauth/token').responses['400'].content['application/json'].schema.$ref).toBe('#/components/schemas/OAuthError');
      expect(op('GET', '/oauth/auth').parameters.map((p: Json) => p.name)).toEqual(expect.arrayContaining(['client_id', 'code_challenge', 'code_challenge_method']));
    });

    it('the documented token error is what /oauth/token answers', async () => {
      const res = await t.call({ method: 'POST', url: '/oauth/token', key: null, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'grant_type=authorization_code' });
      expect(res.statusCode).toBe(400);
      expect(Object.keys(res.json())).toEqual(expect.arrayContaining(Object.keys(doc.components.schemas.OAuthError.properties)));
    });
  });

  describe('GET /api/v1/openapi.json under bad input', () => {
    it('malformed and repeated query parameters are 400 in the error shape', async () => {
      for (const url of ['/api/v1/openapi.json?a=%ZZ', '/api/v1/openapi.json?a=1&a=2', '/api/v1/openapi.json?a=%C0%AF']) {
        const res = await t.call({ method: 'GET', url, key: null });
        expect(res.statusCode, url).toBe(400);
        expect(res.json()).toMatchObject({ error: 'invalid_request', message: expect.any(String) });
      }
    });

    it('a huge or deeply nested unknown parameter is 400 (a REST route that declares no query parameters takes none); the document is unchanged', async () => {
      for (const url of [`/api/v1/openapi.json?x=${'a'.repeat(100_000)}`, `/api/v1/openapi.json?${'a[b]'.repeat(500)}=1`]) {
        const res = await t.call({ method: 'GET', url, key: null });
        expect(res.statusCode).toBe(400);
        expect(res.json()).toMatchObject({ error: 'invalid_request' });
        expect(res.json().message).toContain('takes no query parameters');
      }
      expect((await t.call({ method: 'GET', url: '/api/v1/openapi.json', key: null })).json()).toEqual(doc);
    });

    it('a write method is 405; a body on GET changes nothing', async () => {
      const post = await t.call({ method: 'POST', url: '/api/v1/openapi.json', key: null, payload: { paths: {} } });
      expect(post.statusCode).toBe(405);
      expect(post.json().error).toBe('method_not_allowed');
      const again = await t.call({ method: 'GET', url: '/api/v1/openapi.json', key: null });
      expect(again.json()).toEqual(doc);
    });

    it('concurrent identical requests get the same document', async () => {
      const answers = await Promise.all(Array.from({ length: 20 }, () => t.call({ method: 'GET', url: '/api/v1/openapi.json', key: null })));
      for (const a of answers) {
        expect(a.statusCode).toBe(200);
        expect(a.body).toBe(answers[0].body);
      }
    });
  });

  describe('"Add @redocly/cli lint with the recommended rules to the test suite at 0 errors"', () => {
    it('the generated description lints with 0 errors', async () => {
      const result = await lintDocument(doc);
      expect(result.problems.filter((p) => p.severity === 'error')).toEqual([]);
      expect(result.errors).toBe(0);
    });

    it('the lint can fail: a description missing a summary and the servers is reported as errors', async () => {
      const broken = structuredClone(doc);
      delete broken.servers;
      delete broken.paths['/api/v1/projects'].get.summary;
      const result = await lintDocument(broken);
      expect(result.problems.filter((p) => p.severity === 'error').map((p) => p.ruleId)).toEqual(
        expect.arrayContaining(['no-empty-servers', 'operation-summary']),
      );
    });
  });
});
