/**
 * The subset of ClickHouse's HTTP interface that `@clickhouse/client` (1.23.x) uses, served over the engine in
 * `engine.ts`:
 *  - GET|HEAD /ping (and /replicas_status) -> `Ok.\n`;
 *  - GET|POST / : the query in `?query=`, in the body, or both (`query` + "\n" + body; for an INSERT the body is
 *    its payload, bytes as sent, any format the engine reads); settings as URL parameters; `param_<name>` values
 *    for `{name:Type}` placeholders; `database`, `default_format`, `query_id`, `session_id`/`session_timeout`/
 *    `session_check`/`close_session`; multipart/form-data bodies carrying `query` and `param_*` parts;
 *  - request bodies compressed with Content-Encoding gzip / deflate / br (and zstd where Node has it); responses
 *    compressed the same way when `enable_http_compression=1` and the client sends Accept-Encoding;
 *  - credentials from HTTP basic auth, `X-ClickHouse-User`/`X-ClickHouse-Key` or `user`/`password` (accepted as
 *    they come unless the server was started with a user and password);
 *  - the response headers the client reads (X-ClickHouse-Query-Id, -Summary, -Format, -Timezone) and, on an error,
 *    ClickHouse's status code, `X-ClickHouse-Exception-Code` and a `Code: N. DB::Exception: … (NAME) (version …)`
 *    body, which the client turns into a ClickHouseError with that code and type.
 * Results are produced whole before the response starts (as with `wait_end_of_query=1`), so an error always comes
 * with its status code rather than in the middle of a 200 body.
 */
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { hostname } from 'node:os';
import { Engine, EngineError, firstKeyword, trailingFormat, type ExecRequest, type ExecSession } from './engine.js';
import { clientError, compress, parseMultipart, readBody, responseEncoding } from './http-body.js';

export interface ServerOptions {
  /** The chdb data directory (created if missing). */
  path: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 8123; 0 picks a free port. */
  port?: number;
  /** When set (with `password`), requests must carry these credentials; otherwise any are accepted. */
  user?: string;
  password?: string;
  /** One line per request on stderr. */
  verbose?: boolean;
}

export interface RunningServer {
  url: string;
  host: string;
  port: number;
  path: string;
  /** The engine's `version()`, e.g. 26.7.2.1. */
  version: string;
  timezone: string;
  /** Stops accepting connections, lets the requests under way finish, and closes the engine. */
  close(): Promise<void>;
}

/** Parameters of the HTTP interface that are not settings (ClickHouse's reserved names). */
const RESERVED = new Set([
  'query',
  'database',
  'default_format',
  'query_id',
  'session_id',
  'session_timeout',
  'session_check',
  'close_session',
  'user',
  'password',
  'quota_key',
  'stacktrace',
  'role',
  'buffer_size',
  'wait_end_of_query',
  'client_protocol_version',
  'compress',
  'decompress',
]);

/** Settings that act on the HTTP layer only: read here, never SET on the engine. */
const HTTP_SETTINGS = new Set([
  'enable_http_compression',
  'http_zlib_compression_level',
  'send_progress_in_http_headers',
  'http_headers_progress_interval_ms',
  'http_response_buffer_size',
  'http_wait_end_of_query',
  'http_native_compression_disable_checksumming_on_decompress',
  'add_http_cors_header',
]);

/** HTTP status per ClickHouse error name, as ClickHouse's HTTP handler maps them; anything else is a 500. */
const STATUS_BY_ERROR = new Map<string, number>([
  ['REQUIRED_PASSWORD', 401],
  ...['UNKNOWN_USER', 'WRONG_PASSWORD', 'AUTHENTICATION_FAILED', 'SET_NON_GRANTED_ROLE'].map((n): [string, number] => [n, 403]),
  ...[
    'BAD_ARGUMENTS',
    'CANNOT_COMPILE_REGEXP',
    'CANNOT_PARSE_TEXT',
    'CANNOT_PARSE_ESCAPE_SEQUENCE',
    'CANNOT_PARSE_QUOTED_STRING',
    'CANNOT_PARSE_DATE',
    'CANNOT_PARSE_DATETIME',
    'CANNOT_PARSE_NUMBER',
    'CANNOT_PARSE_DOMAIN_VALUE_FROM_STRING',
    'CANNOT_PARSE_IPV4',
    'CANNOT_PARSE_IPV6',
    'CANNOT_PARSE_INPUT_ASSERTION_FAILED',
    'CANNOT_PARSE_UUID',
    'DUPLICATE_COLUMN',
    'ILLEGAL_COLUMN',
    'UNKNOWN_ELEMENT_IN_AST',
    'UNKNOWN_TYPE_OF_AST_NODE',
    'THERE_IS_NO_COLUMN',
    'TOO_DEEP_AST',
    'TOO_BIG_AST',
    'UNEXPECTED_AST_STRUCTURE',
    'SYNTAX_ERROR',
    'INCORRECT_DATA',
    'TYPE_MISMATCH',
    'VALUE_IS_OUT_OF_RANGE_OF_DATA_TYPE',
  ].map((n): [string, number] => [n, 400]),
  ...[
    'UNKNOWN_TABLE',
    'UNKNOWN_FUNCTION',
    'UNKNOWN_IDENTIFIER',
    'UNKNOWN_TYPE',
    'UNKNOWN_STORAGE',
    'UNKNOWN_DATABASE',
    'UNKNOWN_SETTING',
    'UNKNOWN_DIRECTION_OF_SORTING',
    'UNKNOWN_AGGREGATE_FUNCTION',
    'UNKNOWN_FORMAT',
    'UNKNOWN_DATABASE_ENGINE',
    'UNKNOWN_TYPE_OF_QUERY',
    'UNKNOWN_ROLE',
  ].map((n): [string, number] => [n, 404]),
  ['QUERY_IS_TOO_LARGE', 413],
  ['NOT_IMPLEMENTED', 501],
  ['SOCKET_TIMEOUT', 503],
  ['CANNOT_OPEN_FILE', 503],
  ['HTTP_LENGTH_REQUIRED', 411],
  ['TIMEOUT_EXCEEDED', 408],
  ['CANNOT_SCHEDULE_TASK', 503],
]);

const BINARY_FORMATS = /^(?:rowbinary|native|parquet|arrow|orc|avro|protobuf|capnproto|msgpack|bsoneachrow|npy|raw)/i;

function contentType(format: string): string {
  const f = format.toLowerCase();
  if (f.startsWith('json') || f === 'ndjson') return 'application/json; charset=UTF-8';
  if (f.startsWith('tabseparated') || f.startsWith('tsv')) return 'text/tab-separated-values; charset=UTF-8';
  if (f.startsWith('csv')) return `text/csv; charset=UTF-8; header=${f.includes('withnames') ? 'present' : 'absent'}`;
  if (BINARY_FORMATS.test(f)) return 'application/octet-stream';
  return 'text/plain; charset=UTF-8';
}

interface Credentials {
  user: string;
  password: string;
}

function credentials(req: http.IncomingMessage, fields: Map<string, string>): Credentials {
  const headerUser = req.headers['x-clickhouse-user'];
  if (typeof headerUser === 'string') return { user: headerUser, password: String(req.headers['x-clickhouse-key'] ?? '') };
  const auth = req.headers.authorization;
  if (auth && /^basic /i.test(auth)) {
    const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    return colon === -1 ? { user: decoded, password: '' } : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
  }
  return { user: fields.get('user') ?? 'default', password: fields.get('password') ?? '' };
}

function truthy(value: string | undefined): boolean {
  return value === '1' || value?.toLowerCase() === 'true';
}

/** The response codec: the first one in Accept-Encoding order that is supported. */
export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const engine = await Engine.open(opts.path);
  const displayName = hostname();
  const versionSuffix = ` (version ${engine.version})`;

  const send = (res: http.ServerResponse, status: number, headers: Record<string, string>, body: Buffer | string) => {
    const data = typeof body === 'string' ? Buffer.from(body) : body;
    res.writeHead(status, { ...headers, 'Content-Length': String(data.length) });
    res.end(data);
  };

  const sendError = (res: http.ServerResponse, common: Record<string, string>, err: EngineError) => {
    const message = /\(version [^()]*(?:\([^()]*\))?\)\s*$/.test(err.message) ? err.message : `${err.message}${versionSuffix}`;
    send(
      res,
      STATUS_BY_ERROR.get(err.errorName) ?? 500,
      { ...common, 'Content-Type': 'text/plain; charset=UTF-8', 'X-ClickHouse-Exception-Code': String(err.code) },
      `${message}\n`,
    );
  };

  const handle = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    const started = Date.now();
    const url = new URL(req.url ?? '/', 'http://localhost');
    const queryId = url.searchParams.get('query_id') || randomUUID();
    const common: Record<string, string> = {
      'X-ClickHouse-Server-Display-Name': displayName,
      'X-ClickHouse-Query-Id': queryId,
      'X-ClickHouse-Timezone': engine.timezone,
    };
    let logSql = '';
    const log = () => {
      if (opts.verbose) {
        process.stderr.write(`[clickhouse-local] ${req.method} ${url.pathname} ${res.statusCode} ${Date.now() - started}ms ${logSql.replace(/\s+/g, ' ').slice(0, 200)}\n`);
      }
    };
    res.on('finish', log);
    try {
      if (url.pathname === '/ping' || url.pathname === '/replicas_status') {
        return send(res, 200, { 'Content-Type': 'text/html; charset=UTF-8' }, req.method === 'HEAD' ? '' : 'Ok.\n');
      }
      if (url.pathname !== '/') {
        return send(
          res,
          404,
          { 'Content-Type': 'text/plain; charset=UTF-8' },
          `There is no handle ${url.pathname}\n\nUse / or /ping for health checks.\nOr /replicas_status for more sophisticated health checks.\n`,
        );
      }
      if (req.method !== 'GET' && req.method !== 'POST' && req.method !== 'HEAD') {
        throw clientError(1, 'UNSUPPORTED_METHOD', `Unsupported HTTP method ${req.method}`);
      }

      let body = await readBody(req);
      const fields = new Map<string, string>(url.searchParams);
      const contentTypeHeader = String(req.headers['content-type'] ?? '');
      const boundary = /^multipart\/form-data;.*\bboundary=(?:"([^"]+)"|([^;\s]+))/i.exec(contentTypeHeader);
      if (boundary) {
        for (const part of parseMultipart(body, boundary[1] ?? boundary[2])) {
          if (part.filename !== undefined) throw clientError(48, 'NOT_IMPLEMENTED', 'External data (file parts of a multipart body) is not supported');
          fields.set(part.name, part.value.toString('utf8'));
        }
        body = Buffer.alloc(0);
      }

      const creds = credentials(req, fields);
      if (opts.user !== undefined && (creds.user !== opts.user || creds.password !== (opts.password ?? ''))) {
        throw clientError(516, 'AUTHENTICATION_FAILED', `${creds.user}: Authentication failed: password is incorrect, or there is no user with such name`);
      }
      if (truthy(fields.get('compress')) || truthy(fields.get('decompress'))) {
        throw clientError(48, 'NOT_IMPLEMENTED', "ClickHouse's native compression (compress/decompress) is not supported; use Content-Encoding");
      }

      const settings: Array<[string, string]> = [];
      const params: Record<string, string> = {};
      for (const [name, value] of fields) {
        if (name.startsWith('param_')) params[name.slice('param_'.length)] = value;
        else if (!RESERVED.has(name) && !HTTP_SETTINGS.has(name)) settings.push([name, value]);
      }

      const query = fields.get('query');
      if (query === undefined && body.length === 0) {
        if (req.method !== 'POST') return send(res, 200, { 'Content-Type': 'text/html; charset=UTF-8' }, req.method === 'HEAD' ? '' : 'Ok.\n');
        throw clientError(62, 'SYNTAX_ERROR', 'Empty query');
      }
      const exec: ExecRequest = {
        sql: '',
        defaultFormat: fields.get('default_format') || 'TabSeparated',
        settings,
        params,
        database: fields.get('database') || undefined,
      };
      if (query !== undefined && body.length > 0) {
        if (firstKeyword(query) === 'INSERT') {
          exec.sql = query;
          exec.data = body;
        } else {
          exec.sql = `${query}\n${body.toString('utf8')}`;
        }
      } else {
        exec.sql = query ?? body.toString('utf8');
      }
      logSql = exec.sql;
      if (!exec.sql.trim()) throw clientError(62, 'SYNTAX_ERROR', 'Empty query');
      const sessionId = fields.get('session_id');
      if (sessionId) {
        const timeout = Number(fields.get('session_timeout') ?? 60);
        if (!Number.isFinite(timeout) || timeout <= 0 || timeout > 3600) {
          throw clientError(36, 'BAD_ARGUMENTS', `Invalid session timeout: '${fields.get('session_timeout')}'`);
        }
        const session: ExecSession = { id: sessionId, timeoutSec: timeout, check: truthy(fields.get('session_check')), close: truthy(fields.get('close_session')) };
        exec.session = session;
      }

      const result = await engine.execute(exec);

      const format = (firstKeyword(exec.sql) === 'INSERT' ? undefined : trailingFormat(exec.sql)) ?? exec.defaultFormat;
      const headers: Record<string, string> = {
        ...common,
        'Content-Type': contentType(format),
        'X-ClickHouse-Format': format,
        'X-ClickHouse-Summary': JSON.stringify(result.summary),
      };
      let out = result.body;
      const encoding = truthy(fields.get('enable_http_compression')) ? responseEncoding(req.headers['accept-encoding']) : undefined;
      if (encoding && out.length > 0) {
        const level = Number(fields.get('http_zlib_compression_level') ?? 3);
        out = await compress(out, encoding, Number.isInteger(level) && level >= 1 && level <= 9 ? level : 3);
        headers['Content-Encoding'] = encoding;
      }
      send(res, 200, headers, req.method === 'HEAD' ? Buffer.alloc(0) : out);
    } catch (e) {
      if (res.headersSent) {
        res.destroy();
        return;
      }
      sendError(res, common, e instanceof EngineError ? e : engine.toEngineError(e));
    }
  };

  const server = http.createServer((req, res) => {
    handle(req, res).catch((e) => {
      process.stderr.write(`[clickhouse-local] request failed: ${(e as Error).message}\n`);
      res.destroy();
    });
  });
  server.keepAliveTimeout = 10_000;
  const host = opts.host ?? '127.0.0.1';
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 8123, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (e) {
    await engine.close();
    throw e;
  }
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (opts.port ?? 8123);
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    host,
    port,
    path: opts.path,
    version: engine.version,
    timezone: engine.timezone,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const force = setTimeout(() => server.closeAllConnections(), 10_000);
        force.unref();
        await closed;
        clearTimeout(force);
        await engine.close();
      })();
      return closing;
    },
  };
}
