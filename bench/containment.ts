/**
 * `npm run bench -- --only=containment`: what the containment check costs the ingest path. Every
 * authenticated request reads, with its key, whether an active containment holds the key's telemetry
 * writes (api-keys-store.ts `findByHash`). Measured in one run, alternating: with no containment stored,
 * with 1,000 active freezes on other keys, and with those 1,000 released; the per-request key check
 * (`authenticate`) in microseconds, metric ingest (1,000 points/request) in points/s and span ingest
 * (1,000 spans/request) in spans/s.
 */
import type { AppContext } from '../server/src/context.js';
import { newKeySecret, keyPrefix } from '../server/src/domains/api-keys/secret.js';
import { newQuarantine } from '../server/src/domains/quarantines/store.js';
import { ingestRun, otlpPoster, perSecond, table } from './lib.js';
import { spanBody } from './spans.js';

const HOLDS = 1_000;

export async function benchContainment(o: {
  ctx: AppContext;
  address: string;
  projectId: string;
  otlpBody: (points: number, seq: number) => Uint8Array;
  quick: boolean;
}): Promise<void> {
  const { ctx, projectId } = o;
  const now = ctx.clock.now().toISOString();
  const orgId = (await ctx.control.assets.liveProjects()).find((p) => p.id === projectId)!.orgId;
  const mint = async (name: string) => {
    const secret = newKeySecret();
    const id = ctx.ids.uuid();
    await ctx.control.apiKeys.insert({
      id,
      orgId,
      projectId,
      name,
      keyHash: ctx.keyHash.hash(secret),
      keyPrefix: keyPrefix(secret),
      scopes: ['ingest:write'],
      status: 'active',
      expiresAt: '2999-01-01T00:00:00.000Z',
      lastUsedAt: null,
      createdAt: now,
      revokedAt: null,
      userId: null,
      createdByApiKeyId: null,
      createdByState: 'system',
    });
    return { id, secret };
  };
  const agent = await mint('bench agent');
  const post = otlpPoster(o.address, '/v1/metrics', projectId, agent.secret);
  const postSpans = otlpPoster(o.address, '/v1/traces', projectId, agent.secret);

  const holds: { quarantineId: string; apiKeyId: string }[] = [];
  const setHolds = async (releasedAt: string | null) => {
    for (const h of holds)
      await ctx.control.quarantines.putOutcome({ ...h, effect: 'freeze', state: 'verified', detailCode: null, enforcedAt: now, releasedAt });
  };

  const calls = o.quick ? 5_000 : 20_000;
  const checkMicros = async () => {
    for (let i = 0; i < 500; i++) await ctx.apiKeys.authenticate(agent.secret);
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) await ctx.apiKeys.authenticate(agent.secret);
    return ((performance.now() - t0) * 1000) / calls;
  };
  const requests = o.quick ? 40 : 300;
  let seq = 10_000;
  const ingest = async (inFlight: number) => {
    const bodies = Array.from({ length: requests }, () => o.otlpBody(1_000, seq++));
    const warmUp = Array.from({ length: 5 }, () => o.otlpBody(1_000, seq++));
    const { secs, p50 } = await ingestRun(post, bodies, inFlight, warmUp);
    return { rate: perSecond(1_000 * requests, secs), p50: p50.toFixed(1) };
  };
  const ingestSpans = async () => {
    const bodies = Array.from({ length: requests / 2 }, () => spanBody(1_000, seq++));
    const { secs } = await ingestRun(postSpans, bodies, 4, [spanBody(1_000, seq++)]);
    return perSecond(1_000 * (requests / 2), secs);
  };

  const rows: (string | number)[][] = [];
  const measure = async (label: string) => {
    const micros = await checkMicros();
    const one = await ingest(1);
    const four = await ingest(4);
    const spans = await ingestSpans();
    rows.push([label, micros.toFixed(1), one.rate, one.p50, four.rate, four.p50, spans]);
  };
  await measure('no containment stored');
  // Then 1,000 other keys, each frozen by its own active containment (written through the store, as approval writes them).
  for (let i = 0; i < HOLDS; i++) {
    const other = await mint(`other ${i}`);
    const quarantineId = ctx.ids.uuid();
    await ctx.control.quarantines.insert(
      newQuarantine({
        id: quarantineId,
        orgId,
        projectId,
        status: 'active',
        action: 'freeze_writes',
        targetKind: 'api_key_id',
        target: other.id,
        reason: 'bench',
        environment: null,
        requestId: null,
        requestedBy: { userId: null, apiKeyId: null },
        requestedAt: now,
      }),
    );
    holds.push({ quarantineId, apiKeyId: other.id });
  }
  for (let round = 0; round < (o.quick ? 1 : 2); round++) {
    await setHolds(null);
    await measure('1,000 active holds on other keys');
    await setHolds(new Date().toISOString());
    await measure('1,000 holds on other keys, released');
  }
  table(
    `Containment check on the ingest path (${HOLDS.toLocaleString('en-US')} containments of other keys; metric ingest 1,000 points/request, ${requests} requests; span ingest 1,000 spans/request, ${requests / 2} requests)`,
    ['holds', 'key check µs', 'points/s, 1 in flight', 'p50 ms', 'points/s, 4 in flight', 'p50 ms', 'spans/s, 4 in flight'],
    rows,
  );
}
