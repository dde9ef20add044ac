/** ExportTraceServiceRequest bodies (protobuf and OTLP JSON) as a walk over their spans (export-request.ts). */
import { jsonInput, protobufInput } from './export-request.js';
import { hexField, TRACES, type SignalInput, type SpanMessage } from './signal-decode.js';

export function decodeTracesProtobuf(bytes: Uint8Array): SignalInput<SpanMessage> {
  return protobufInput(bytes, TRACES);
}

/** OTLP JSON: `traceId`, `spanId` and `parentSpanId` are hex strings (any case), not base64. Links are not stored. */
export function decodeTracesJson(bytes: Uint8Array): SignalInput<SpanMessage> {
  return jsonInput(bytes, TRACES, (span) => {
    hexField(span, 'traceId');
    hexField(span, 'spanId');
    hexField(span, 'parentSpanId');
  });
}
