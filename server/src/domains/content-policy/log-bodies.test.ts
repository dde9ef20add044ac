/**
 * Log bodies that are recorded content (docs/content-policy.md "Log bodies"): a GenAI event's body
 * (`gen_ai.user.message`, `gen_ai.tool.message`, ... named by the record's `event_name` or its
 * `event.name` attribute) is governed by the content policy like a content attribute of its class, at
 * `store` (sent through the real OpenTelemetry logs SDK), at `read` on every log route (list, body
 * search, context, patterns, aggregate, delete, the live tail) and by erasure. An ordinary
 * application log's body is not recorded content and is untouched.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { gridRules, setContentPolicy } from '../../testing/content-policy.js';
import { logsAtRest } from '../../testing/log-fixtures.js';
import { sendLogs } from '../../testing/otel-agent-run.js';
import { CONTENT_EVENTS } from '../content/content-keys.js';
import { WITHHELD_PATTERN } from '../logs/service.js';
import { byteSize, DECISIONS, type ContentClass, type Decision } from './model.js';

let t: TestApp;
let base: string;
beforeAll(async () => {
  t = await testApp();
  Object.assign(t.ctx.logTail.settings, { pollMs: 30 });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => t?.close());

type Obj = Record<string, any>;
const SCOPES = ['ingest:write', 'logs:read', 'logs:delete', 'agents:content:read', 'governance:read', 'governance:write'];
const USER = 'Ada asked: what is my balance? (ünïcode)';
const TOOL = '{"balance": 12, "owner": "Ada"}';
const PLAIN = 'cache warmed for Ada';
const marker = (v: string) => `[content withheld by policy: ${byteSize(v)} bytes]`;
const get = (key: string, url: string) => t.call({ method: 'GET', url: `/api/v1${url}`, key });

/** A user-message event (model_transcript), a tool-message event (tool_arguments) and a plain log, through the logs SDK. */
async function emit(key: string, format: 'protobuf' | 'json' = 'protobuf') {
  // Distinct times, so that every read's order is this one.
  const at = Date.now();
  await sendLogs({ base, format, key }, (logger) => {
    logger.emit({ timestamp: at - 3, eventName: 'gen_ai.user.message', body: USER, severityNumber: 9, attributes: { 'gen_ai.system': 'openai', 'enduser.id': 'u1', kept: 'yes' } });
    logger.emit({ timestamp: at - 2, eventName: 'gen_ai.tool.message', body: TOOL, severityNumber: 9, attributes: { 'gen_ai.system': 'openai', 'enduser.id': 'u1', kept: 'yes' } });
    logger.emit({ timestamp: at - 1, body: PLAIN, severityNumber: 13, attributes: { 'enduser.id': 'u1', kept: 'yes' } });
  });
}

/** The project's rows at rest, by body class (`plain` for an ordinary body). */
async function atRest(projectId: string): Promise<Record<string, { body: string | null; attributes: Obj; severity: number | null }>> {
  const rows = await logsAtRest(t.ctx.telemetry, projectId);
  return Object.fromEntries(rows.map((r) => [r.bodyClass ?? 'plain', { body: r.body, attributes: JSON.parse(r.attributes), severity: r.severityNumber }]));
}

const refusals = async (key: string, projectId: string, q: string) =>
  (await get(key, `/projects/${projectId}/content-policy/refusals?${q}`)).json().refusals as Obj[];

const expected = (d: Decision, v: string) => (d === 'allow' ? v : d === 'allow_metadata' ? marker(v) : null);

describe('the table: GenAI events whose body is recorded content', () => {
  it('names the GenAI message events and the inference-details event, each with its class', () => {
    expect(Object.fromEntries(CONTENT_EVENTS.map((e) => [e.eventName, e.contentClass]))).toEqual({
      'gen_ai.system.message': 'model_transcript',
      'gen_ai.user.message': 'model_transcript',
      'gen_ai.assistant.message': 'model_transcript',
      'gen_ai.choice': 'model_transcript',
      'gen_ai.tool.message': 'tool_arguments',
      'gen_ai.client.inference.operation.details': 'model_transcript',
    });
  });
});

describe('store: a GenAI event body is written as the store cell of its class says', () => {
  it.each(DECISIONS)('model_transcript store = %s (tool_arguments allowed): the record, its attributes and metadata stay; a plain body is untouched', async (d) => {
    const { projectId, key } = await projectWithKey(t, SCOPES);
    await setContentPolicy(t, projectId, gridRules((c, b) => (c === 'model_transcript' && b === 'store' ? d : 'allow')));
    await emit(key);
    const rest = await atRest(projectId);
    expect(Object.keys(rest).sort()).toEqual(['model_transcript', 'plain', 'tool_arguments']);
    // deny: absent (NULL), never an empty text; allow_metadata: existence and size only.
    expect(rest.model_transcript.body).toBe(expected(d, USER));
    expect(rest.model_transcript.attributes).toEqual({ 'gen_ai.system': 'openai', 'enduser.id': 'u1', kept: 'yes' });
    expect(rest.model_transcript.severity).toBe(9);
    expect(rest.tool_arguments.body).toBe(TOOL);
    expect(rest.plain.body).toBe(PLAIN);
    const audit = await refusals(key, projectId, 'boundary=store');
    if (d === 'allow') expect(audit).toEqual([]);
    else expect(audit).toEqual([expect.objectContaining({ content_class: 'model_transcript', boundary: 'store', decided_by: 'policy', decision: d, count: 1 })]);
  });

  it('tool_arguments store = deny: the tool message body is not written, the user message is', async () => {
    const { projectId, key } = await projectWithKey(t, SCOPES);
    await setContentPolicy(t, projectId, gridRules((c, b) => (c === 'tool_arguments' && b === 'store' ? 'deny' : 'allow')));
    await emit(key, 'json');
    const rest = await atRest(projectId);
    expect([rest.model_transcript.body, rest.tool_arguments.body, rest.plain.body]).toEqual([USER, null, PLAIN]);
  });

  it('privacy by default: without a policy no GenAI body is written (audit: no_policy); the plain log body is', async () => {
    const { projectId, key } = await projectWithKey(t, SCOPES);
    await emit(key);
    const rest = await atRest(projectId);
    expect([rest.model_transcript.body, rest.tool_arguments.body, rest.plain.body]).toEqual([null, null, PLAIN]);
    const audit = (await refusals(key, projectId, 'boundary=store')).map((r) => [r.content_class, r.decided_by, r.count]).sort();
    expect(audit).toEqual([
      ['model_transcript', 'no_policy', 1],
      ['tool_arguments', 'no_policy', 1],
    ]);
  });

  it('the event name is also read from the `event.name` attribute (older instrumentations) and compared case-insensitively; a non-string or unknown name is an ordinary log', async () => {
    const { projectId, key } = await projectWithKey(t, SCOPES);
    await setContentPolicy(t, projectId, gridRules((_, b) => (b === 'store' ? 'deny' : 'allow')));
    await sendLogs({ base, format: 'json', key }, (logger) => {
      logger.emit({ body: 'by attribute', attributes: { 'event.name': 'gen_ai.choice' } });
      logger.emit({ eventName: 'GEN_AI.User.Message', body: 'by field, odd case' });
      logger.emit({ body: 'numeric name', attributes: { 'event.name': 42 } });
      logger.emit({ eventName: 'app.user.login', body: 'another event' });
    });
    // By body (none first), then class.
    const order = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1);
    const rows = (await logsAtRest(t.ctx.telemetry, projectId)).map((r) => [r.body, r.bodyClass]).sort((a, b) => order(a[0], b[0]) || order(a[1], b[1]));
    expect(rows).toEqual([
      [null, 'model_transcript'],
      [null, 'model_transcript'],
      ['another event', null],
      ['numeric name', null],
    ]);
  });

  it('bad input: odd event_name values in OTLP JSON are never a 5xx; only a value whose text is a GenAI event name is classified', async () => {
    const { projectId, key } = await projectWithKey(t, SCOPES);
    await setContentPolicy(t, projectId, gridRules((_, b) => (b === 'store' ? 'deny' : 'allow')));
    const send = (eventName: unknown) =>
      t.call({
        method: 'POST',
        url: '/v1/logs',
        key,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ resourceLogs: [{ scopeLogs: [{ logRecords: [{ eventName, body: { stringValue: `name ${typeof eventName}` } }] }] }] }),
      });
    for (const v of [123, { a: 1 }, ['gen_ai.user.message'], 'x'.repeat(100_000), '', null, true]) {
      const r = await send(v);
      expect(r.statusCode, r.body).toBeLessThan(500);
      if (r.statusCode >= 400) expect(r.json()).toHaveProperty('error');
    }
    const classified = (await logsAtRest(t.ctx.telemetry, projectId)).filter((r) => r.bodyClass !== null).length;
    // The OTLP JSON reader turns a non-string into its text (as for every string field): the one-element
    // array reads as the name itself and is classified (the stricter side); nothing else is.
    expect(classified).toBe(1);
  });
});

describe('read: every log route applies agents:content:read and the read cell to GenAI bodies', () => {
  /** A project storing everything, reading model_transcript as `d`; the three records sent; a second key without the content scope. */
  async function project(d: Decision) {
    const { projectId, key } = await projectWithKey(t, SCOPES);
    await setContentPolicy(t, projectId, gridRules((c, b) => (c === 'model_transcript' && b === 'read' ? d : 'allow')));
    await emit(key);
    const narrow = await t.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'n', scopes: ['logs:read'], project_id: projectId } });
    return { projectId, key, narrowKey: narrow.json().key as string };
  }

  it.each(DECISIONS)('read cell = %s: list, context, body search, aggregate, patterns', async (d) => {
    const { projectId, key, narrowKey } = await project(d);
    const list = await get(key, '/logs?since=1h&sort=timestamp_asc');
    expect(list.statusCode, list.body).toBe(200);
    const logs = list.json().logs as Obj[];
    expect(logs).toHaveLength(3);
    const [user, tool, plain] = logs;
    expect(user.body).toBe(expected(d, USER));
    expect(user.body_withheld).toBe(d === 'deny' ? true : undefined);
    expect(user.attributes).toEqual({ 'gen_ai.system': 'openai', 'enduser.id': 'u1', kept: 'yes' });
    expect([tool.body, tool.body_withheld, plain.body, plain.body_withheld]).toEqual([TOOL, undefined, PLAIN, undefined]);

    const ctx = await get(key, `/logs/${plain.log_id}/context?before=5&after=5`);
    expect(ctx.statusCode, ctx.body).toBe(200);
    expect(ctx.json().before.map((l: Obj) => l.body)).toEqual([expected(d, USER), TOOL]);

    // A body search never matches text the reader cannot read; the plain body always can be.
    const found = (await get(key, '/logs?since=1h&q=what%20is%20my%20balance')).json().logs as Obj[];
    expect(found.map((l) => l.log_id)).toEqual(d === 'allow' ? [user.log_id] : []);
    expect(((await get(key, '/logs?since=1h&q=ada&sort=timestamp_asc')).json().logs as Obj[]).map((l) => l.log_id)).toEqual(
      d === 'allow' ? [user.log_id, tool.log_id, plain.log_id] : [tool.log_id, plain.log_id],
    );
    const agg = await t.call({ method: 'POST', url: `/api/v1/logs/aggregate?project_id=${projectId}`, key, payload: { since: '1h', q: 'balance' } });
    expect(agg.statusCode, agg.body).toBe(200);
    expect(agg.json().series[0].count).toBe(d === 'allow' ? 2 : 1);

    const patterns = (await get(key, '/logs/patterns?since=1h')).json().patterns as Obj[];
    const text = JSON.stringify(patterns);
    expect(text.includes('what is my balance')).toBe(d === 'allow');
    if (d === 'deny') expect(patterns).toContainEqual(expect.objectContaining({ pattern: WITHHELD_PATTERN, example: expect.objectContaining({ body: null, body_withheld: true }) }));
    if (d === 'allow_metadata') expect(patterns.map((p) => p.example.body)).toContain(marker(USER));

    // Without agents:content:read every GenAI body is withheld whatever the policy says; the plain body is not.
    const narrowLogs = (await get(narrowKey, '/logs?since=1h&sort=timestamp_asc')).json().logs as Obj[];
    expect(narrowLogs.map((l) => [l.body, l.body_withheld])).toEqual([
      [null, true],
      [null, true],
      [PLAIN, undefined],
    ]);
    expect(((await get(narrowKey, '/logs?since=1h&q=balance')).json().logs as Obj[]).map((l) => l.log_id)).toEqual([]);
    expect(JSON.stringify((await get(narrowKey, '/logs/patterns?since=1h')).json())).not.toContain('balance');

    const audit = await refusals(key, projectId, 'boundary=read&content_class=model_transcript');
    if (d === 'allow') expect(audit).toEqual([]);
    else expect(audit).toEqual([expect.objectContaining({ decided_by: 'policy', decision: d })]);
  });

  it('a delete by body text removes only the records whose body the caller can read', async () => {
    const { key } = await project('deny');
    const until = new Date(Date.now() + 60_000).toISOString();
    const since = new Date(Date.now() - 3_600_000).toISOString();
    const del = await t.call({ method: 'DELETE', url: `/api/v1/logs?since=${since}&until=${until}&q=ada`, key });
    expect(del.statusCode, del.body).toBe(200);
    expect(del.json()).toEqual({ deleted: 2 });
    expect(((await get(key, '/logs?since=1h')).json().logs as Obj[]).map((l) => l.body_withheld)).toEqual([true]);
  });

  it('the live tail withholds the body by the read cell, and its body search does not match withheld bodies', async () => {
    const { projectId, key } = await projectWithKey(t, SCOPES);
    await setContentPolicy(t, projectId, gridRules((c, b) => (c === 'model_transcript' && b === 'read' ? 'deny' : 'allow')));
    const ac = new AbortController();
    const all = await fetch(`${base}/api/v1/stream/logs`, { headers: { 'x-svc-api-key': key }, signal: ac.signal });
    const ada = await fetch(`${base}/api/v1/stream/logs?q=ada`, { headers: { 'x-svc-api-key': key }, signal: ac.signal });
    expect([all.status, ada.status]).toEqual([200, 200]);
    try {
      await new Promise((r) => setTimeout(r, 100));
      await emit(key);
      const [allLogs, adaLogs] = await Promise.all([readLogs(all, 3), readLogs(ada, 2)]);
      expect(allLogs.map((l) => [l.body, l.body_withheld])).toEqual([
        [null, true],
        [TOOL, undefined],
        [PLAIN, undefined],
      ]);
      expect(adaLogs.map((l) => l.body).sort()).toEqual([PLAIN, TOOL].sort());
    } finally {
      ac.abort();
    }
  });
  it('an open tail re-asks at each poll: a read cell denied after the tail opened stops its body search matching', async () => {
    const { projectId, key } = await projectWithKey(t, SCOPES);
    await setContentPolicy(t, projectId, gridRules('allow'));
    const ac = new AbortController();
    const ada = await fetch(`${base}/api/v1/stream/logs?q=ada`, { headers: { 'x-svc-api-key': key }, signal: ac.signal });
    expect(ada.status).toBe(200);
    try {
      await setContentPolicy(t, projectId, gridRules((c, b) => (c === 'model_transcript' && b === 'read' ? 'deny' : 'allow')));
      await new Promise((r) => setTimeout(r, 100));
      await emit(key);
      expect((await readLogs(ada, 2)).map((l) => l.body)).toEqual([TOOL, PLAIN]);
    } finally {
      ac.abort();
    }
  });
});

/** The first `n` `event: log` records of an SSE response (fails after 5 s), and a moment more to catch an extra one. */
async function readLogs(res: Response, n: number): Promise<Obj[]> {
  const reader = res.body!.getReader();
  const dec = new TextDecoder();
  let buf = '';
  const logs: Obj[] = [];
  const deadline = Date.now() + 5000;
  let extra = 0;
  while (Date.now() < deadline && (logs.length < n || extra++ < 1)) {
    const chunk = await Promise.race([reader.read(), new Promise<null>((r) => setTimeout(() => r(null), logs.length < n ? 5000 : 300))]);
    if (chunk === null || chunk.done) break;
    buf += dec.decode(chunk.value, { stream: true });
    let i: number;
    while ((i = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, i);
      buf = buf.slice(i + 2);
      if (block.split('\n').includes('event: log')) logs.push(JSON.parse(block.split('\n').find((l) => l.startsWith('data: '))!.slice(6)));
    }
  }
  reader.releaseLock();
  return logs;
}

describe('erasure removes GenAI bodies of the erased classes', () => {
  it.each<[ContentClass[], string[]]>([
    [['model_transcript'], ['user']],
    [['tool_arguments'], ['tool']],
  ])('subject erasure of %j (enduser_id): those bodies become null, the records and other bodies stay; counts name them', async (classes, gone) => {
    const { projectId, key } = await projectWithKey(t, SCOPES);
    await setContentPolicy(t, projectId, gridRules('allow'));
    await emit(key);
    const r = await t.call({
      method: 'POST',
      url: `/api/v1/projects/${projectId}/content-erasures`,
      key,
      payload: { subject_kind: 'enduser_id', subject_id: 'u1', reason: 'asked', content_classes: classes },
    });
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json().counts).toEqual({ spans: 0, span_events: 0, logs: 1, attributes: 0, log_bodies: 1 });
    const rest = await atRest(projectId);
    expect(rest.model_transcript.body).toBe(gone.includes('user') ? null : USER);
    expect(rest.tool_arguments.body).toBe(gone.includes('tool') ? null : TOOL);
    expect(rest.plain.body).toBe(PLAIN);
    expect(rest.model_transcript.attributes.kept).toBe('yes');
    // Erasing twice is safe and finds nothing more.
    const again = await t.call({
      method: 'POST',
      url: `/api/v1/projects/${projectId}/content-erasures`,
      key,
      payload: { subject_kind: 'enduser_id', subject_id: 'u1', reason: 'again', content_classes: classes },
    });
    expect(again.json().counts).toEqual({ spans: 0, span_events: 0, logs: 0, attributes: 0, log_bodies: 0 });
  });
});
