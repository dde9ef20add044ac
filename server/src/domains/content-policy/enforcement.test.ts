/**
 * The grid enforced, cell by cell: every class that recorded telemetry can carry, at `store` (sent
 * through the real OpenTelemetry SDKs: a span with a span event, a log record, a metric data point) and
 * at `read` (through HTTP), with each of the three decisions; `export` and `judge_transfer` through the
 * decision function (content-policy.test.ts covers all 24 cells there). Privacy by default: a project
 * without a policy stores nothing of any class.
 */
import { SpanKind } from '@opentelemetry/api';
import { OTLPMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { gridRules, setContentPolicy } from '../../testing/content-policy.js';
import { sendLogs } from '../../testing/otel-agent-run.js';
import { CONTENT_KEYS } from '../content/content-keys.js';
import { byteSize, CONTENT_CLASSES, DECISIONS, type ContentClass, type Decision } from './model.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await testApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => t?.close());

type Obj = Record<string, any>;
const SCOPES = ['ingest:write', 'traces:read', 'logs:read', 'metrics:read', 'agents:content:read', 'governance:read', 'governance:write'];
/** One content key per class that telemetry carries (the first row of the table for the class). */
const KEY_OF: Partial<Record<ContentClass, string>> = Object.fromEntries(
  CONTENT_CLASSES.flatMap((c) => {
    const r = CONTENT_KEYS.find((k) => k.contentClass === c && k.match === 'key');
    return r ? [[c, r.key]] : [];
  }),
);
const CARRIED = Object.keys(KEY_OF) as ContentClass[];
const VALUE = 'Ada asked: what is my balance? (ünïcode)';
const MARKER = `[content withheld by policy: ${byteSize(VALUE)} bytes]`;
/** Values refused per send: span, span event, log record, and the metric point twice (the SDK exports on flush and again on shutdown). */
const REFUSED_VALUES = 5;
const get = (key: string, url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key });

/** A span (with a span event), a log record and a metric point, each carrying `attrKey`, through the SDKs. */
async function sendAll(key: string, attrKey: string, metric: string) {
  const headers = { 'x-svc-api-key': key };
  const tp = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'cp' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${base}/v1/traces`, headers }))],
  });
  const span = tp.getTracer('cp').startSpan('chat', { kind: SpanKind.CLIENT, attributes: { 'gen_ai.operation.name': 'chat', [attrKey]: VALUE } });
  span.addEvent('gen_ai.content', { [attrKey]: VALUE, kept: 'yes' });
  span.end();
  await tp.forceFlush();
  await tp.shutdown();
  await sendLogs({ base, format: 'protobuf', key }, (logger) => logger.emit({ body: 'hello', attributes: { [attrKey]: VALUE, kept: 'yes' } }));
  const reader = new PeriodicExportingMetricReader({ exporter: new OTLPMetricExporter({ url: `${base}/v1/metrics`, headers }), exportIntervalMillis: 3_600_000 });
  const mp = new MeterProvider({ resource: resourceFromAttributes({ 'service.name': 'cp' }), readers: [reader] });
  mp.getMeter('cp').createCounter(metric).add(1, { [attrKey]: VALUE, kept: 'yes' });
  await mp.forceFlush();
  await mp.shutdown();
  return span.spanContext().traceId;
}

/** What a content reader gets back of `attrKey` on each path. */
async function readAll(key: string, traceId: string, attrKey: string, metric: string) {
  const tr = await get(key, `/traces/${traceId}`);
  expect(tr.statusCode, tr.body).toBe(200);
  const s = tr.json().spans[0];
  const logs = (await get(key, '/logs?since=1h')).json().logs as Obj[];
  const labels = (await get(key, `/metrics/${metric}/labels`)).json().labels as Obj[];
  return {
    span: s.attributes[attrKey],
    spanWithheld: s.withheld_attribute_keys ?? [],
    event: s.events[0].attributes[attrKey],
    eventWithheld: s.events[0].withheld_attribute_keys ?? [],
    log: logs[0].attributes[attrKey],
    logWithheld: logs[0].withheld_attribute_keys ?? [],
    label: labels.find((l) => l.name === attrKey)?.values,
  };
}

const expected = (d: Decision) => (d === 'allow' ? VALUE : d === 'allow_metadata' ? MARKER : undefined);

async function refusals(key: string, projectId: string, q: string) {
  return (await get(key, `/projects/${projectId}/content-policy/refusals?${q}`)).json().refusals as Obj[];
}

describe.each(CARRIED)('class %s', (cls) => {
  const attrKey = KEY_OF[cls]!;
  /** A project whose grid is `allow` but for this class at `boundary`; content sent through the SDKs and read back; every value the cell let through checked. */
  async function oneCell(boundary: 'store' | 'read', d: Decision) {
    const { projectId, key } = await projectWithKey(t, SCOPES);
    await setContentPolicy(t, projectId, gridRules((c, b) => (c === cls && b === boundary ? d : 'allow')));
    const metric = `cp_${boundary}_${cls}_${d}`;
    const traceId = await sendAll(key, attrKey, metric);
    const r = await readAll(key, traceId, attrKey, metric);
    expect([r.span, r.event, r.log]).toEqual([expected(d), expected(d), expected(d)]);
    return { projectId, key, traceId, r };
  }

  it.each(DECISIONS)(`store cell = %s: "recorded at all" (allow_metadata keeps existence and size only, never bytes)`, async (d) => {
    const { projectId, key, r } = await oneCell('store', d);
    // Not stored is not "withheld on read": there is nothing to withhold.
    expect([...r.spanWithheld, ...r.eventWithheld, ...r.logWithheld]).toEqual([]);
    expect(r.label).toEqual(d === 'deny' ? undefined : [expected(d)]);
    // What is at rest: the bytes are nowhere in the telemetry store unless allowed.
    const rows = await t.duck.read(async (c) => (await c.runAndReadAll(`SELECT count(*) FROM spans WHERE project_id = '${projectId}' AND attributes LIKE '%what is my balance%'`)).getRows());
    expect(Number(rows[0][0])).toBe(d === 'allow' ? 1 : 0);
    const audit = await refusals(key, projectId, 'boundary=store');
    if (d === 'allow') expect(audit).toEqual([]);
    else expect(audit).toEqual([expect.objectContaining({ content_class: cls, boundary: 'store', decided_by: 'policy', decision: d, count: REFUSED_VALUES })]);
  });

  it.each(DECISIONS)(`read cell = %s: "served to a reader" only with agents:content:read AND the read cell`, async (d) => {
    const { projectId, key, traceId, r } = await oneCell('read', d);
    const named = d === 'deny' ? [attrKey] : [];
    expect([r.spanWithheld, r.eventWithheld, r.logWithheld]).toEqual([named, named, named]);
    expect(r.label).toEqual(d === 'deny' ? undefined : [expected(d)]);
    // A filter or group on the key needs the class read in full.
    const filter = await get(key, `/traces?attr=${encodeURIComponent(`${attrKey}=x`)}`);
    expect(filter.statusCode).toBe(d === 'allow' ? 200 : 403);
    // Without the scope the policy is not even asked: withheld, and not counted as a policy refusal.
    const narrow = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'n', scopes: ['traces:read'], project_id: projectId } });
    const plain = (await get(narrow.json().key, `/traces/${traceId}`)).json().spans[0];
    expect(plain.attributes[attrKey]).toBeUndefined();
    expect(plain.withheld_attribute_keys).toEqual([attrKey]);
    const audit = await refusals(key, projectId, 'boundary=read');
    if (d === 'allow') expect(audit).toEqual([]);
    else expect(audit).toEqual([expect.objectContaining({ content_class: cls, boundary: 'read', decided_by: 'policy', decision: d })]);
  });
});

describe('export and judge_transfer: the decision function later issues call', () => {
  it.each(CONTENT_CLASSES)('%s: each cell decides independently of the read cell ("the read cell and the judge_transfer cell are independent")', async (cls) => {
    const { projectId } = await projectWithKey(t, SCOPES);
    await setContentPolicy(t, projectId, gridRules((c, b) => (c !== cls ? 'deny' : b === 'export' ? 'allow_metadata' : b === 'judge_transfer' ? 'allow' : 'deny')));
    expect(await t.ctx.contentPolicy.decide(projectId, cls, 'export')).toEqual({ decision: 'allow_metadata', decided_by: 'policy' });
    expect(await t.ctx.contentPolicy.decide(projectId, cls, 'judge_transfer')).toEqual({ decision: 'allow', decided_by: 'policy' });
    expect(await t.ctx.contentPolicy.decide(projectId, cls, 'read')).toEqual({ decision: 'deny', decided_by: 'policy' });
  });
});

describe('privacy by default: "A project with no policy is answered as a fully-denied grid", store included', () => {
  it('content sent to a project without a policy is not stored at all; the audit says no_policy', async () => {
    const { projectId, key } = await projectWithKey(t, SCOPES);
    const traceId = await sendAll(key, 'gen_ai.prompt', 'cp_default');
    await setContentPolicy(t, projectId, gridRules('allow'));
    const r = await readAll(key, traceId, 'gen_ai.prompt', 'cp_default');
    expect([r.span, r.event, r.log, r.label]).toEqual([undefined, undefined, undefined, undefined]);
    const audit = await refusals(key, projectId, 'boundary=store');
    expect(audit).toEqual([expect.objectContaining({ content_class: 'model_transcript', boundary: 'store', decided_by: 'no_policy', decision: 'deny', count: REFUSED_VALUES })]);
  });

  it('classes no telemetry key carries (replay_dom, person_properties, group_properties) have no store or read path here: the table names none', () => {
    expect(CONTENT_CLASSES.filter((c) => !CARRIED.includes(c)).sort()).toEqual(['group_properties', 'person_properties', 'replay_dom']);
  });
});
