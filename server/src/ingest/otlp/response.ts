/** ExportMetricsServiceResponse in the request's encoding. */
import { otlpMetrics } from './decode.js';
import type { ExportOutcome } from './metrics-ingest.js';

export type OtlpFormat = 'protobuf' | 'json';

/**
 * OTLP: `partial_success` is left unset when everything was accepted. In proto3 JSON an int64 is a
 * string, so `rejectedDataPoints` is sent as "3"; the OpenTelemetry JS exporters only JSON.parse the
 * body and log a partial success, so either form works for them.
 */
export function encodeExportResponse(format: OtlpFormat, outcome: ExportOutcome): Buffer | string {
  const partial = outcome.rejectedDataPoints > 0;
  if (format === 'json') {
    return JSON.stringify(
      partial ? { partialSuccess: { rejectedDataPoints: String(outcome.rejectedDataPoints), errorMessage: outcome.errorMessage ?? '' } } : {},
    );
  }
  const message = partial ? { partialSuccess: { rejectedDataPoints: outcome.rejectedDataPoints, errorMessage: outcome.errorMessage ?? '' } } : {};
  const bytes = otlpMetrics.ExportMetricsServiceResponse.encode(message).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
