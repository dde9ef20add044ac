/**
 * metric_points rows as DuckDB data chunks (used by metrics-writer.ts). On a little-endian machine each
 * column is written into its vector at once through the C API of @duckdb/node-bindings (no BigInt per
 * timestamp, each distinct project id and metric name assigned once per chunk); otherwise row by row
 * through the node-api vector classes. The tests of metrics-writer.test.ts read every column back.
 */
import { BIGINT, DOUBLE, DuckDBDataChunk, UBIGINT, VARCHAR } from '@duckdb/node-api';
import { createRequire } from 'node:module';
import os from 'node:os';
import type { MetricRows } from '../../../domains/metrics/rows.js';

const POINT_TYPES = [VARCHAR, VARCHAR, UBIGINT, BIGINT, DOUBLE, BIGINT];
/** DuckDB's vector size: the most rows one chunk holds. */
const CHUNK_ROWS = 2048;

/**
 * The C API of @duckdb/node-bindings, the very instance @duckdb/node-api wraps. The points' columns are
 * written with it directly: one copy of each column into its vector, instead of the node-api vector
 * classes' per-row `setItem` (a BigInt per timestamp, one native call per string; together about a third
 * of the ingest thread's time at 10k points per request).
 */
export interface Bindings {
  data_chunk_get_vector(chunk: unknown, column: number): unknown;
  vector_assign_string_element(vector: unknown, index: number, str: string): void;
  vector_get_data(vector: unknown, bytes: number): Uint8Array;
  copy_data_to_vector(vector: unknown, offset: number, buffer: ArrayBufferLike, byteOffset: number, bytes: number): void;
  vector_ensure_validity_writable(vector: unknown): void;
  copy_data_to_vector_validity(vector: unknown, offset: number, buffer: ArrayBufferLike, byteOffset: number, bytes: number): void;
}
const nodeRequire = createRequire(import.meta.url);
export const duckdb = createRequire(nodeRequire.resolve('@duckdb/node-api'))('@duckdb/node-bindings') as Bindings;
/** The column buffers below hold 64-bit integers as (low, high) uint32 pairs, which is DuckDB's layout on a little-endian machine. */
export const LITTLE_ENDIAN = os.endianness() === 'LE';

// Scratch column buffers, filled and copied into a chunk synchronously (never across an await).
const strings = new Uint32Array(CHUNK_ROWS * 4); // DuckDB string_t: 16 bytes per row
const ids = new BigUint64Array(CHUNK_ROWS);
const int64s = new Uint32Array(CHUNK_ROWS * 2);
const doubles = new Float64Array(CHUNK_ROWS);
const validity = new Uint32Array(Math.ceil(CHUNK_ROWS / 64) * 2);
const TWO_32 = 4294967296;

/** Rows [0, n) of an int64 column from integral numbers (milliseconds), with no BigInt per value. */
function fillInt64(src: ArrayLike<number>, off: number, n: number): void {
  for (let i = 0; i < n; i++) {
    const v = src[off + i];
    const hi = Math.floor(v / TWO_32);
    int64s[2 * i] = v - hi * TWO_32;
    int64s[2 * i + 1] = hi; // two's complement when negative
  }
}

/**
 * A VARCHAR column whose rows take a few distinct strings (`which[i]` indexes `values`): each distinct
 * string is assigned once through DuckDB (into the vector's own string heap when it is longer than 12
 * bytes), and every other row gets a copy of that row's 16-byte string_t, so the rows share the one
 * string the vector owns (as a flattened constant vector does).
 */
function fillStrings(vector: unknown, n: number, values: readonly string[], which: (i: number) => number, firstRow: Int32Array): void {
  firstRow.fill(-1);
  let last = -1;
  for (let i = 0; i < n; i++) {
    const w = which(i);
    if (firstRow[w] < 0) {
      firstRow[w] = i;
      duckdb.vector_assign_string_element(vector, i, values[w]);
      last = i;
    }
  }
  const assigned = duckdb.vector_get_data(vector, (last + 1) * 16);
  const words = new Uint32Array(assigned.buffer, assigned.byteOffset, (last + 1) * 4);
  for (let i = 0; i < n; i++) {
    const f = firstRow[which(i)] * 4;
    const t = i * 4;
    strings[t] = words[f];
    strings[t + 1] = words[f + 1];
    strings[t + 2] = words[f + 2];
    strings[t + 3] = words[f + 3];
  }
  duckdb.copy_data_to_vector(vector, 0, strings.buffer, 0, n * 16);
}

/** metric_points rows (project_id, name, series_id, ts, value, start_ts) as data chunks. */
export function pointChunks(projectId: string, rows: MetricRows): DuckDBDataChunk[] {
  if (!LITTLE_ENDIAN) return pointChunksPerRow(projectId, rows);
  const { series, pointSeries, pointTs, pointValue, pointStart } = rows;
  const chunks: DuckDBDataChunk[] = [];
  if (pointTs.length === 0) return chunks;
  // The distinct metric names of the request, and each series' among them.
  const names: string[] = [];
  const nameOf = new Int32Array(series.length);
  const nameIndex = new Map<string, number>();
  for (let s = 0; s < series.length; s++) {
    let k = nameIndex.get(series[s].name);
    if (k === undefined) nameIndex.set(series[s].name, (k = names.push(series[s].name) - 1));
    nameOf[s] = k;
  }
  const nameRow = new Int32Array(names.length);
  const projectRow = new Int32Array(1);
  const project = [projectId];
  for (let off = 0; off < pointTs.length; off += CHUNK_ROWS) {
    const n = Math.min(CHUNK_ROWS, pointTs.length - off);
    const chunk = DuckDBDataChunk.create(POINT_TYPES, n);
    const vector = (col: number) => duckdb.data_chunk_get_vector(chunk.chunk, col);
    fillStrings(vector(0), n, project, () => 0, projectRow);
    fillStrings(vector(1), n, names, (i) => nameOf[pointSeries[off + i]], nameRow);
    for (let i = 0; i < n; i++) ids[i] = series[pointSeries[off + i]].seriesId;
    duckdb.copy_data_to_vector(vector(2), 0, ids.buffer, 0, n * 8);
    fillInt64(pointTs, off, n);
    duckdb.copy_data_to_vector(vector(3), 0, int64s.buffer, 0, n * 8);
    for (let i = 0; i < n; i++) doubles[i] = pointValue[off + i];
    duckdb.copy_data_to_vector(vector(4), 0, doubles.buffer, 0, n * 8);
    // start_ts: NULL (NaN) but for cumulative counter samples (usually none, or a whole request's worth).
    const start = vector(5);
    const words = Math.ceil(n / 64) * 2;
    if (pointStart === undefined) {
      validity.fill(0, 0, words);
      duckdb.vector_ensure_validity_writable(start);
      duckdb.copy_data_to_vector_validity(start, 0, validity.buffer, 0, words * 4);
    } else {
      validity.fill(0, 0, words);
      let nulls = 0;
      for (let i = 0; i < n; i++) {
        const v = pointStart[off + i];
        if (Number.isNaN(v)) {
          nulls++;
          int64s[2 * i] = 0;
          int64s[2 * i + 1] = 0;
        } else {
          validity[i >>> 5] |= 1 << (i & 31);
          const hi = Math.floor(v / TWO_32);
          int64s[2 * i] = v - hi * TWO_32;
          int64s[2 * i + 1] = hi;
        }
      }
      duckdb.copy_data_to_vector(start, 0, int64s.buffer, 0, n * 8);
      if (nulls > 0) {
        duckdb.vector_ensure_validity_writable(start);
        duckdb.copy_data_to_vector_validity(start, 0, validity.buffer, 0, words * 4);
      }
    }
    chunks.push(chunk);
  }
  return chunks;
}

type Vector = { setItem(i: number, v: unknown): void; flush(): void };

/** The same chunks through the node-api vector classes, row by row (on a big-endian machine). */
function pointChunksPerRow(projectId: string, rows: MetricRows): DuckDBDataChunk[] {
  const { series, pointSeries, pointTs, pointValue, pointStart } = rows;
  const chunks: DuckDBDataChunk[] = [];
  for (let off = 0; off < pointTs.length; off += CHUNK_ROWS) {
    const n = Math.min(CHUNK_ROWS, pointTs.length - off);
    const chunk = DuckDBDataChunk.create(POINT_TYPES, n);
    const [project, name, id, ts, value, start] = POINT_TYPES.map((_t, col) => chunk.getColumnVector(col) as unknown as Vector);
    for (let i = 0; i < n; i++) {
      const s = series[pointSeries[off + i]];
      project.setItem(i, projectId);
      name.setItem(i, s.name);
      id.setItem(i, s.seriesId);
      ts.setItem(i, BigInt(pointTs[off + i]));
      value.setItem(i, pointValue[off + i]);
      const v = pointStart?.[off + i];
      start.setItem(i, v === undefined || Number.isNaN(v) ? null : BigInt(v));
    }
    for (const v of [project, name, id, ts, value, start]) v.flush();
    chunks.push(chunk);
  }
  return chunks;
}
