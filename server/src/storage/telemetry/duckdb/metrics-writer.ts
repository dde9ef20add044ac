/**
 * Group commit for metric ingestion. A request hands over its rows and waits; one flush loop takes
 * everything queued since the last flush and writes it in ONE transaction on the writer connection
 * (new series, points, histogram samples), then answers every waiter. A waiter is resolved only after
 * COMMIT returned, and DuckDB has written the commit to its WAL by then, so a 2xx built on it survives
 * a `kill -9`. When a flush of several requests fails, each is retried in a transaction of its own, so
 * only a request that cannot be committed is refused (it answers 503, never 2xx).
 * There is no timer: while one flush runs, the next requests queue up and go together in the next one,
 * so the batch grows with the load and an idle server commits a lone request at once.
 */
import { DOUBLE, LIST, UBIGINT, listValue, type DuckDBConnection, type DuckDBDataChunk, type DuckDBPreparedStatement } from '@duckdb/node-api';
import { pointChunks } from './metric-point-chunks.js';
import { UNKNOWN_START, type MetricMetadataRow, type MetricRows, type MetricsSink, type SeriesRow } from '../../../domains/metrics/rows.js';
import { WriterStoppedError } from '../../../lib/writer-stopped.js';
import type { TelemetryDb } from './open.js';

const metadataValue = (m: MetricMetadataRow) => JSON.stringify([m.unit, m.description]);

interface Committed {
  series: { projectId: string; s: SeriesRow }[];
  /** Metadata rows written, keyed as in `knownMetadata`. */
  metadata: Map<string, string>;
}


interface Pending {
  projectId: string;
  rows: MetricRows;
  /** The points as DuckDB data chunks, built when the rows were handed over (see write()). */
  chunks: DuckDBDataChunk[];
  resolve(): void;
  reject(e: unknown): void;
}

/** Rows per VALUES statement when inserting new series. */
const SERIES_PER_INSERT = 200;

function seriesInsertSql(rows: number): string {
  const tuple = '(?, ?, ?, ?, ?, ?, ?)';
  return `INSERT OR IGNORE INTO metric_series (project_id, series_id, name, type, service_name, environment, labels) VALUES ${new Array(rows).fill(tuple).join(', ')}`;
}
/** Above this many cached series ids the cache is dropped and refilled (memory bound). */
const MAX_KNOWN_SERIES = 1_000_000;


export class MetricsWriter implements MetricsSink {
  private queue: Pending[] = [];
  /** Exclusive jobs (other writes on the writer connection) run between flushes. */
  private jobs: (() => Promise<void>)[] = [];
  /** The flush loop while it runs; null when idle. */
  private running: Promise<void> | null = null;
  private stopped = false;
  /**
   * Series ids known to be in metric_series, per project. It only avoids redundant INSERT OR IGNORE
   * work: a missing entry costs one ignored insert, never a wrong row. Code that deletes series rows
   * must call `forgetSeries()` so a later point re-inserts its series.
   */
  private readonly knownSeries = new Map<string, Set<bigint>>();
  /** Unit and description last written per (project, metric name); a miss costs one upsert, never a wrong row. */
  private readonly knownMetadata = new Map<string, string>();
  private knownCount = 0;
  /** The prepared statement for a full group of new series, kept across flushes. */
  private fullSeriesInsert: DuckDBPreparedStatement | undefined;

  constructor(private readonly db: TelemetryDb) {}

  /** Resolves once the rows are committed; rejects when the commit failed or the writer is stopped. */
  write(projectId: string, rows: MetricRows): Promise<void> {
    if (this.stopped) return Promise.reject(new WriterStoppedError('metrics'));
    // The point chunks are filled now, in the request's own turn, which usually falls while the
    // previous flush waits for its commit, instead of inside the next flush.
    let chunks: DuckDBDataChunk[];
    try {
      chunks = pointChunks(projectId, rows);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ projectId, rows, chunks, resolve, reject });
      this.kick();
    });
  }

  /**
   * Runs `fn` on the writer connection with no flush in progress (for other writes to the telemetry
   * store, e.g. deletes, which must not interleave with an open ingest transaction).
   */
  exclusive<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.stopped) return Promise.reject(new WriterStoppedError('metrics'));
    return new Promise<T>((resolve, reject) => {
      this.jobs.push(() => fn(this.db.writer).then(resolve, reject));
      this.kick();
    });
  }

  /** Forgets cached series ids (all, or one project's) after series rows were deleted. */
  forgetSeries(projectId?: string): void {
    if (projectId === undefined) {
      this.knownSeries.clear();
      this.knownCount = 0;
    } else {
      this.knownCount -= this.knownSeries.get(projectId)?.size ?? 0;
      this.knownSeries.delete(projectId);
    }
  }

  /** Waits until everything queued so far is committed (or failed). */
  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Refuses new writes, then commits what is queued. Idempotent. */
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
      // Checked and cleared with no await in between: a write() that finds `running` set is
      // guaranteed to be seen by this loop, and one that finds it null starts a new loop.
      if (this.queue.length === 0 && this.jobs.length === 0) {
        this.running = null;
        return;
      }
      const jobs = this.jobs;
      this.jobs = [];
      for (const job of jobs) await job();
      const batch = this.queue;
      this.queue = [];
      if (batch.length === 0) continue;
      try {
        this.remember(await this.commit(batch));
        for (const p of batch) p.resolve();
      } catch (e) {
        if (batch.length === 1) {
          batch[0].reject(e);
          continue;
        }
        // One request's rows must not fail its neighbours: retry each alone, so only a request that
        // cannot be committed by itself is refused (and a transient failure may pass on the retry).
        for (const p of batch) {
          try {
            this.remember(await this.commit([p]));
            p.resolve();
          } catch (e2) {
            p.reject(e2);
          }
        }
      }
    }
  }

  /** Called only after COMMIT: what was written is known from then on. */
  private remember({ series, metadata }: Committed): void {
    for (const { projectId, s } of series) {
      let known = this.knownSeries.get(projectId);
      if (!known) this.knownSeries.set(projectId, (known = new Set()));
      known.add(s.seriesId);
    }
    this.knownCount += series.length;
    if (this.knownMetadata.size + metadata.size > MAX_KNOWN_SERIES) this.knownMetadata.clear();
    for (const [k, v] of metadata) this.knownMetadata.set(k, v);
  }

  /**
   * Unit and description per metric name. Instruments send the same pair with every export, so the
   * pairs already written are remembered and only a new or changed one costs a statement.
   */
  private async upsertMetadata(c: DuckDBConnection, batch: Pending[]): Promise<Map<string, string>> {
    const fresh = new Map<string, { projectId: string; m: MetricMetadataRow }>();
    for (const p of batch)
      for (const m of p.rows.metadata ?? []) {
        const key = JSON.stringify([p.projectId, m.name]);
        if (this.knownMetadata.get(key) !== metadataValue(m)) fresh.set(key, { projectId: p.projectId, m });
      }
    const written = new Map<string, string>();
    if (fresh.size === 0) return written;
    const stmt = await c.prepare(
      `INSERT INTO metric_metadata (project_id, name, unit, description) VALUES ($1, $2, $3, $4)
       ON CONFLICT (project_id, name) DO UPDATE SET unit = excluded.unit, description = excluded.description`,
    );
    try {
      for (const { projectId, m } of fresh.values()) {
        stmt.bindVarchar(1, projectId);
        stmt.bindVarchar(2, m.name);
        stmt.bindVarchar(3, m.unit);
        stmt.bindVarchar(4, m.description);
        await stmt.run();
        written.set(JSON.stringify([projectId, m.name]), metadataValue(m));
      }
    } finally {
      stmt.destroySync();
    }
    return written;
  }

  /** One transaction for the whole batch; returns the series it inserted. */
  private async commit(batch: Pending[]): Promise<Committed> {
    const c = this.db.writer;
    if (this.knownCount > MAX_KNOWN_SERIES) this.forgetSeries();
    const newSeries: { projectId: string; s: SeriesRow }[] = [];
    const inBatch = new Map<string, Set<bigint>>();
    for (const p of batch) {
      const known = this.knownSeries.get(p.projectId);
      let seen = inBatch.get(p.projectId);
      if (!seen) inBatch.set(p.projectId, (seen = new Set()));
      for (const s of p.rows.series) {
        if (known?.has(s.seriesId) || seen.has(s.seriesId)) continue;
        seen.add(s.seriesId);
        newSeries.push({ projectId: p.projectId, s });
      }
    }
    return this.db.busy(async () => {
      await c.run('BEGIN TRANSACTION');
      try {
        await this.insertSeries(c, newSeries);
        await this.appendPoints(c, batch);
        await this.appendHistograms(c, batch);
        const metadata = await this.upsertMetadata(c, batch);
        await c.run('COMMIT');
        return { series: newSeries, metadata };
      } catch (e) {
        await c.run('ROLLBACK').catch(() => undefined);
        throw e;
      }
    });
  }

  private async insertSeries(c: DuckDBConnection, rows: { projectId: string; s: SeriesRow }[]): Promise<void> {
    for (let off = 0; off < rows.length; off += SERIES_PER_INSERT) {
      const part = rows.slice(off, off + SERIES_PER_INSERT);
      const full = part.length === SERIES_PER_INSERT;
      const stmt = (full ? this.fullSeriesInsert : undefined) ?? (await c.prepare(seriesInsertSql(part.length)));
      if (full) this.fullSeriesInsert = stmt;
      try {
        let i = 1;
        for (const { projectId, s } of part) {
          stmt.bindVarchar(i++, projectId);
          stmt.bindUBigInt(i++, s.seriesId);
          stmt.bindVarchar(i++, s.name);
          stmt.bindVarchar(i++, s.type);
          if (s.serviceName === null) stmt.bindNull(i++);
          else stmt.bindVarchar(i++, s.serviceName);
          if (s.environment === null) stmt.bindNull(i++);
          else stmt.bindVarchar(i++, s.environment);
          stmt.bindVarchar(i++, s.labels);
        }
        await stmt.run();
      } finally {
        if (!full) stmt.destroySync();
      }
    }
  }

  /** Points go in as data chunks (column vectors), the fastest path the Node API has into a table. */
  private async appendPoints(c: DuckDBConnection, batch: Pending[]): Promise<void> {
    if (!batch.some((p) => p.chunks.length > 0)) return;
    const appender = await c.createAppender('metric_points');
    try {
      for (const p of batch) for (const chunk of p.chunks) appender.appendDataChunk(chunk);
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }

  private async appendHistograms(c: DuckDBConnection, batch: Pending[]): Promise<void> {
    if (!batch.some((p) => p.rows.histograms.length > 0)) return;
    const appender = await c.createAppender('metric_histograms');
    const boundsType = LIST(DOUBLE);
    const countsType = LIST(UBIGINT);
    try {
      for (const p of batch) {
        for (const h of p.rows.histograms) {
          appender.appendVarchar(p.projectId);
          appender.appendVarchar(h.name);
          appender.appendUBigInt(h.seriesId);
          appender.appendBigInt(BigInt(h.ts));
          if (h.startTs === null) appender.appendNull();
          else appender.appendBigInt(BigInt(h.startTs));
          appender.appendVarchar(h.temporality);
          appender.appendUBigInt(h.count);
          if (h.sum === null) appender.appendNull();
          else appender.appendDouble(h.sum);
          appender.appendList(listValue(h.bounds), boundsType);
          appender.appendList(listValue(h.counts), countsType);
          appender.endRow();
        }
      }
      appender.flushSync();
    } finally {
      appender.closeSync();
    }
  }
}
