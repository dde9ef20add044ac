import http from "node:http";
/** What the bench sections share: the OTLP post, the ingest loop, percentiles and the printed tables. */

/** Posts a protobuf OTLP request to `path` (/v1/metrics, /v1/traces) of the project; anything but 200 throws. */
export function otlpPoster(address: string, path: string, projectId: string, key: string) {
  return async (body: Uint8Array): Promise<void> => {
    const res = await fetch(`${address}${path}?project_id=${projectId}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf', 'x-svc-api-key': key },
      body: body as unknown as ArrayBuffer,
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}`);
  };
}

/** The `p`th percentile of ascending `sorted` (nearest rank, floor). */
export function pct(sorted: number[], p: number) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** What every table's title ends with (the engine that ran: bench/engine.ts); empty when unset. */
let titleSuffix = '';
export function setTableSuffix(suffix: string) {
  titleSuffix = suffix;
}

export function table(title: string, header: string[], rows: (string | number)[][]) {
  const all = [header, ...rows.map((r) => r.map(String))];
  const w = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  console.log(`\n${title}${titleSuffix ? ` [${titleSuffix}]` : ''}`);
  for (const [i, r] of all.entries()) {
    console.log(r.map((c, j) => c.padEnd(w[j])).join('  '));
    if (i === 0) console.log(w.map((n) => '-'.repeat(n)).join('  '));
  }
}

/**
 * Posts `bodies` with `inFlight` requests at a time, after posting each of `warmUp` (new series and the JIT
 * are not what is measured). Answers the wall time and the p50 and p99 request latencies (ms).
 */
export async function ingestRun(
  post: (body: Uint8Array) => Promise<void>,
  bodies: Uint8Array[],
  inFlight: number,
  warmUp: Uint8Array[],
): Promise<{ secs: number; p50: number; p99: number }> {
  for (const body of warmUp) await post(body);
  const started = performance.now();
  let next = 0;
  const latencies: number[] = [];
  await Promise.all(
    Array.from({ length: inFlight }, async () => {
      while (next < bodies.length) {
        const body = bodies[next++];
        const t0 = performance.now();
        await post(body);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  const secs = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  return { secs, p50: pct(latencies, 50), p99: pct(latencies, 99) };
}

/** Items per second, for a table cell. */
export const perSecond = (items: number, secs: number) => Math.round(items / secs).toLocaleString('en-US');

/**
 * A keep-alive HTTP client for many concurrent clients, one connection each (`node:http` with a socket per
 * client): about half the client CPU of `fetch` per request, which shares the cores with the server measured.
 */
export function keepAliveClient(base: string, connections: number) {
  const url = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections, maxFreeSockets: connections });
  return {
    request(method: string, path: string, headers: Record<string, string>, body?: Uint8Array | string): Promise<{ status: number; bytes: number }> {
      return new Promise((resolve, reject) => {
        const req = http.request({ host: url.hostname, port: url.port, method, path, headers: body === undefined ? headers : { ...headers, 'content-length': String(Buffer.byteLength(body)) }, agent }, (res) => {
          let bytes = 0;
          res.on('data', (d: Buffer) => (bytes += d.length));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
          res.on('error', reject);
        });
        req.on('error', reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}
