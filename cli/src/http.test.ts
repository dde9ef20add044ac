import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CliError, exitCodeForStatus } from './errors.js';
import { ApiClient, buildUrl, errorFromResponse, parseRetryAfter } from './http.js';
import { startFakeApi, type FakeApi } from './testing/fake-api.js';

let api: FakeApi;
beforeEach(async () => {
  api = await startFakeApi();
});
afterEach(() => api.close());

async function failure(p: Promise<unknown>): Promise<CliError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(CliError);
    return e as CliError;
  }
  throw new Error('expected a failure');
}

describe('http client', () => {
  it('maps HTTP statuses to exit codes: 401 -> 3, 403 -> 4, 404 -> 5, others -> 1', () => {
    expect(exitCodeForStatus(401)).toBe(3);
    expect(exitCodeForStatus(403)).toBe(4);
    expect(exitCodeForStatus(404)).toBe(5);
    for (const s of [400, 409, 422, 429, 500, 502, 503]) expect(exitCodeForStatus(s)).toBe(1);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = new Date('2024-06-01T12:00:00Z');
    expect(parseRetryAfter('30', now)).toBe(30);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('Sat, 01 Jun 2024 12:01:30 GMT', now)).toBe(90);
    expect(parseRetryAfter('Sat, 01 Jun 2024 11:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it('builds URLs under /api/v1 and leaves out undefined query values', () => {
    expect(buildUrl('http://h:1', '/metrics/a%2Fb/labels', { project_id: undefined, start_time: 'x y', limit: 5 })).toBe(
      'http://h:1/api/v1/metrics/a%2Fb/labels?start_time=x+y&limit=5',
    );
  });

  it('keeps the server error code, message, details and status; non-JSON bodies get a generic message', () => {
    const e = errorFromResponse(400, 'Bad Request', '{"error":"invalid_request","message":"bad limit","details":{"field":"limit"}}', null);
    expect(e.toJSON()).toEqual({ error: 'invalid_request', message: 'bad limit', exit_code: 1, status: 400, details: { field: 'limit' } });
    const g = errorFromResponse(502, 'Bad Gateway', '<html>', '5');
    expect(g.toJSON()).toEqual({ error: 'http_error', message: 'HTTP 502 Bad Gateway', exit_code: 1, status: 502, retry_after: 5 });
  });

  it('sends the key in X-Svc-API-Key with JSON bodies and parses JSON answers', async () => {
    api.on('POST', '/projects', (req) => ({ status: 201, body: { echo: req.body } }));
    const client = new ApiClient(api.url, 'key-123');
    expect(await client.post('/projects', { body: { name: 'a' } })).toEqual({ echo: { name: 'a' } });
    const req = api.requests[0];
    expect(req.path).toBe('/api/v1/projects');
    expect(req.headers['x-svc-api-key']).toBe('key-123');
    expect(req.headers['content-type']).toBe('application/json');
    api.on('DELETE', '/projects/p1', { status: 204 });
    expect(await client.delete('/projects/p1')).toBeUndefined();
    expect(api.requests[1].headers['content-type']).toBeUndefined();
  });

  it('treats an invalid JSON answer as an error with exit code 1', async () => {
    api.on('GET', '/projects', { raw: '{"projects": [' });
    const e = await failure(new ApiClient(api.url, 'k').get('/projects'));
    expect(e.code).toBe('invalid_response');
    expect(e.exitCode).toBe(1);
  });

  it('reports network failures as connection_failed with exit code 1', async () => {
    const url = api.url;
    await api.close();
    const e = await failure(new ApiClient(url, 'k').get('/projects'));
    expect(e.code).toBe('connection_failed');
    expect(e.exitCode).toBe(1);
    expect(e.message).toContain(url);
    api = await startFakeApi();
  });
});
