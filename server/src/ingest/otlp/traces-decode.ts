/** ExportTraceServiceRequest bodies (protobuf and OTLP JSON) as a walk over their spans (signal-decode.ts). */
import {
  SpanMessageType,
  decodeJsonBody,
  eachJsonItem,
  hexField,
  otlpTraces,
  protobufInput,
  treeInput,
  type SignalInput,
  type SpanMessage,
} from './signal-decode.js';

const NAME = 'ExportTraceServiceRequest';
const LEVELS: [string, string, string] = ['resourceSpans', 'scopeSpans', 'spans'];

export function decodeTracesProtobuf(bytes: Uint8Array): SignalInput<SpanMessage> {
  return protobufInput(bytes, SpanMessageType, NAME);
}

/** OTLP JSON: `traceId`, `spanId` and `parentSpanId` are hex strings (any case), not base64. Links are not stored. */
export function decodeTracesJson(bytes: Uint8Array): SignalInput<SpanMessage> {
  const tree = decodeJsonBody(bytes, otlpTraces.ExportTraceServiceRequest, NAME, (o) =>
    eachJsonItem(o, LEVELS, (span) => {
      hexField(span, 'traceId');
      hexField(span, 'spanId');
      hexField(span, 'parentSpanId');
    }),
  );
  return treeInput(tree as Record<string, unknown>, LEVELS);
}
