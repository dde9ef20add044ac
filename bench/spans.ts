/**
 * The spans section of `npm run bench` (`--only=spans`): OTLP protobuf ExportTraceServiceRequests of
 * agent runs with realistic gen_ai attributes, posted to /v1/traces with 1, 4 and 16 requests in flight.
 * Every 2xx is committed (group commit), so spans/s is committed spans per second. The client shares the
 * process (and the 2 cores) with the server.
 */
import { randomBytes } from 'node:crypto';
import { createRequire } from 'node:module';
import { ingestRun, otlpPoster, perSecond, table } from './lib.js';

const require = createRequire(import.meta.url);
const root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
const ExportTraceReq = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;

const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const int = (key: string, v: number) => ({ key, value: { intValue: v } });

const MODELS = ['gpt-4o-mini', 'claude-sonnet-4', 'gemini-2.0-flash'];
const TOOLS = ['search_docs', 'run_sql', 'send_email', 'fetch_url'];

/**
 * One agent run of 10 spans: invoke_agent root, 4 chat calls, 3 tool calls (one failed), a retrieval and a
 * memory upsert; the root carries conversation and turn ids, the first chat a context.assembly event.
 */
function run(baseNs: bigint, agent: number): object[] {
  const traceId = randomBytes(16);
  const rootId = randomBytes(8);
  const conv = `conv-${agent}-${randomBytes(4).toString('hex')}`;
  const t = (ms: number) => (baseNs + BigInt(ms) * 1_000_000n).toString();
  const spans: object[] = [
    {
      traceId,
      spanId: rootId,
      name: `invoke_agent support-bot-${agent % 20}`,
      kind: 1,
      startTimeUnixNano: t(0),
      endTimeUnixNano: t(9_000),
      attributes: [
        str('gen_ai.operation.name', 'invoke_agent'),
        str('gen_ai.agent.name', `support-bot-${agent % 20}`),
        str('gen_ai.agent.id', `agent-${agent % 20}`),
        str('gen_ai.conversation.id', conv),
        str('svc.turn.id', `turn-${agent % 7}`),
        str('svc.agent.run.status', 'completed'),
        str('gen_ai.provider.name', 'openai'),
      ],
    },
  ];
  for (let i = 0; i < 9; i++) {
    const op = i < 4 ? 'chat' : i < 7 ? 'execute_tool' : i === 7 ? 'retrieval' : 'upsert_memory';
    const attributes =
      op === 'chat'
        ? [
            str('gen_ai.operation.name', 'chat'),
            str('gen_ai.provider.name', 'openai'),
            str('gen_ai.request.model', MODELS[i % 3]),
            str('gen_ai.response.model', `${MODELS[i % 3]}-2025-01-01`),
            int('gen_ai.usage.input_tokens', 1200 + i * 37),
            int('gen_ai.usage.output_tokens', 300 + i * 11),
            str('gen_ai.response.status', 'completed'),
            str('gen_ai.conversation.id', conv),
          ]
        : op === 'execute_tool'
          ? [
              str('gen_ai.operation.name', 'execute_tool'),
              str('gen_ai.tool.name', TOOLS[i % 4]),
              str('gen_ai.tool.call.id', `call_${randomBytes(6).toString('hex')}`),
              str('gen_ai.response.status', i === 6 ? 'failed' : 'completed'),
            ]
          : op === 'retrieval'
            ? [str('gen_ai.operation.name', 'retrieval'), str('gen_ai.data_source.id', 'kb-main'), str('gen_ai.response.status', 'completed')]
            : [
                str('gen_ai.operation.name', 'upsert_memory'),
                str('gen_ai.data_source.id', 'mem-store'),
                str('svc.memory.item.id', `item-${agent}`),
                str('svc.memory.item.provenance', 'user_message'),
                str('svc.memory.trust_label', 'MEMORY_TRUST_LABEL_TRUSTED'),
              ];
    spans.push({
      traceId,
      spanId: randomBytes(8),
      parentSpanId: rootId,
      name: op === 'chat' ? `chat ${MODELS[i % 3]}` : op === 'execute_tool' ? `execute_tool ${TOOLS[i % 4]}` : op,
      kind: op === 'chat' ? 3 : 1,
      startTimeUnixNano: t(i * 1000),
      endTimeUnixNano: t(i * 1000 + 900),
      attributes,
      events:
        i === 0
          ? [
              {
                name: 'context.assembly',
                timeUnixNano: t(1),
                attributes: [
                  int('svc.context.assembly.budget_tokens', 8000),
                  int('svc.context.assembly.assembled_tokens', 6100),
                  { key: 'svc.context.assembly.source_ids', value: { arrayValue: { values: [{ stringValue: 'doc-1' }, { stringValue: 'doc-2' }] } } },
                ],
              },
            ]
          : [],
      status: { code: i === 6 ? 2 : 0 },
    });
  }
  return spans;
}

/** An OTLP protobuf traces request of `spans` spans of agent runs (10 spans each). */
export function spanBody(spans: number, seq: number): Uint8Array {
  const baseNs = BigInt(Date.now() - 3_600_000) * 1_000_000n + BigInt(seq) * 1_000_000_000n;
  const all: object[] = [];
  for (let a = 0; all.length < spans; a++) all.push(...run(baseNs, seq * 1000 + a));
  const msg = ExportTraceReq.fromObject({
    resourceSpans: [
      {
        resource: {
          attributes: [
            str('service.name', 'support-agents'),
            str('deployment.environment.name', 'prod'),
            str('host.name', 'bench-host'),
            str('telemetry.sdk.language', 'nodejs'),
            str('telemetry.sdk.version', '2.12.0'),
          ],
        },
        scopeSpans: [{ scope: { name: 'bench-agent', version: '1.0.0' }, spans: all.slice(0, spans) }],
      },
    ],
  });
  return ExportTraceReq.encode(msg).finish();
}

export async function benchSpans(address: string, key: string, projectId: string, quick: boolean): Promise<void> {
  const post = otlpPoster(address, '/v1/traces', projectId, key);
  const rows: (string | number)[][] = [];
  const runs: [number, number][] = [
    [1_000, 1],
    [1_000, 4],
    [1_000, 16],
    [5_000, 1],
    [5_000, 4],
    [5_000, 16],
  ];
  for (const [batch, inFlight] of runs) {
    const requests = quick ? 16 : batch === 1_000 ? 240 : 64;
    const bodies = Array.from({ length: requests }, (_, i) => spanBody(batch, i));
    const warmUp = Array.from({ length: 10 }, (_, i) => spanBody(batch, 10_000 + i));
    const { secs, p50, p99 } = await ingestRun(post, bodies, inFlight, warmUp);
    const kb = Math.round(bodies.reduce((a, b) => a + b.length, 0) / bodies.length / 1024);
    rows.push([batch, `${kb} KiB`, inFlight, requests, perSecond(batch * requests, secs), p50.toFixed(1), p99.toFixed(1)]);
  }
  table(
    'OTLP protobuf /v1/traces ingest (agent runs of 10 spans, gen_ai attributes; after 10 warm-up requests; every 2xx is committed)',
    ['spans/request', 'body', 'in flight', 'requests', 'spans/s', 'p50 ms', 'p99 ms'],
    rows,
  );
}

/**
 * What keeping the summaries costs span ingest (`--only=spans`): the same requests (1,000 spans, 4 in flight)
 * posted with the summary upkeep on and, for the bench alone, off (its `update` replaced by one that folds
 * nothing), in interleaved rounds so that the machine's drift and the tables' growth fall on both alike.
 * Answers the median spans/s and the process CPU per span (client and server) of each.
 */
export async function benchSummaryUpkeep(address: string, key: string, projectId: string, quick: boolean): Promise<void> {
  const { SummaryUpkeep } = await import('../server/src/storage/telemetry/duckdb/summaries-writer.js');
  const { threadCpu } = await import('./peer-proc.js');
  const update = SummaryUpkeep.prototype.update;
  const post = otlpPoster(address, '/v1/traces', projectId, key);
  const rounds = quick ? 2 : 40;
  const requests = quick ? 16 : 20;
  type Round = { rate: number; cpuUs: number; mainUs: number };
  const seen = { on: [] as Round[], off: [] as Round[] };
  const mainCpu = () => [...threadCpu(process.pid)].filter(([k]) => k.endsWith('(main thread)')).reduce((a, [, v]) => a + v, 0);
  let seq = 50_000;
  try {
    for (let r = 0; r < rounds; r++) {
      for (const mode of r % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const)) {
        SummaryUpkeep.prototype.update = mode === 'on' ? update : async () => () => undefined;
        const bodies = Array.from({ length: requests }, () => spanBody(1_000, seq++));
        const warmUp = Array.from({ length: 4 }, () => spanBody(1_000, seq++));
        const cpu0 = process.cpuUsage();
        const main0 = mainCpu();
        const { secs } = await ingestRun(post, bodies, 4, warmUp);
        const cpu = process.cpuUsage(cpu0);
        const spans = (requests + 4) * 1_000;
        seen[mode].push({ rate: (1_000 * requests) / secs, cpuUs: (cpu.user + cpu.system) / spans, mainUs: ((mainCpu() - main0) * 1e6) / spans });
      }
    }
  } finally {
    SummaryUpkeep.prototype.update = update;
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const quartiles = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return [s[Math.floor(s.length / 4)], s[Math.floor((3 * s.length) / 4)]];
  };
  // Each round ran both modes back to back: the cost is read round by round, so the machine's slow drifts cancel.
  const costs = seen.on.map((on, i) => (1 - on.rate / seen.off[i].rate) * 100);
  const [q1, q3] = quartiles(costs);
  const row = (label: string, xs: Round[], cost: string) => [
    label,
    Math.round(median(xs.map((x) => x.rate))).toLocaleString('en-US'),
    median(xs.map((x) => x.cpuUs)).toFixed(1),
    median(xs.map((x) => x.mainUs)).toFixed(1),
    cost,
  ];
  table(
    `Summary upkeep's cost to span ingest (1,000 spans/request, 4 in flight; ${rounds} rounds of ${requests} requests in each mode, back to back; medians; CPU is the bench process's, client included)`,
    ['summaries', 'spans/s', 'CPU µs/span', 'main thread µs/span', 'throughput cost (median of rounds; quartiles)'],
    [row('kept (as served)', seen.on, `${median(costs).toFixed(1)} % (${q1.toFixed(1)} to ${q3.toFixed(1)})`), row('not kept (bench only)', seen.off, '—')],
  );
}
