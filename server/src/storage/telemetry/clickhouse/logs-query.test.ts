/**
 * The ClickHouse logs adapters against the DuckDB ones (the reference): the same rows written through each
 * engine's logs writer, then every store read, the tail polls and the deletes asked of both, answers compared
 * whole. The rows hold the awkward cases: ties of time, severities by number and by text, attribute values of
 * every JSON type (numbers JSON.stringify writes beyond 64 bits too), dotted keys, resource attributes under
 * the same key, content keys, content bodies, missing services and bodies, non-ASCII text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LogRow } from '../../../domains/logs/rows.js';
import type { LogFilter, LogRow as StoredLogRow, LogsStore } from '../../../domains/logs/store.js';
import { WriterStoppedError } from '../../../lib/writer-stopped.js';
import { openTestChDb, type TestChDb } from '../../../testing/clickhouse.js';
import { DuckDbTelemetry } from '../duckdb/engine.js';
import { ChLogsQuery } from './logs-query.js';
import { ChLogsWriter } from './logs-writer.js';

const T0 = 1_717_200_000_000_000; // 2024-06-01T00:00:00Z
const S = 1_000_000;
const P = 'proj-a';
const Q = 'proj-b';

const SEVERITIES: [number | null, string | null][] = [
  [1, null], [4, 'whatever'], [5, null], [9, 'INFO'], [13, null], [17, null], [21, null], [24, null],
  [0, ' INFO2 '], [25, 'Warning'], [null, 'crit'], [null, 'unknown'], [null, 'ERR'], [null, 'fatal10'], [null, null], [null, 'DEBUG\t'], [null, 'Notice'],
];
const ATTRS: Record<string, unknown>[] = [
  { 'http.method': 'GET', n: 507 },
  { 'http.method': 'POST', n: 1.5, b: true },
  { 'http.method': 'GET', z: null, o: { k: 1, s: 'é' }, arr: [1, 'a', null] },
  { u: 'é\n"q\\', s: '', big: 1e20, neg: -(2 ** 63), tiny: 1.5e-7, huge: 1e21 },
  { 'gen_ai.prompt': 'secret', 'GEN_AI.Completion': 'x', 'gen_ai.system': 'openai' },
  { 'http.method': 'x'.repeat(40), n: 507 },
  {},
];
const RESOURCES: Record<string, unknown>[] = [{ region: 'eu' }, { region: 'us', 'http.method': 'RES' }, {}];
const BODIES: (string | null)[] = ['Disk FULL on /var', 'user 42 logged in', 'ÉCOLE fermée à 10h', null, '', 'timeout after 30 s: "upstream"', 'ünïcödé 😀 body that is rather long'];
const SERVICES: (string | null)[] = ['api', 'db', null, 'api', 'worker'];

/** 70 records of project P over 7 seconds (10 per second: ties of time), and a few of project Q. */
function dataset(): { projectId: string; ingestedUs: number; rows: LogRow[] }[] {
  const byIngest = new Map<string, { projectId: string; ingestedUs: number; rows: LogRow[] }>();
  for (let i = 0; i < 75; i++) {
    const projectId = i < 70 ? P : Q;
    const [severityNumber, severityText] = SEVERITIES[i % SEVERITIES.length];
    const service = SERVICES[i % SERVICES.length];
    const contentClass = i % 11 === 3 ? 'model_transcript' : i % 13 === 5 ? 'tool_arguments' : null;
    const row: LogRow = {
      // Ids not in time order, so that ties are broken by id, visibly.
      logId: `id-${String((i * 37) % 101).padStart(3, '0')}`,
      tsUs: T0 + Math.floor(i / 10) * S,
      observedUs: i % 4 === 0 ? null : T0 + i,
      severityNumber,
      severityText,
      body: contentClass ? `Ada asks about her balance ${i}` : BODIES[i % BODIES.length],
      bodyClass: contentClass,
      traceId: i % 5 === 0 ? '0af7651916cd43dd8448eb211c80319c' : null,
      spanId: i % 5 === 0 ? 'b7ad6b7169203331' : null,
      serviceName: service,
      environment: i % 2 ? 'prod' : null,
      scopeName: i % 3 ? 'scope' : null,
      attributes: JSON.stringify(ATTRS[i % ATTRS.length]),
      resourceAttributes: JSON.stringify({ ...(service !== null ? { 'service.name': service } : {}), ...RESOURCES[i % RESOURCES.length] }),
    };
    const ingestedUs = T0 + 100 * S + (i % 9) * S;
    const key = `${projectId}/${ingestedUs}`;
    let w = byIngest.get(key);
    if (!w) byIngest.set(key, (w = { projectId, ingestedUs, rows: [] }));
    w.rows.push(row);
  }
  return [...byIngest.values()];
}

const WINDOW = { fromUs: T0, toUs: T0 + 10 * S };
const f = (x: Partial<LogFilter> = {}): LogFilter => ({ attrs: [], ...x });

const FILTERS: [string, LogFilter][] = [
  ['none', f()],
  ['services', f({ serviceNames: ['db', 'worker'] })],
  ['min severity warn', f({ minSeverity: 4 })],
  ['min severity fatal', f({ minSeverity: 6 })],
  ['text, ordinary bodies only', f({ text: 'ada' })],
  ['text, model_transcript readable', f({ text: 'ada', readableBodyClasses: ['model_transcript'] })],
  ['text non-ASCII', f({ text: 'école' })],
  ['text with a quote', f({ text: '"upstream"' })],
  ['trace', f({ traceId: '0af7651916cd43dd8448eb211c80319c' })],
  ['log id', f({ logId: 'id-037' })],
  ['attr string, dotted key', f({ attrs: [{ key: 'http.method', values: ['GET'] }] })],
  ['attr from the resource', f({ attrs: [{ key: 'http.method', values: ['RES'] }] })],
  ['attr number', f({ attrs: [{ key: 'n', values: ['507', '1.5'] }] })],
  ['attr bool', f({ attrs: [{ key: 'b', values: ['true'] }] })],
  ['attr object', f({ attrs: [{ key: 'o', values: ['{"k":1,"s":"é"}'] }] })],
  ['attr array', f({ attrs: [{ key: 'arr', values: ['[1,"a",null]'] }] })],
  ['attr escaped string', f({ attrs: [{ key: 'u', values: ['é\n"q\\'] }] })],
  ['attr empty string', f({ attrs: [{ key: 's', values: [''] }] })],
  ['attr beyond 64 bits', f({ attrs: [{ key: 'big', values: ['100000000000000000000'] }] })],
  ['attr -2^63', f({ attrs: [{ key: 'neg', values: ['-9223372036854776000'] }] })],
  ['attr exponent', f({ attrs: [{ key: 'huge', values: ['1e21'] }, { key: 'tiny', values: ['1.5e-7'] }] })],
  ['attr null never matches', f({ attrs: [{ key: 'z', values: ['null', ''] }] })],
  ['everything', f({ serviceNames: ['api'], minSeverity: 1, text: 'e', attrs: [{ key: 'region', values: ['eu', 'us'] }] })],
];

describe('ClickHouse logs adapters answer as the DuckDB ones', () => {
  let ch: TestChDb;
  let duck: DuckDbTelemetry;
  let c: { store: LogsStore; writer: ChLogsWriter };
  let d: { store: LogsStore; writer: DuckDbTelemetry['logsWriter'] };

  beforeAll(async () => {
    ch = await openTestChDb();
    duck = await DuckDbTelemetry.open({ memory: true });
    c = { store: new ChLogsQuery(ch), writer: new ChLogsWriter(ch) };
    d = { store: duck.logs, writer: duck.logsWriter };
    // Concurrent writes: the ClickHouse writer groups them into one insert.
    for (const w of [c.writer, d.writer]) await Promise.all(dataset().map((x) => w.write(x.projectId, x.rows, x.ingestedUs)));
  });
  afterAll(async () => {
    await c?.writer.stop();
    await duck?.close();
    await ch?.drop();
  });

  const both = async <T>(fn: (s: LogsStore) => Promise<T>): Promise<T> => {
    const [a, b] = await Promise.all([fn(c.store), fn(d.store)]);
    expect(a).toEqual(b);
    return a;
  };

  it('stores every row, with the rank and ingest time derived', async () => {
    const all = await both((s) => s.search({ projectId: P, filter: f(), ...WINDOW, order: 'asc', limit: 1000 }));
    expect(all).toHaveLength(70);
    expect(new Set(all.map((r) => r.severityRank))).toEqual(new Set([1, 2, 3, 4, 5, 6, null]));
    expect(await both((s) => s.search({ projectId: Q, filter: f(), ...WINDOW, order: 'desc', limit: 1000 }))).toHaveLength(5);
  });

  /** Filters that match nothing on purpose; every other one matches some rows (no comparison of two empty answers). */
  const EMPTY = new Set(['text, ordinary bodies only', 'attr null never matches']);

  it.each(FILTERS)('search, %s: same rows, same order, pages of 7 by cursor in both orders', async (name, filter) => {
    for (const order of ['asc', 'desc'] as const) {
      const whole = await both((s) => s.search({ projectId: P, filter, ...WINDOW, order, limit: 1000 }));
      expect(whole.length === 0, name).toBe(EMPTY.has(name));
      const paged: StoredLogRow[] = [];
      let after: { tsUs: number; logId: string } | undefined;
      for (;;) {
        const page = await both((s) => s.search({ projectId: P, filter, ...WINDOW, order, after, limit: 7 }));
        paged.push(...page);
        if (page.length < 7) break;
        after = { tsUs: page[6].tsUs, logId: page[6].logId };
      }
      expect(paged).toEqual(whole);
    }
    await both((s) => s.search({ projectId: P, filter, fromUs: T0 + 2 * S, toUs: T0 + 4 * S, order: 'desc', limit: 1000 }));
  });

  it('get, and neighbours of the same service (or of none) on both sides, ties included', async () => {
    expect(await both((s) => s.get(P, 'no-such'))).toBeNull();
    expect(await both((s) => s.get(Q, 'id-037'))).toBeNull();
    const all = await c.store.search({ projectId: P, filter: f(), ...WINDOW, order: 'asc', limit: 1000 });
    for (const r of all.filter((_, i) => i % 4 === 0)) {
      expect(await both((s) => s.get(P, r.logId))).toEqual(r);
      for (const side of ['before', 'after'] as const)
        for (const n of [0, 1, 5, 100]) await both((s) => s.neighbours(P, r.serviceName, { tsUs: r.tsUs, logId: r.logId }, side, n));
    }
  });

  it('aggregate: groups of service, severity and attributes, totals and buckets, too many series', async () => {
    const groupings = [[], [{ kind: 'service' }], [{ kind: 'severity' }], [{ kind: 'attr', key: 'http.method' }], [{ kind: 'service' }, { kind: 'attr', key: 'n' }], [{ kind: 'attr', key: 'o' }]] as const;
    for (const groupBy of groupings)
      for (const stepUs of [undefined, 2 * S, 3_000_000])
        for (const [, filter] of FILTERS.slice(0, 8))
          await both((s) => s.aggregate({ projectId: P, filter, fromUs: T0 + 500_000, toUs: T0 + 10 * S, stepUs, groupBy: [...groupBy], maxSeries: 50 }));
    expect(await both((s) => s.aggregate({ projectId: P, filter: f(), ...WINDOW, groupBy: [{ kind: 'service' }], maxSeries: 3 }))).toEqual({ kind: 'too_many_series' });
    expect(await both((s) => s.aggregate({ projectId: P, filter: f(), ...WINDOW, groupBy: [{ kind: 'service' }], maxSeries: 4 }))).toMatchObject({ kind: 'rows' });
    await both((s) => s.aggregate({ projectId: 'nobody', filter: f(), ...WINDOW, groupBy: [], maxSeries: 4 }));
  });

  it('fields: keys, counts, distinct and top values, limits, content keys hidden or not, sampling', async () => {
    for (const [, filter] of FILTERS.slice(0, 12))
      for (const hideContentKeys of [true, false])
        await both((s) => s.fields({ projectId: P, filter, ...WINDOW, sample: 10_000, maxKeys: 200, topValues: 10, maxValueLength: 256, hideContentKeys }));
    const small = await both((s) => s.fields({ projectId: P, filter: f(), ...WINDOW, sample: 9, maxKeys: 3, topValues: 2, maxValueLength: 3, hideContentKeys: false }));
    expect(small).toMatchObject({ scanned: 9, sampled: true });
    expect(small.totalKeys).toBeGreaterThan(3);
    await both((s) => s.fields({ projectId: 'nobody', filter: f(), ...WINDOW, sample: 10, maxKeys: 3, topValues: 2, maxValueLength: 3, hideContentKeys: true }));
  });

  it('bodies: the newest first, cut to the characters asked, with the whole body size', async () => {
    for (const [, filter] of FILTERS.slice(0, 8))
      for (const bodyChars of [0, 3, 4096]) for (const limit of [5, 1000]) await both((s) => s.bodies({ projectId: P, filter, ...WINDOW, limit, bodyChars }));
  });

  it('tail reads: latest ingest, ids ingested between, polls with few and with many excluded ids', async () => {
    expect(await both((s) => s.maxIngested(P))).toBe(T0 + 108 * S);
    expect(await both((s) => s.maxIngested('nobody'))).toBeNull();
    const sortIds = (r: { logId: string; ingestedUs: number }[]) => [...r].sort((a, b) => (a.logId < b.logId ? -1 : 1));
    const [a, b] = await Promise.all([c.store.idsIngestedBetween(P, T0 + 102 * S, T0 + 105 * S), d.store.idsIngestedBetween(P, T0 + 102 * S, T0 + 105 * S)]);
    expect(sortIds(a)).toEqual(sortIds(b));
    const all = await c.store.search({ projectId: P, filter: f(), ...WINDOW, order: 'asc', limit: 1000 });
    const few = all.filter((_, i) => i % 3 === 0).map((r) => r.logId);
    const many = [...few, ...Array.from({ length: 400 }, (_, i) => `not-a-log-${i}`)];
    for (const exclude of [[], few, many])
      for (const [, filter] of FILTERS.slice(0, 6))
        for (const limit of [3, 500]) await both((s) => s.tail({ projectId: P, filter, afterUs: T0 + 101 * S, upToUs: T0 + 107 * S, exclude, limit }));
  });

  it('deletes: the same rows, counted once each (also under concurrency), nothing of another project', async () => {
    const rest = () => both((s) => s.search({ projectId: P, filter: f(), ...WINDOW, order: 'asc', limit: 1000 }));
    const del = (q: Parameters<LogsStore['delete']>[0]) => both((s) => s.delete(q));
    expect(await del({ projectId: P, filter: f({ logId: 'id-037' }) })).toBe(1);
    expect(await del({ projectId: P, filter: f({ logId: 'id-037' }) })).toBe(0);
    expect(await del({ projectId: P, filter: f({ attrs: [{ key: 'big', values: ['100000000000000000000'] }] }), ...WINDOW })).toBeGreaterThan(0);
    await rest();
    expect(await del({ projectId: P, filter: f({ text: 'ada', serviceNames: ['api', 'db'] }), ...WINDOW })).toBe(0);
    expect(await del({ projectId: P, filter: f({ text: 'ada', readableBodyClasses: ['tool_arguments'] }), fromUs: T0 + S, toUs: T0 + 5 * S })).toBeGreaterThan(0);
    await rest();
    const counts = await Promise.all(Array.from({ length: 5 }, () => c.store.delete({ projectId: P, filter: f({ serviceNames: ['db'] }), ...WINDOW })));
    const duckCounts = await Promise.all(Array.from({ length: 5 }, () => d.store.delete({ projectId: P, filter: f({ serviceNames: ['db'] }), ...WINDOW })));
    expect(counts.reduce((x, y) => x + y, 0)).toBe(duckCounts.reduce((x, y) => x + y, 0));
    expect(counts.filter((n) => n > 0)).toHaveLength(1);
    await rest();
    expect(await both((s) => s.search({ projectId: Q, filter: f(), ...WINDOW, order: 'asc', limit: 1000 }))).toHaveLength(5);
  });

  it('the writer: an empty write resolves, flush waits, a stopped writer refuses', async () => {
    const w = new ChLogsWriter(ch);
    await w.write(P, [], T0);
    await w.flush();
    await w.stop();
    await w.stop();
    await expect(w.write(P, [], T0)).rejects.toBeInstanceOf(WriterStoppedError);
  });
});
