/** The rules of OTLP metric ingestion (spec 1, "Project" sampling_rate; ARCHITECTURE "Data and durability"). */
import type { ProjectRecord } from '../../domains/projects/store.js';
import { ApiError } from '../../http/errors.js';
import type { MetricsSink } from '../../domains/metrics/rows.js';
import { PartialWriteError, WriterStoppedError } from '../../lib/writer-stopped.js';
import type { MetricsInput } from './decode.js';
import { convertMetrics, countDataPoints } from './metrics-convert.js';
import type { ContentAccess } from '../../domains/content-policy/access.js';

/** What the export response reports: OTLP `partial_success`, empty when everything was accepted. */
export interface ExportOutcome {
  rejectedDataPoints: number;
  errorMessage?: string;
  /** Data points committed (for logs and tests; not part of the response). */
  stored: number;
}

export const SAMPLING_DISABLED_MESSAGE =
  'ingestion is disabled for this project (sampling_rate is 0); no data points were stored';

/**
 * Stores the request's points in the project and resolves once they are committed.
 *
 * sampling_rate 0 disables ingestion: nothing is stored and every data point is reported rejected.
 * A rate between 0 and 1 does not thin metrics: sampling applies to traces (whole traces are kept or
 * dropped); dropping metric samples would silently bias every sum, rate and count, so all are stored.
 */
export async function ingestMetrics(writer: MetricsSink, project: ProjectRecord, req: MetricsInput, store?: ContentAccess): Promise<ExportOutcome> {
  if (project.samplingRate === 0) {
    const n = countDataPoints(req);
    return n > 0 ? { rejectedDataPoints: n, errorMessage: SAMPLING_DISABLED_MESSAGE, stored: 0 } : { rejectedDataPoints: 0, stored: 0 };
  }
  const rows = convertMetrics(req, store);
  const stored = rows.pointTs.length + rows.histograms.length;
  if (stored > 0) {
    try {
      await writer.write(project.id, rows);
    } catch (e) {
      // Not all of this request is stored (on the embedded engine: nothing is): answer 5xx so the client retries, never 2xx.
      const message =
        e instanceof WriterStoppedError
          ? 'the server is shutting down; nothing was stored, retry'
          : e instanceof PartialWriteError
            ? 'the data points could not all be stored; retry (a retry stores each once)'
            : 'the data points could not be committed; nothing was stored, retry';
      const err = new ApiError(503, 'unavailable', message, undefined, { 'retry-after': '1' });
      (err as Error).cause = e;
      throw err;
    }
  }
  if (rows.rejected === 0) return { rejectedDataPoints: 0, stored };
  return {
    rejectedDataPoints: rows.rejected,
    errorMessage: `${rows.rejected} data point${rows.rejected === 1 ? ' was' : 's were'} rejected; the first: ${rows.firstRejection}`,
    stored,
  };
}
