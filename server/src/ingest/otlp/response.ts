/** Export*ServiceResponse in the request's encoding, for metrics, traces and logs. */
import { otlpMetrics } from './decode.js';
import type { ExportOutcome } from './metrics-ingest.js';
import { otlpLogs, otlpTraces } from './signal-decode.js';

export type OtlpFormat = 'protobuf' | 'json';
export type OtlpSignal = 'metrics' | 'traces' | 'logs';

/** The partial_success count field of each signal (proto3 JSON names). */
export const REJECTED_FIELD: Record<OtlpSignal, string> = {
  metrics: 'rejectedDataPoints',
  traces: 'rejectedSpans',
  logs: 'rejectedLogRecords',
};

const RESPONSE_TYPE = {
  metrics: otlpMetrics.ExportMetricsServiceResponse,
  traces: otlpTraces.ExportTraceServiceResponse,
  logs: otlpLogs.ExportLogsServiceResponse,
};

/**
 * OTLP: `partial_success` is left unset when everything was accepted. It is set when something was
 * rejected, and also with 0 rejected and a message (a warning, which OTLP allows: traces use it for
 * context events that were not accepted). In proto3 JSON an int64 is a string, so the count is sent as
 * "3"; the OpenTelemetry JS exporters only JSON.parse the body and log a partial success, so either works.
 */
export function encodeSignalResponse(format: OtlpFormat, signal: OtlpSignal, rejected: number, errorMessage?: string): Buffer | string {
  const partial = rejected > 0 || !!errorMessage;
  const field = REJECTED_FIELD[signal];
  if (format === 'json') return JSON.stringify(partial ? { partialSuccess: { [field]: String(rejected), errorMessage: errorMessage ?? '' } } : {});
  const message = partial ? { partialSuccess: { [field]: rejected, errorMessage: errorMessage ?? '' } } : {};
  const type = RESPONSE_TYPE[signal];
  const bytes = type.encode(type.fromObject(message)).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** ExportMetricsServiceResponse for a metrics outcome. */
export function encodeExportResponse(format: OtlpFormat, outcome: ExportOutcome): Buffer | string {
  return encodeSignalResponse(format, 'metrics', outcome.rejectedDataPoints, outcome.rejectedDataPoints > 0 ? outcome.errorMessage : undefined);
}
