/**
 * OTLP/HTTP metrics: `POST {ingest_url}/v1/metrics` (spec 1, "Addresses"), scope `ingest:write`.
 *
 * Bodies: `application/x-protobuf` (also `application/protobuf`) or `application/json`, optionally
 * `Content-Encoding: gzip`. The limit (SVC_OTLP_BODY_LIMIT_BYTES, default 16 MiB) applies to the body
 * as received and again to the decompressed bytes, which are counted while inflating and abandoned as
 * soon as they pass it (413 `payload_too_large`). Any other content type or encoding is 415.
 *
 * The success response (200, ExportMetricsServiceResponse) uses the request's content type. Errors do
 * not: OTLP/HTTP says an error body should be a google.rpc.Status in the request's content type, but the
 * spec's rule that every non-2xx body is `{error, message}` JSON wins, here as on every other route.
 * OTLP clients only read the status code of a failed export (and Retry-After on 503), so nothing is lost.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { ApiError, invalidRequest } from '../../http/errors.js';
import { resolveProject } from '../../http/project-scope.js';
import { ProjectSelectorQuery, errors } from '../../http/schemas.js';
import { decodeJsonRequest, decodeProtobufRequest } from './decode.js';
import { ingestMetrics } from './metrics-ingest.js';
import { encodeExportResponse, type OtlpFormat } from './response.js';

const gunzipAsync = promisify(gunzip) as (buf: Buffer, opts: { maxOutputLength: number }) => Promise<Buffer>;

interface OtlpBody {
  format: OtlpFormat;
  /** The media type the response is sent with (the request's, without parameters). */
  mediaType: string;
  bytes: Buffer;
}

const PROTOBUF_TYPES = ['application/x-protobuf', 'application/protobuf'];
const JSON_TYPE = 'application/json';

const unsupportedMediaType = (message: string) => new ApiError(415, 'unsupported_media_type', message);

function mediaTypeOf(req: FastifyRequest): string {
  return String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/** The body as sent, inflated when gzip-encoded, never more than `limit` bytes. */
async function decodedBody(req: FastifyRequest, raw: Buffer, limit: number): Promise<Buffer> {
  const encoding = String(req.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return raw;
  if (encoding !== 'gzip' && encoding !== 'x-gzip')
    throw unsupportedMediaType(`Content-Encoding "${encoding}" is not supported; send gzip or no encoding`);
  try {
    return await gunzipAsync(raw, { maxOutputLength: limit });
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new ApiError(413, 'payload_too_large', `request body is larger than ${limit} bytes after decompression`);
    throw invalidRequest('request body is not valid gzip');
  }
}

export const ExportMetricsJsonResponse = Type.Object(
  {
    partialSuccess: Type.Optional(
      Type.Object({
        rejectedDataPoints: Type.String({ description: 'int64 in proto3 JSON form' }),
        errorMessage: Type.String(),
      }),
    ),
  },
  { description: 'ExportMetricsServiceResponse (OTLP JSON); partialSuccess only when data points were rejected' },
);

export async function otlpRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  const limit = ctx.config.otlpBodyLimit;
  // An encapsulated context: its content-type parsers (protobuf, and a JSON one that keeps raw bytes)
  // do not touch the /api/v1 routes.
  await root.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Commit what is queued before the stores close (main.ts also stops the writer explicitly).
    scope.addHook('onClose', async () => ctx.metricsWriter.stop());
    const parser = (format: OtlpFormat) => async (req: FastifyRequest, raw: Buffer): Promise<OtlpBody> => {
      const mediaType = format === 'json' ? JSON_TYPE : mediaTypeOf(req);
      return { format, mediaType, bytes: await decodedBody(req, raw, limit) };
    };
    scope.addContentTypeParser(PROTOBUF_TYPES, { parseAs: 'buffer', bodyLimit: limit }, parser('protobuf'));
    scope.addContentTypeParser(JSON_TYPE, { parseAs: 'buffer', bodyLimit: limit }, parser('json'));

    const app = scope.withTypeProvider<TypeBoxTypeProvider>();
    app.post(
      '/v1/metrics',
      {
        bodyLimit: limit,
        // Telemetry is data, not a change of configuration: ingestion is not written to the audit trail.
        config: { scope: 'ingest:write', audit: 'none' },
        schema: {
          tags: ['ingest'],
          summary: 'OTLP/HTTP metrics export',
          description:
            'ExportMetricsServiceRequest as application/x-protobuf or application/json, optionally gzip-encoded. ' +
            'A 200 means every stored data point is committed. Rejected data points are counted in partialSuccess.',
          querystring: Type.Object(ProjectSelectorQuery, { additionalProperties: false }),
          response: {
            200: {
              description: 'ExportMetricsServiceResponse in the request content type',
              content: {
                'application/json': { schema: ExportMetricsJsonResponse },
                'application/x-protobuf': { schema: { type: 'string', format: 'binary' } },
              },
            },
            ...errors(400, 401, 403, 404, 413, 415, 503),
          },
        },
      },
      async (req, reply) => {
        const body = req.body as OtlpBody | undefined;
        if (!body) throw unsupportedMediaType(`send the request as ${PROTOBUF_TYPES[0]} or ${JSON_TYPE}`);
        const project = await resolveProject(req.principal, ctx.projects, req.query.project_id);
        const request = body.format === 'json' ? decodeJsonRequest(body.bytes) : decodeProtobufRequest(body.bytes);
        let outcome;
        try {
          outcome = await ingestMetrics(ctx.metricsWriter, project, request);
        } catch (e) {
          if (e instanceof ApiError && e.cause) req.log.error({ err: e.cause, project_id: project.id }, 'metric points not committed');
          throw e;
        }
        return reply.code(200).type(body.mediaType).send(encodeExportResponse(body.format, outcome));
      },
    );
  });
}
