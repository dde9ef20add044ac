/**
 * Metric ingestion on ClickHouse, with group commit as duckdb/metrics-writer.ts: a request hands over its
 * rows and waits; one flush loop takes what was queued since the last flush (up to MAX_BATCH_ROWS rows) and
 * stores it with one INSERT per table (new series first, then points, histogram samples and metadata
 * together), then answers every waiter. Every insert is synchronous (client.ts), so a resolved write means
 * stored. There is no timer: while one flush runs the next requests queue up, so the batch grows with load.
 *
 * ClickHouse has no transaction across tables (or across INSERTs). What keeps it right:
 * - series rows are inserted before the points that reference them; a copy of a series row is harmless
 *   (metric_series is a ReplacingMergeTree, and the reads take DISTINCT series);
 * - a failed INSERT of a table for a batch of several requests is retried request by request for that
 *   table only (the tables that went in are not written again, so nothing is stored twice), and only a
 *   request whose rows cannot be stored is refused;
 * - a refused request may still have rows stored in the tables whose insert succeeded (on DuckDB it
 *   stores nothing): it is refused with a PartialWriteError then, and a client retry stores those
 *   datapoints a second time (a plain error when none of its datapoints went in).
 *
 * Metadata rows carry `version` = ingest time in µs (strictly increasing in this process), so in
 * metric_metadata (ReplacingMergeTree(version)) the latest sent wins.
 */
import type { MetricMetadataRow, MetricRows, MetricsSink, SeriesRow } from '../../../domains/metrics/rows.js';
import { PartialWriteError, WriterStoppedError } from '../../../lib/writer-stopped.js';
import type { ChTelemetryDb } from './db.js';

interface SeriesJson {
  project_id: string;
  series_id: string;
  name: string;
  type: string | null;
  service_name: string | null;
  environment: string | null;
  labels: string;
}

interface Pending {
  projectId: string;
  rows: MetricRows;
  /** metric_points rows (JSONEachRow objects), built in the request's own turn (see write()). */
  points: object[];
  histograms: object[];
  /** Series of the request not known to be stored, set when its batch is taken. */
  newSeries: { key: string; s: SeriesRow; row: SeriesJson }[];
  metadata: { key: string; value: string; row: object }[];
  /** Whether some of its points or histogram samples went in (a refusal is then a PartialWriteError). */
  storedData: boolean;
  resolve(): void;
  reject(e: unknown): void;
}

/** Above this many cached series ids the cache is dropped and refilled (memory bound). */
const MAX_KNOWN_SERIES = 1_000_000;
/** Rows (points and histogram samples) per flush: well below ClickHouse's insert block (max_insert_block_size, 1,048,576 rows). */
const MAX_BATCH_ROWS = 250_000;
/** A unit and description written is not written again for this long (re-asserted after it, for several nodes). */
const METADATA_TTL_MS = 60_000;

const metadataValue = (m: MetricMetadataRow) => JSON.stringify([m.unit, m.description]);

/** metric_points rows of one request. `start_ts` is left out when no point has one (its default is NULL). */
function pointRows(projectId: string, rows: MetricRows): object[] {
  const { series, pointSeries, pointTs, pointValue, pointStart } = rows;
  const n = pointTs.length;
  const out = new Array<object>(n);
  if (n === 0) return out;
  const ids = series.map((s) => s.seriesId.toString());
  if (pointStart === undefined) {
    for (let i = 0; i < n; i++) {
      const s = pointSeries[i];
      out[i] = { project_id: projectId, name: series[s].name, series_id: ids[s], ts: pointTs[i], value: pointValue[i] };
    }
  } else {
    for (let i = 0; i < n; i++) {
      const s = pointSeries[i];
      const start = pointStart[i];
      out[i] = { project_id: projectId, name: series[s].name, series_id: ids[s], ts: pointTs[i], value: pointValue[i], start_ts: Number.isNaN(start) ? null : start };
    }
  }
  return out;
}

function histogramRows(projectId: string, rows: MetricRows): object[] {
  return rows.histograms.map((h) => ({
    project_id: projectId,
    name: h.name,
    series_id: h.seriesId.toString(),
    ts: h.ts,
    start_ts: h.startTs,
    temporality: h.temporality,
    count: h.count.toString(),
    sum: h.sum,
    bounds: h.bounds,
    counts: h.counts.map((c) => c.toString()),
  }));
}

export class ChMetricsWriter implements MetricsSink {
  private queue: Pending[] = [];
  /** The flush loop while it runs; null when idle. */
  private running: Promise<void> | null = null;
  private stopped = false;
  /**
   * Series ids known to be in metric_series, per project. It only avoids redundant inserts: a missing entry
   * costs one copy of a series row, never a wrong result. Code that deletes series rows calls forgetSeries().
   */
  private readonly knownSeries = new Map<string, Set<bigint>>();
  private knownCount = 0;
  /** Unit and description last written per (project, metric name), and when. */
  private readonly knownMetadata = new Map<string, { value: string; at: number }>();
  private lastVersion = 0;

  constructor(private readonly db: ChTelemetryDb) {}

  /** Resolves once the rows are stored; rejects when they could not be or the writer is stopped. */
  write(projectId: string, rows: MetricRows): Promise<void> {
    if (this.stopped) return Promise.reject(new WriterStoppedError('metrics'));
    let points: object[];
    let histograms: object[];
    try {
      points = pointRows(projectId, rows);
      histograms = histogramRows(projectId, rows);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ projectId, rows, points, histograms, newSeries: [], metadata: [], storedData: false, resolve, reject });
      this.kick();
    });
  }

  forgetSeries(projectId?: string): void {
    if (projectId === undefined) {
      this.knownSeries.clear();
      this.knownCount = 0;
    } else {
      this.knownCount -= this.knownSeries.get(projectId)?.size ?? 0;
      this.knownSeries.delete(projectId);
    }
  }

  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.flush();
  }

  private kick(): void {
    if (this.running === null) this.running = this.loop();
  }

  private async loop(): Promise<void> {
    // Let the requests of the current tick join the first batch.
    await new Promise<void>((r) => setImmediate(r));
    for (;;) {
      // Checked and cleared with no await in between: a write() that finds `running` set is seen by this
      // loop, and one that finds it null starts a new loop.
      if (this.queue.length === 0) {
        this.running = null;
        return;
      }
      const batch = this.take();
      try {
        await this.store(batch);
      } catch (e) {
        // Not expected (store() settles every request itself); never leave a waiter hanging.
        for (const p of batch) p.reject(e);
      }
    }
  }

  /** The next batch: queued requests in order, up to MAX_BATCH_ROWS rows (at least one request). */
  private take(): Pending[] {
    let rows = 0;
    let n = 0;
    while (n < this.queue.length) {
      const size = this.queue[n].points.length + this.queue[n].histograms.length;
      if (n > 0 && rows + size > MAX_BATCH_ROWS) break;
      rows += size;
      n++;
    }
    return this.queue.splice(0, n);
  }

  /** Stores a batch and settles each of its requests. */
  private async store(batch: Pending[]): Promise<void> {
    if (this.knownCount > MAX_KNOWN_SERIES) this.forgetSeries();
    this.prepare(batch);
    const failed = new Map<Pending, unknown>();
    // Series first: a point is never stored before its series.
    const storedSeries = new Set<string>();
    await this.insertEach(
      'metric_series',
      batch,
      (p) => p.newSeries,
      (items) => dedupe(items).map((x) => x.row),
      failed,
      (ps) => ps.forEach((p) => p.newSeries.forEach((x) => storedSeries.add(x.key))),
    );
    const rest = batch.filter((p) => !failed.has(p));
    await Promise.all([
      this.insertEach('metric_points', rest, (p) => p.points, (items) => items, failed, (ps) => ps.forEach((p) => (p.storedData = true))),
      this.insertEach('metric_histograms', rest, (p) => p.histograms, (items) => items, failed, (ps) => ps.forEach((p) => (p.storedData = true))),
      this.insertEach('metric_metadata', rest, (p) => p.metadata, (items) => items.map((m) => m.row), failed),
    ]);
    this.remember(batch, failed, storedSeries);
    for (const p of batch) {
      const e = failed.get(p);
      if (e === undefined) p.resolve();
      else p.reject(p.storedData ? new PartialWriteError('data points', e) : e);
    }
  }

  /** The batch's new series (not known to be stored) and new metadata (not written lately), per request. */
  private prepare(batch: Pending[]): void {
    const now = Date.now();
    for (const p of batch) {
      const known = this.knownSeries.get(p.projectId);
      p.newSeries = [];
      for (const s of p.rows.series) {
        if (known?.has(s.seriesId)) continue;
        p.newSeries.push({
          key: `${p.projectId}\u0000${s.seriesId}`,
          s,
          row: {
            project_id: p.projectId,
            series_id: s.seriesId.toString(),
            name: s.name,
            type: s.type ?? null,
            service_name: s.serviceName,
            environment: s.environment,
            labels: s.labels,
          },
        });
      }
      p.metadata = [];
      for (const m of p.rows.metadata ?? []) {
        const key = JSON.stringify([p.projectId, m.name]);
        const value = metadataValue(m);
        const k = this.knownMetadata.get(key);
        if (k && k.value === value && now - k.at < METADATA_TTL_MS) continue;
        // Strictly increasing µs: of two sent in the same millisecond, the later one wins.
        this.lastVersion = Math.max(now * 1000, this.lastVersion + 1);
        p.metadata.push({ key, value, row: { project_id: p.projectId, name: m.name, unit: m.unit, description: m.description, version: this.lastVersion } });
      }
    }
  }

  /**
   * One INSERT of the rows of `items` of every request; when it fails for several requests, one INSERT per
   * request, so only the requests whose rows cannot be stored fail (recorded in `failed`). `stored` is told
   * the requests whose rows went in.
   */
  private async insertEach<T>(
    table: string,
    batch: Pending[],
    itemsOf: (p: Pending) => T[],
    rowsOf: (items: T[]) => object[],
    failed: Map<Pending, unknown>,
    stored?: (requests: Pending[]) => void,
  ): Promise<void> {
    const withRows = batch.filter((p) => itemsOf(p).length > 0);
    if (withRows.length === 0) return;
    const all = withRows.length === 1 ? itemsOf(withRows[0]) : withRows.flatMap(itemsOf);
    try {
      await this.db.client.insert(table, rowsOf(all));
      stored?.(withRows);
      return;
    } catch (e) {
      if (withRows.length === 1) {
        failed.set(withRows[0], e);
        return;
      }
    }
    for (const p of withRows) {
      if (failed.has(p)) continue;
      try {
        await this.db.client.insert(table, rowsOf(itemsOf(p)));
        stored?.([p]);
      } catch (e) {
        failed.set(p, e);
      }
    }
  }

  /** Called once the batch is settled: what was stored is known from then on. */
  private remember(batch: Pending[], failed: Map<Pending, unknown>, storedSeries: Set<string>): void {
    const now = Date.now();
    for (const p of batch) {
      for (const { key, s } of p.newSeries) {
        if (!storedSeries.has(key)) continue;
        let known = this.knownSeries.get(p.projectId);
        if (!known) this.knownSeries.set(p.projectId, (known = new Set()));
        if (!known.has(s.seriesId)) {
          known.add(s.seriesId);
          this.knownCount++;
        }
      }
      if (failed.has(p)) continue;
      if (this.knownMetadata.size + p.metadata.length > MAX_KNOWN_SERIES) this.knownMetadata.clear();
      for (const m of p.metadata) this.knownMetadata.set(m.key, { value: m.value, at: now });
    }
  }
}

/** The series of several requests, each (project, series id) once. */
function dedupe<T extends { key: string }>(items: T[]): T[] {
  const seen = new Set<string>();
  return items.filter((x) => !seen.has(x.key) && (seen.add(x.key), true));
}
