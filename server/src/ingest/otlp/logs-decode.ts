/** ExportLogsServiceRequest bodies (protobuf and OTLP JSON) as a walk over their log records (signal-decode.ts). */
import {
  LogRecordMessageType,
  decodeJsonBody,
  eachJsonItem,
  hexField,
  otlpLogs,
  protobufInput,
  treeInput,
  type LogRecordMessage,
  type SignalInput,
} from './signal-decode.js';

const NAME = 'ExportLogsServiceRequest';
const LEVELS: [string, string, string] = ['resourceLogs', 'scopeLogs', 'logRecords'];

export function decodeLogsProtobuf(bytes: Uint8Array): SignalInput<LogRecordMessage> {
  return protobufInput(bytes, LogRecordMessageType, NAME);
}

/** OTLP JSON: `traceId` and `spanId` are hex strings (any case), not base64. */
export function decodeLogsJson(bytes: Uint8Array): SignalInput<LogRecordMessage> {
  const tree = decodeJsonBody(bytes, otlpLogs.ExportLogsServiceRequest, NAME, (o) =>
    eachJsonItem(o, LEVELS, (record) => {
      hexField(record, 'traceId');
      hexField(record, 'spanId');
    }),
  );
  return treeInput(tree as Record<string, unknown>, LEVELS);
}
