/**
 * Series rows by (name, type, service, environment), then by the point's attributes as sent. A process
 * cache, so the canonical labels and the sha256 are computed once per series, not once per request.
 * Never stale (a series id is a pure function of its inputs); dropped whole when it grows past its bound.
 */
import type { SeriesRow } from '../../domains/metrics/rows.js';
import type { KeyValue } from './decode.js';
import { anyValueText, labelsJson } from './values.js';

export interface CachedSeries {
  row: SeriesRow;
  /** The last conversion that listed this series in its output, and where. */
  epoch: number;
  index: number;
}
/**
 * A trie over the attribute key and value texts in the order sent, one string per level, so lookups
 * need no key string built per point (decoded strings are mostly interned, see decode.ts, so each step
 * is a pointer comparison or a Map lookup with a cached hash). Most nodes have one child, kept inline.
 */
interface TrieNode {
  key: string | undefined;
  child: TrieNode | undefined;
  more: Map<string, TrieNode> | undefined;
  series: CachedSeries | undefined;
}
export interface SeriesContext {
  root: TrieNode;
  /** By canonical labels JSON: attribute orders that differ share one entry. */
  byLabels: Map<string, CachedSeries>;
}
const MAX_CACHED_NODES = 500_000;
const seriesCache = new Map<string, SeriesContext>();
let cachedNodes = 0;
let epochs = 0;

const newNode = (): TrieNode => ({ key: undefined, child: undefined, more: undefined, series: undefined });
export const newContext = (): SeriesContext => ({ root: newNode(), byLabels: new Map() });

/** Each conversion gets its own epoch, so a series is listed once per request without clearing the cache. */
export const nextEpoch = (): number => ++epochs;

/** `key`: the JSON of [name, type, service, environment]. */
export function seriesContext(key: string): SeriesContext {
  let ctx = seriesCache.get(key);
  if (!ctx) seriesCache.set(key, (ctx = newContext()));
  return ctx;
}

function step(node: TrieNode, s: string): TrieNode | undefined {
  if (node.key === s) return node.child;
  return node.more?.get(s);
}

function stepOrAdd(node: TrieNode, s: string): TrieNode {
  const found = step(node, s);
  if (found) return found;
  const n = newNode();
  cachedNodes++;
  if (node.key === undefined) {
    node.key = s;
    node.child = n;
  } else (node.more ??= new Map()).set(s, n);
  return n;
}

export function findSeries(ctx: SeriesContext, attrs: KeyValue[]): CachedSeries | undefined {
  let node: TrieNode | undefined = ctx.root;
  for (let i = 0; i < attrs.length && node; i++) {
    node = step(node, attrs[i].key ?? '');
    if (node) node = step(node, anyValueText(attrs[i].value));
  }
  return node?.series;
}

/**
 * Files `attrs` under `ctx`; `row` builds the series row when its labels are new to the context. When the
 * cache is full it is dropped first, and the series goes into a fresh context under `key`: the caller must
 * use the returned context from then on.
 */
export function addSeries(
  ctx: SeriesContext,
  key: string,
  attrs: KeyValue[],
  row: (labels: string) => SeriesRow,
): { context: SeriesContext; series: CachedSeries } {
  if (cachedNodes >= MAX_CACHED_NODES) {
    seriesCache.clear();
    cachedNodes = 0;
    ctx = newContext();
    seriesCache.set(key, ctx);
  }
  const labels = labelsJson(attrs);
  let c = ctx.byLabels.get(labels);
  if (!c) {
    c = { row: row(labels), epoch: 0, index: 0 };
    ctx.byLabels.set(labels, c);
    cachedNodes++;
  }
  let node = ctx.root;
  for (const kv of attrs) node = stepOrAdd(stepOrAdd(node, kv.key ?? ''), anyValueText(kv.value));
  node.series = c;
  return { context: ctx, series: c };
}
