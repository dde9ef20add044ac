/**
 * OTLP/HTTP ingestion: `POST {ingest_url}/v1/metrics` (spec 1, "Addresses"), `/v1/traces` and `/v1/logs`,
 * all with scope `ingest:write` and the same rules.
 *
 * Bodies: `application/x-protobuf` (also `application/protobuf`) or `application/json`, optionally
 * `Content-Encoding: gzip`. The limit (SVC_OTLP_BODY_LIMIT_BYTES, default 16 MiB) applies to the body
 * as received and again to the decompressed bytes, which are counted while inflating and abandoned as
 * soon as they pass it (413 `payload_too_large`). Any other content type or encoding is 415.
 *
 * The success response (200, Export*ServiceResponse) uses the request's content type. Errors do
 * not: OTLP/HTTP says an error body should be a google.rpc.Status in the request's content type, but the
 * spec's rule that every non-2xx body is `{error, message}` JSON wins, here as on every other route.
 * OTLP clients only read the status code of a failed export (and Retry-After on 503), so nothing is lost.
 */
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import type { ProjectRecord } from '../../domains/projects/store.js';
import { ApiError, invalidRequest, unsupportedMediaType } from '../../http/errors.js';
import { requestProject } from '../../http/project-scope.js';
import { ProjectQuery, errors } from '../../http/schemas.js';
import { decodeJsonRequest, decodeProtobufRequest } from './decode.js';
import { otlpRequestDoc, otlpSuccessResponse } from './openapi.js';
import { decodeLogsJson, decodeLogsProtobuf } from './logs-decode.js';
import { ingestLogs } from './logs-ingest.js';
import { ingestMetrics } from './metrics-ingest.js';
import { encodeExportResponse, encodeSignalResponse, type OtlpFormat, type OtlpSignal } from './response.js';
import { credentialOf, type SignalOutcome } from './signal-ingest.js';
import { decodeTracesJson, decodeTracesProtobuf } from './traces-decode.js';
import { ingestTraces } from './traces-ingest.js';

const gunzipAsync = promisify(gunzip) as (buf: Buffer, opts: { maxOutputLength: number }) => Promise<Buffer>;

interface OtlpBody {
  format: OtlpFormat;
  /** The media type the response is sent with (the request's, without parameters). */
  mediaType: string;
  bytes: Buffer;
}

const PROTOBUF_TYPES = ['application/x-protobuf', 'application/protobuf'];
const JSON_TYPE = 'application/json';

/** What the OTLP routes accept, named by their 415. */
const OTLP_ACCEPTS = [...PROTOBUF_TYPES, JSON_TYPE];

function mediaTypeOf(req: FastifyRequest): string {
  return String(req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
}

/** The body as sent, inflated when gzip-encoded, never more than `limit` bytes. */
async function decodedBody(req: FastifyRequest, raw: Buffer, limit: number): Promise<Buffer> {
  const encoding = String(req.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding === '' || encoding === 'identity') return raw;
  if (encoding !== 'gzip' && encoding !== 'x-gzip')
    throw new ApiError(415, 'unsupported_media_type', `Content-Encoding "${encoding}" is not supported; send gzip or no encoding`, { accepted_encodings: ['gzip', 'identity'] });
  try {
    return await gunzipAsync(raw, { maxOutputLength: limit });
  } catch (e) {
    if ((e as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
      throw new ApiError(413, 'payload_too_large', `request body is larger than ${limit} bytes after decompression`);
    throw invalidRequest('request body is not valid gzip');
  }
}

interface SignalRoute {
  path: string;
  summary: string;
  description: string;
  signal: OtlpSignal;
  operationId: string;
  /** Decodes, stores and answers what the response reports; throws ApiError (400, 503). */
  ingest(req: FastifyRequest, body: OtlpBody, project: ProjectRecord): Promise<Buffer | string>;
}

export async function otlpRoutes(root: FastifyInstance, ctx: AppContext): Promise<void> {
  const limit = ctx.config.otlpBodyLimit;
  const nowUs = () => ctx.clock.now().getTime() * 1000;
  const project = requestProject(ctx.projects);
  const signalResponse = (format: OtlpFormat, signal: OtlpSignal, o: SignalOutcome) => encodeSignalResponse(format, signal, o.rejected, o.errorMessage);

  const routes: SignalRoute[] = [
    {
      path: '/v1/metrics',
      summary: 'OTLP/HTTP metrics export',
      description:
        'ExportMetricsServiceRequest as application/x-protobuf or application/json, optionally gzip-encoded. ' +
        'A 200 means every stored data point is committed. Rejected data points are counted in partialSuccess.',
      signal: 'metrics',
      operationId: 'exportMetrics',
      async ingest(req, body, project) {
        const request = body.format === 'json' ? decodeJsonRequest(body.bytes) : decodeProtobufRequest(body.bytes);
        return encodeExportResponse(body.format, await logged(req, project.id, 'metric points', async () => ingestMetrics(ctx.metricsWriter, project, request, await ctx.contentPolicy.storeAccess(project.id))));
      },
    },
    {
      path: '/v1/traces',
      summary: 'OTLP/HTTP traces export',
      description:
        'ExportTraceServiceRequest as application/x-protobuf or application/json (trace and span ids as hex), optionally gzip-encoded. ' +
        'A 200 means every stored span is committed. The agent model (runs, steps, agent events) is derived per span at ingest. ' +
        "Spans with invalid ids or times are counted in partialSuccess; spans dropped by the project's sampling_rate are not rejected.",
      signal: 'traces',
      operationId: 'exportTraces',
      async ingest(req, body, project) {
        const input = body.format === 'json' ? decodeTracesJson(body.bytes) : decodeTracesProtobuf(body.bytes);
        const store = await ctx.contentPolicy.storeAccess(project.id);
        const outcome = await logged(req, project.id, 'spans', () => ingestTraces(ctx.spansWriter, project, credentialOf(req.principal), input, nowUs(), (keys) =>
            // A never-seen observation key becomes an asset right away (in the background; known keys cost a set lookup).
          {
            ctx.assets.noteSightings(project.id, keys, (e) => req.log.error({ err: e }, 'asset discovery after ingest failed'));
            // Telemetry of a killed agent from a key outside the kill's approved set raises a signal.
            const keyId = req.principal.keyId;
            if (keyId !== null)
              ctx.assets.afterDiscovery(() => ctx.quarantines.noteSightings(project.orgId, project.id, keyId, [...keys])).catch((e) =>
                req.log.error({ err: e }, 'killed-credential check after ingest failed'),
              );
          },
          store,
          ),
        );
        return signalResponse(body.format, 'traces', outcome);
      },
    },
    {
      path: '/v1/logs',
      summary: 'OTLP/HTTP logs export',
      description:
        'ExportLogsServiceRequest as application/x-protobuf or application/json (trace and span ids as hex), optionally gzip-encoded. ' +
        "A 200 means every stored log record is committed. Records with a trace id follow their trace's sampling.",
      signal: 'logs',
      operationId: 'exportLogs',
      async ingest(req, body, project) {
        const input = body.format === 'json' ? decodeLogsJson(body.bytes) : decodeLogsProtobuf(body.bytes);
        const outcome = await logged(req, project.id, 'log records', async () =>
          ingestLogs(ctx.logsWriter, project, input, nowUs(), () => ctx.ids.uuid(), await ctx.contentPolicy.storeAccess(project.id)),
        );
        return signalResponse(body.format, 'logs', outcome);
      },
    },
  ];

  // An encapsulated context: its content-type parsers (protobuf, and a JSON one that keeps raw bytes)
  // do not touch the /api/v1 routes.
  await root.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    // Commit what is queued before the stores close (main.ts also stops the writers explicitly).
    scope.addHook('onClose', async () => {
      await Promise.all([ctx.metricsWriter.stop(), ctx.spansWriter.stop(), ctx.logsWriter.stop()]);
      // ... and let the asset discoveries that ingest started finish.
      await ctx.assets.settled();
    });
    const parser = (format: OtlpFormat) => async (req: FastifyRequest, raw: Buffer): Promise<OtlpBody> => {
      const mediaType = format === 'json' ? JSON_TYPE : mediaTypeOf(req);
      return { format, mediaType, bytes: await decodedBody(req, raw, limit) };
    };
    scope.addContentTypeParser(PROTOBUF_TYPES, { parseAs: 'buffer', bodyLimit: limit }, parser('protobuf'));
    scope.addContentTypeParser(JSON_TYPE, { parseAs: 'buffer', bodyLimit: limit }, parser('json'));

    const app = scope.withTypeProvider<TypeBoxTypeProvider>();
    for (const r of routes) {
      app.post(
        r.path,
        {
          bodyLimit: limit,
          // Telemetry is data, not a change of configuration: ingestion is not written to the audit trail.
          config: { scope: 'ingest:write', telemetryWrite: true, audit: 'none', accepts: OTLP_ACCEPTS, openapi: otlpRequestDoc(r.signal, PROTOBUF_TYPES, JSON_TYPE) },
          schema: {
            operationId: r.operationId,
            tags: ['ingest'],
            summary: r.summary,
            description: r.description,
            querystring: ProjectQuery,
            response: {
              200: otlpSuccessResponse(r.signal, PROTOBUF_TYPES, JSON_TYPE),
              ...errors(400, 401, 403, 404, 413, 415, 503),
            },
          },
        },
        async (req, reply) => {
          const body = req.body as OtlpBody | undefined;
          if (!body) throw unsupportedMediaType(OTLP_ACCEPTS, 'the request has no body');
          const payload = await r.ingest(req, body, await project(req));
          return reply.code(200).type(body.mediaType).send(payload);
        },
      );
    }
  });
}

/** Logs the cause of a 5xx (nothing committed) before it is answered. */
async function logged<T>(req: FastifyRequest, projectId: string, what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    if (e instanceof ApiError && e.cause) req.log.error({ err: e.cause, project_id: projectId }, `${what} not committed`);
    throw e;
  }
}
