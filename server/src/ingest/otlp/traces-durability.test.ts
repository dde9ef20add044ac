/**
 * "A 2xx means the spans are committed: a `kill -9` right after loses none of them."
 * The real server in a child process, real HTTP to /v1/traces and /v1/logs, SIGKILL right after the last
 * 2xx, a restart on the same data dir (which replays the WAL) stopped gracefully, then the DuckDB file
 * read directly: every span, span event, sighting and log record of every 2xx is there.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../testing/server-process.js';
import { ns } from './test-fixtures.js';
import { logRequest, logsProtobuf, span, traceId, traceRequest, tracesProtobuf } from './traces-fixtures.js';

const KEY = 'svc_traces_durability_key_0123456789';
const PROJECT = 'traces-durability-project';

const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-traces-durability-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(dataDir, { recursive: true, force: true });
});

const start = () => startServer({ SVC_DATA_DIR: dataDir, SVC_INIT_API_KEY: KEY, SVC_INIT_PROJECT_ID: PROJECT });

const T0 = Date.now() - 30 * 60_000;
const BATCHES = 24;
const RUNS_PER_BATCH = 40; // 5 spans each

function batch(b: number): Buffer {
  const spans = [];
  for (let r = 0; r < RUNS_PER_BATCH; r++) {
    const tid = traceId();
    spans.push(span({ traceId: tid, startMs: T0 + b, attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.id': `agent-${r % 4}` } }));
    for (let i = 0; i < 4; i++)
      spans.push(
        span({
          traceId: tid,
          startMs: T0 + b + i,
          attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.usage.input_tokens': 10 },
          events: i === 0 ? [{ name: 'context.cache', attributes: { 'svc.context.cache.outcome': 'hit' } }] : [],
        }),
      );
  }
  return tracesProtobuf(traceRequest({ 'service.name': 'durable' }, spans));
}

const post = (base: string, signal: 'traces' | 'logs', body: Buffer) =>
  fetch(`${base}/v1/${signal}?project_id=${PROJECT}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-protobuf', 'x-svc-api-key': KEY },
    body: new Uint8Array(body),
  });

async function count(sql: string): Promise<number> {
  const instance = await DuckDBInstance.create(path.join(dataDir, 'telemetry.duckdb'));
  try {
    const c = await instance.connect();
    const n = Number((await c.runAndReadAll(sql)).getRows()[0][0]);
    c.closeSync();
    return n;
  } finally {
    instance.closeSync();
  }
}

describe('traces and logs durability across kill -9', () => {
  it('every span, event, sighting and log record of every 2xx is there after SIGKILL and a restart', { timeout: 120_000 }, async () => {
    const bodies = Array.from({ length: BATCHES }, (_, b) => batch(b));
    const logBody = logsProtobuf(logRequest({ 'service.name': 'durable' }, Array.from({ length: 200 }, (_, i) => ({ timeUnixNano: ns(T0 + i), body: { stringValue: `line ${i}` } }))));
    const first = await start();
    children.push(first.child);
    // Half one by one, half in concurrent bursts (several requests per group commit), logs alongside.
    for (let b = 0; b < BATCHES / 2; b++) expect((await post(first.base, 'traces', bodies[b])).status).toBe(200);
    for (let b = BATCHES / 2; b < BATCHES; b += 4) {
      const burst = await Promise.all([...bodies.slice(b, b + 4).map((body) => post(first.base, 'traces', body)), post(first.base, 'logs', logBody)]);
      expect(burst.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    }
    first.child.kill('SIGKILL'); // right after the last 2xx: no graceful shutdown, no checkpoint
    await new Promise((r) => first.child.once('exit', r));
    expect(first.child.signalCode).toBe('SIGKILL');

    const second = await start(); // opens the store: the WAL is replayed
    children.push(second.child);
    second.child.kill('SIGTERM');
    await new Promise((r) => second.child.once('exit', r));
    expect(second.child.exitCode).toBe(0); // graceful stop: the writers stopped before the store closed

    const spans = BATCHES * RUNS_PER_BATCH * 5;
    expect(await count(`SELECT count(*) FROM spans WHERE project_id = '${PROJECT}'`)).toBe(spans);
    expect(await count(`SELECT count(DISTINCT (trace_id, span_id)) FROM spans WHERE project_id = '${PROJECT}'`)).toBe(spans);
    expect(await count(`SELECT count(*) FROM span_events WHERE project_id = '${PROJECT}' AND category = 'context'`)).toBe(BATCHES * RUNS_PER_BATCH);
    expect(await count(`SELECT sum(sighting_count) FROM agent_sightings WHERE project_id = '${PROJECT}'`)).toBe(BATCHES * RUNS_PER_BATCH);
    expect(await count(`SELECT count(*) FROM logs WHERE project_id = '${PROJECT}'`)).toBe((BATCHES / 2 / 4) * 200);
  });
});
