/** ExportLogsServiceRequest bodies (protobuf and OTLP JSON) as a walk over their log records (export-request.ts). */
import { jsonInput, protobufInput } from './export-request.js';
import { hexField, LOGS, type LogRecordMessage, type SignalInput } from './signal-decode.js';

export function decodeLogsProtobuf(bytes: Uint8Array): SignalInput<LogRecordMessage> {
  return protobufInput(bytes, LOGS);
}

/** OTLP JSON: `traceId` and `spanId` are hex strings (any case), not base64. */
export function decodeLogsJson(bytes: Uint8Array): SignalInput<LogRecordMessage> {
  return jsonInput(bytes, LOGS, (record) => {
    hexField(record, 'traceId');
    hexField(record, 'spanId');
  });
}
