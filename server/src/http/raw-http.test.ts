/**
 * What only shows over a real socket: the HTTP parser's own refusals, and repeated headers that
 * Node folds before a route sees them. A listening server, raw bytes through node:net.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testApp, type TestApp } from '../testing/app.js';

let t: TestApp;
let port: number;

beforeAll(async () => {
  t = await testApp();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as net.AddressInfo).port;
});
afterAll(async () => t.close());

/** Sends `head` (and body) as written, returns status, headers and body of the answer. */
function raw(head: string, body = ''): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let got = '';
    socket.on('data', (d) => (got += d.toString('latin1')));
    socket.on('error', () => undefined); // a reset after the answer is fine
    socket.on('close', () => {
      const m = /^HTTP\/1\.1 (\d{3})[^\r]*\r\n([\s\S]*?)\r\n\r\n([\s\S]*)$/.exec(got);
      if (!m) return reject(new Error(`no HTTP answer: ${JSON.stringify(got.slice(0, 200))}`));
      const headers: Record<string, string> = {};
      for (const line of m[2].split('\r\n')) {
        const i = line.indexOf(':');
        headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
      }
      // Keep-alive answers: cut the body at Content-Length (chunked answers are not used here).
      const len = headers['content-length'] === undefined ? m[3].length : Number(headers['content-length']);
      resolve({ status: Number(m[1]), headers, body: m[3].slice(0, len) });
    });
    socket.write(`${head}\r\nConnection: close\r\n\r\n${body}`, 'latin1');
  });
}

const get = (path: string, headerLines: string[]) => raw([`GET ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...headerLines].join('\r\n'));

describe('the HTTP parser\'s refusals answer in our error shape', () => {
  it('headers larger than the limit: 431 request_header_too_large', async () => {
    const res = await get('/api/v1/projects', [`X-Big: ${'a'.repeat(20_000)}`]);
    expect(res.status).toBe(431);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(res.body)).toEqual({ error: 'request_header_too_large', message: expect.any(String) });
  });

  it('a control character in a header: 400 invalid_request', async () => {
    for (const line of ['X-Evil: a\u0001b', 'X-Evil: a\u007fb', 'X Evil: a', 'X-Evil:\u0000']) {
      const res = await get('/api/v1/projects', [line]);
      expect(res.status, JSON.stringify(line)).toBe(400);
      expect(JSON.parse(res.body)).toEqual({ error: 'invalid_request', message: expect.any(String) });
    }
  });

  it('a bad request line: 400 invalid_request', async () => {
    for (const head of ['GARBAGE', 'GET /x HTTP/9.9\r\nHost: a', 'GET  HTTP/1.1\r\nHost: a', 'G\u0001T / HTTP/1.1\r\nHost: a']) {
      const res = await raw(head);
      expect(res.status, JSON.stringify(head)).toBe(400);
      const b = JSON.parse(res.body);
      expect(b.error).toBe('invalid_request');
      expect(Object.keys(b).sort()).toEqual(['error', 'message']);
    }
  });
});

describe('two credentials on one request: 400 "more than one credential was sent"', () => {
  const expectTwo = (res: { status: number; body: string }) => {
    expect(res.status, res.body).toBe(400);
    const b = JSON.parse(res.body);
    expect(b.error).toBe('invalid_request');
    expect(b.message).toContain('more than one credential was sent');
  };

  it('two Authorization headers, identical or not (Node keeps only the first)', async () => {
    expectTwo(await get('/api/v1/projects', [`Authorization: ApiKey ${t.ownerKey}`, 'Authorization: ApiKey svc_other_other_other']));
    expectTwo(await get('/api/v1/projects', [`Authorization: ApiKey ${t.ownerKey}`, `Authorization: ApiKey ${t.ownerKey}`]));
  });

  it('two X-Svc-API-Key headers, identical or not (Node joins them with ", ")', async () => {
    expectTwo(await get('/api/v1/projects', [`X-Svc-API-Key: ${t.ownerKey}`, `X-Svc-API-Key: ${t.ownerKey}`]));
    expectTwo(await get('/api/v1/projects', [`X-Svc-API-Key: ${t.ownerKey}`, 'x-svc-api-key: junk']));
  });

  it('two different credential headers carrying the same key', async () => {
    expectTwo(await get('/api/v1/projects', [`X-Svc-API-Key: ${t.ownerKey}`, `X-API-Key: ${t.ownerKey}`]));
    expectTwo(await get('/api/v1/projects', [`X-API-Key: ${t.ownerKey}`, `Authorization: Bearer ${t.ownerKey}`]));
  });

  it('one credential header works (control)', async () => {
    expect((await get('/api/v1/projects', [`X-Svc-API-Key: ${t.ownerKey}`])).status).toBe(200);
    expect((await get('/api/v1/projects', [`Authorization: ApiKey ${t.ownerKey}`])).status).toBe(200);
  });

  it('inject: repeated X-Svc-API-Key given as an array is refused too', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/projects', headers: { 'x-svc-api-key': [t.ownerKey, t.ownerKey] as never } });
    expect(res.statusCode, res.body).toBe(400);
  });
});
