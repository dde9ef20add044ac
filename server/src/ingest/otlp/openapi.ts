/**
 * The OpenAPI description of the OTLP/HTTP routes: request bodies, the Content-Encoding header and
 * the Export*ServiceResponse shapes, as named components. The routes read their bodies as raw bytes
 * (routes.ts), so the request parts here are documentation only (`config.openapi`): they never
 * switch on Fastify's body validation.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { stringEnum } from '../../http/schemas.js';
import { REJECTED_FIELD, type OtlpSignal } from './response.js';

/** Export*ServiceResponse (OTLP JSON) of a signal; partialSuccess only when something was rejected (or a warning). */
function exportJsonResponse(signal: OtlpSignal, name: string, message: string, countDescription: string) {
  return Type.Object(
    {
      partialSuccess: Type.Optional(
        Type.Object({
          [REJECTED_FIELD[signal]]: Type.String({ description: `${countDescription} (int64 in proto3 JSON form)` }),
          errorMessage: Type.String(),
        }),
      ),
    },
    { $id: name, description: message },
  );
}

/** The OTLP/JSON request of a signal: permissive, the decoder checks the content (400 when it cannot be read). */
function exportJsonRequest(name: string, field: string, message: string) {
  return Type.Object(
    { [field]: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))) },
    { $id: name, description: `${message} in the OTLP/JSON encoding (proto3 JSON mapping; trace and span ids as hex)`, additionalProperties: true },
  );
}

const binary = (description: string) => ({ schema: { type: 'string', format: 'binary', description } });

interface SignalDoc {
  response: TSchema & { $id?: string };
  request: TSchema & { $id?: string };
  requestName: string;
}

export const OTLP_DOCS: Record<OtlpSignal, SignalDoc> = {
  metrics: {
    requestName: 'ExportMetricsServiceRequest',
    request: exportJsonRequest('OtlpMetricsJsonRequest', 'resourceMetrics', 'ExportMetricsServiceRequest'),
    response: exportJsonResponse(
      'metrics',
      'ExportMetricsServiceResponse',
      'ExportMetricsServiceResponse (OTLP JSON); partialSuccess only when data points were rejected',
      'data points rejected',
    ),
  },
  traces: {
    requestName: 'ExportTraceServiceRequest',
    request: exportJsonRequest('OtlpTracesJsonRequest', 'resourceSpans', 'ExportTraceServiceRequest'),
    response: exportJsonResponse(
      'traces',
      'ExportTraceServiceResponse',
      'ExportTraceServiceResponse (OTLP JSON); partialSuccess when spans were rejected, or with 0 rejected as a warning about context events that were not accepted',
      'spans rejected',
    ),
  },
  logs: {
    requestName: 'ExportLogsServiceRequest',
    request: exportJsonRequest('OtlpLogsJsonRequest', 'resourceLogs', 'ExportLogsServiceRequest'),
    response: exportJsonResponse(
      'logs',
      'ExportLogsServiceResponse',
      'ExportLogsServiceResponse (OTLP JSON); partialSuccess only when log records were rejected',
      'log records rejected',
    ),
  },
};

/** Every named OTLP schema, registered with the app so the description names them. */
export const OTLP_SCHEMAS = Object.values(OTLP_DOCS).flatMap((d) => [d.request, d.response]);

/** The documentation-only request parts of one signal's route (see the file comment). */
export function otlpRequestDoc(signal: OtlpSignal, protobufTypes: string[], jsonType: string) {
  const d = OTLP_DOCS[signal];
  const proto = binary(`${d.requestName} in the protobuf binary encoding`);
  return {
    body: {
      description: `${d.requestName}, optionally gzip-encoded (Content-Encoding: gzip)`,
      content: { ...Object.fromEntries(protobufTypes.map((t) => [t, proto])), [jsonType]: { schema: Type.Ref(d.request.$id!) } },
    },
    headers: Type.Object({
      'content-encoding': Type.Optional(
        stringEnum(['gzip', 'x-gzip', 'identity'], {
          description: 'gzip (or x-gzip) when the body is compressed; the size limit applies before and after inflating. Any other encoding is 415.',
        }),
      ),
    }),
  };
}

/** The documented success answer of one signal's route: the response in the request's content type. */
export function otlpSuccessResponse(signal: OtlpSignal, protobufTypes: string[], jsonType: string) {
  const d = OTLP_DOCS[signal];
  const name = d.response.$id!;
  const proto = binary(`${name} in the protobuf binary encoding`);
  return {
    description: `${name} in the request content type`,
    content: { [jsonType]: { schema: Type.Ref(name) }, ...Object.fromEntries(protobufTypes.map((t) => [t, proto])) },
  };
}
