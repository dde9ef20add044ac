/**
 * "A 2xx means the points are committed: a `kill -9` right after loses none of them."
 * The real server in a child process, real HTTP, SIGKILL right after the last 2xx, a restart on the
 * same data dir, and the points read back through POST /api/v1/metrics/aggregate.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../testing/server-process.js';
import { gauge, histogram, ns, num, protobuf, request } from './test-fixtures.js';

const KEY = 'svc_durability_test_key_0123456789';
const PROJECT = 'durability-project';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-durability-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const start = () =>
  startServer({ SVC_DATA_DIR: dataDir, SVC_INIT_API_KEY: KEY, SVC_INIT_PROJECT_ID: PROJECT });

const T0 = Math.floor((Date.now() - 30 * 60_000) / 60_000) * 60_000;
const BATCHES = 30;
const PER_BATCH = 500;

function batch(b: number): Buffer {
  const points = Array.from({ length: PER_BATCH }, (_, i) => num(T0 + b * PER_BATCH + i, i, { shard: String(i % 50) }));
  return protobuf(
    request({ 'service.name': 'durable' }, [
      gauge('durable.points', points),
      // delta temporality: each export adds its 3 observations
      histogram('durable.hist', [{ timeUnixNano: ns(T0 + b), count: '3', sum: 3, bucketCounts: ['1', '2'], explicitBounds: [1] }], 1),
    ]),
  );
}

function post(base: string, body: Buffer) {
  return fetch(`${base}/v1/metrics?project_id=${PROJECT}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf', 'x-svc-api-key': KEY },
    body: new Uint8Array(body),
  });
}

describe('durability across kill -9', () => {
  it('every point of every 2xx is there after SIGKILL and a restart', { timeout: 120_000 }, async () => {
    const bodies = Array.from({ length: BATCHES }, (_, b) => batch(b));
    const first = await start();
    children.push(first.child);
    // Half one by one, half in concurrent bursts (several requests per group commit).
    for (let b = 0; b < BATCHES / 2; b++) expect((await post(first.base, bodies[b])).status).toBe(200);
    for (let b = BATCHES / 2; b < BATCHES; b += 5) {
      const burst = await Promise.all(bodies.slice(b, b + 5).map((body) => post(first.base, body)));
      expect(burst.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    }
    first.child.kill('SIGKILL'); // right after the last 2xx: no graceful shutdown, no checkpoint
    await new Promise((r) => first.child.once('exit', r));
    expect(first.child.signalCode).toBe('SIGKILL');

    const second = await start();
    children.push(second.child);
    try {
      const aggregate = async (metric_name: string) => {
        const res = await fetch(`${second.base}/api/v1/metrics/aggregate?project_id=${PROJECT}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-svc-api-key': KEY },
          body: JSON.stringify({
            metric_name,
            aggregation: 'count',
            step: '1d',
            time_range: { start: new Date(T0 - 86_400_000).toISOString(), end: new Date(T0 + 86_400_000).toISOString() },
          }),
        });
        expect(res.status).toBe(200);
        const body = (await res.json()) as { series: { points: { value: number }[] }[] };
        return body.series.flatMap((s) => s.points).reduce((a, p) => a + p.value, 0);
      };
      expect(await aggregate('durable.points')).toBe(BATCHES * PER_BATCH);
      expect(await aggregate('durable.hist')).toBe(BATCHES * 3); // a histogram's count is its observations
    } finally {
      second.child.kill('SIGTERM');
      await new Promise((r) => second.child.once('exit', r));
    }
    expect(second.child.exitCode).toBe(0); // graceful stop: writer stopped before the store closed
  });
});
