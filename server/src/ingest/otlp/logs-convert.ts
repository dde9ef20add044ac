/**
 * Log records of a decoded ExportLogsServiceRequest -> `logs` rows, after sampling.
 *
 * No log record is rejected for its content. Ids follow the OTLP proto comment: a receiver "SHOULD assume
 * that the log record is not associated with a trace" when `trace_id` is absent or invalid (not 16 bytes,
 * or all zero), so such a record is stored with trace_id (and span_id) NULL; a span_id is kept only with a
 * valid trace_id and when it is 8 bytes, not all zero. `ts_us` is time_unix_nano, else
 * observed_time_unix_nano, else the ingest time; severity_number outside 1..24 is NULL (unspecified).
 *
 * A body that is recorded content (a GenAI event's, by the record's event name: content-keys.ts) is
 * stored as the project's `store` cell for its class says (body-content.ts); its class is kept with
 * the row. Every other body is stored as sent.
 *
 * Sampling (docs/agent-model.md): a record with a trace id follows its trace (kept exactly when the
 * trace's spans are); one without is kept. Dropped records are not rejected (see traces-convert.ts).
 */
import type { LogRow } from '../../domains/logs/rows.js';
import { attributesJson, bodyText, nanosToUs } from './attributes-json.js';
import { bodyClassOf, storedBody } from './body-content.js';
import type { ContentAccess } from '../../domains/content-policy/access.js';
import type { KeyValue } from './decode.js';
import { hexOf, validId, type LogRecordMessage, type SignalInput } from './signal-decode.js';
import { keepTraceBytes } from './traces-sampling.js';
import { resourceIdentity } from './values.js';

export interface LogsConversion {
  rows: LogRow[];
  /** Records dropped by sampling. */
  dropped: number;
}

/** `store`: what the project's content policy lets be stored of recorded content (absent: everything, for tests of the conversion). */
export function convertLogs(input: SignalInput<LogRecordMessage>, samplingRate: number, ingestedAtUs: number, uuid: () => string, store?: ContentAccess): LogsConversion {
  const out: LogsConversion = { rows: [], dropped: 0 };
  let lastAttrs: KeyValue[] | null = null;
  let resource = { serviceName: null as string | null, environment: null as string | null, json: '{}' };
  const decided = new Map<string, boolean>();

  input.forEach((resourceAttrs, scopeName, rec) => {
    if (resourceAttrs !== lastAttrs) {
      lastAttrs = resourceAttrs;
      resource = { ...resourceIdentity(resourceAttrs), json: attributesJson(resourceAttrs, store) };
    }
    const traceId = validId(rec.traceId, 16) ? hexOf(rec.traceId) : null;
    if (traceId !== null && samplingRate < 1) {
      let keep = decided.get(traceId);
      if (keep === undefined) decided.set(traceId, (keep = keepTraceBytes(rec.traceId!, samplingRate)));
      if (!keep) {
        out.dropped++;
        return;
      }
    }
    const time = nanosToUs(rec.timeUnixNano);
    const observed = nanosToUs(rec.observedTimeUnixNano);
    const severity = rec.severityNumber ?? 0;
    const bodyClass = bodyClassOf(rec);
    out.rows.push({
      logId: uuid(),
      tsUs: time > 0 ? time : observed > 0 ? observed : ingestedAtUs,
      observedUs: observed > 0 ? observed : null,
      severityNumber: Number.isInteger(severity) && severity >= 1 && severity <= 24 ? severity : null,
      severityText: rec.severityText || null,
      body: bodyClass === undefined ? bodyText(rec.body) : storedBody(bodyText(rec.body), bodyClass, store),
      bodyClass: bodyClass ?? null,
      traceId,
      spanId: traceId !== null && validId(rec.spanId, 8) ? hexOf(rec.spanId) : null,
      serviceName: resource.serviceName,
      environment: resource.environment,
      scopeName,
      attributes: attributesJson(rec.attributes, store),
      resourceAttributes: resource.json,
    });
  });
  return out;
}
