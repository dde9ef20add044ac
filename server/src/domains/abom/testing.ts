/** Test helpers of the signed-artifact tests: a project with a key and a declared asset, and hex SHA-256. */
import { createHash } from 'node:crypto';
import { projectWithKey, type TestApp } from '../../testing/app.js';

export type Json = Record<string, any>;
export const sha256hex = (c: string) => createHash('sha256').update(c).digest('hex');

/** A fresh project, a key with agents:read and agents:write bound to it, and one asset declared in it. */
export async function projectWithAsset(t: TestApp) {
  const p = await projectWithKey(t, ['agents:read', 'agents:write']);
  const call = (method: 'GET' | 'POST', url: string, payload?: unknown, key: string | null = p.key) =>
    t.call({ method, url: `/api/v1${url}`, key, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const ok = async (method: 'GET' | 'POST', url: string, payload?: unknown) => {
    const res = await call(method, url, payload);
    if (res.statusCode >= 300) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json() as Json;
  };
  const assetId = (await ok('POST', '/assets', { name: `bot-${Math.random()}` })).id as string;
  return { ...p, call, ok, assetId };
}
