/** The rules of OTLP log ingestion (spec 1 "Project" sampling_rate; docs/agent-model.md "Sampling"). */
import type { ProjectRecord } from '../../domains/projects/store.js';
import type { LogsSink } from '../../domains/logs/rows.js';
import { convertLogs } from './logs-convert.js';
import type { ContentAccess } from '../../domains/content-policy/access.js';
import type { LogRecordMessage, SignalInput } from './signal-decode.js';
import { committedOr503, type SignalOutcome } from './signal-ingest.js';

export const LOGS_SAMPLING_DISABLED_MESSAGE = 'ingestion is disabled for this project (sampling_rate is 0); no log records were stored';

/**
 * Stores the request's log records in the project (each with a new UUID `log_id`) and resolves once they
 * are committed. sampling_rate 0 stores nothing and reports every record rejected; otherwise records
 * follow their trace's sampling and records without a trace are kept (logs-convert.ts).
 */
export async function ingestLogs(
  writer: LogsSink,
  project: ProjectRecord,
  input: SignalInput<LogRecordMessage>,
  nowUs: number,
  uuid: () => string,
  /** What the project's content policy lets be stored (one lookup per request). */
  store?: ContentAccess,
): Promise<SignalOutcome> {
  if (project.samplingRate === 0) {
    let n = 0;
    input.forEach(() => void n++);
    return n > 0 ? { rejected: n, errorMessage: LOGS_SAMPLING_DISABLED_MESSAGE, stored: 0, dropped: 0 } : { rejected: 0, stored: 0, dropped: 0 };
  }
  const c = convertLogs(input, project.samplingRate, nowUs, uuid, store);
  if (c.rows.length > 0) await committedOr503(() => writer.write(project.id, c.rows, nowUs), 'log records');
  return { rejected: 0, stored: c.rows.length, dropped: c.dropped };
}
