import path from 'node:path';
import { JOB_SETTING_VARS, type JobSettings } from './jobs/settings.js';
import { uiDir } from './http/ui.js';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** PostgreSQL server mode for control data when set; SQLite in the data dir otherwise. */
  databaseUrl?: string;
  logLevel: LogLevel;
  init: { orgId?: string; projectId?: string; apiKey?: string };
  /** Largest accepted request body (bytes, after decompression for OTLP). */
  bodyLimit: number;
  /** Largest accepted OTLP request (bytes, after decompression). */
  otlpBodyLimit: number;
  /**
   * The embedded telemetry store (DuckDB): worker threads of the instance (SVC_DUCKDB_THREADS, 1 to 256; default
   * 0: DuckDB's own, one per core), its memory limit (SVC_DUCKDB_MEMORY_LIMIT, a DuckDB size such as `2GB` or `50%`;
   * default DuckDB's 80 % of RAM) and its reader connections (SVC_DUCKDB_READERS, 1 to 64, default 4; the writer has its own).
   */
  duckdb: { threads: number; memoryLimit?: string; readers: number };
  /** The scale-out telemetry engine when SVC_CLICKHOUSE_URL is set (docs/scale-out.md); the embedded DuckDB store otherwise. */
  clickhouse?: ClickHouseSettings;
  /** Mark session cookies `Secure` (HTTPS only); off by default because the quickstart serves plain http on localhost. */
  cookieSecure: boolean;
  /** Days an asset may stay unreviewed or unowned before the review-window sweep raises a signal (SVC_ASSET_REVIEW_WINDOW_DAYS, default 7). */
  assetReviewWindowDays: number;
  /**
   * The origin clients reach this service at (SVC_PUBLIC_URL). The OAuth issuer is `<publicUrl>/oauth`;
   * it must be fixed, because issued tokens and the published metadata name it.
   */
  publicUrl: string;
  /** The built browser UI (SVC_UI_DIR, else web/dist of this checkout); null when it was never built. */
  uiDir: string | null;
  /**
   * The secret API-key hashes are keyed with (SVC_KEY_HASH_SECRET, base64, at least 32 bytes). When
   * not set, main.ts reads or creates `<dataDir>/key-hash.secret`; nodes sharing one PostgreSQL must
   * share it.
   */
  keyHashSecret?: Buffer;
  /** The background job runner (SVC_JOBS_*; see docs/jobs.md). */
  jobs: JobSettings;
  /** Seconds a process caches a project's content policy (SVC_CONTENT_POLICY_TTL_SECONDS, 0 to 30, default 30; docs/content-policy.md). */
  contentPolicyTtlSeconds: number;
  /** Seconds a process caches a project's telemetry retention windows (SVC_RETENTION_TTL_SECONDS, 0 to 30, default 30; docs/retention.md). */
  retentionTtlSeconds: number;
  /** The model judge of evaluations (SVC_JUDGE_*; docs/evaluations.md). */
  judge: JudgeSettings;
  /**
   * The evaluation sampling job (docs/evaluations-sampling.md): seconds between ticks
   * (SVC_EVAL_SAMPLING_INTERVAL_SECONDS, 5 to 86400, default 60) and the settle delay a run waits after its
   * start before a rule looks at it (SVC_EVAL_SAMPLING_SETTLE_SECONDS, 0 to 86400, default 300).
   */
  evaluationSampling: { everySeconds: number; settleSeconds: number };
}

/** Where the ClickHouse telemetry engine is (SVC_CLICKHOUSE_*). */
export interface ClickHouseSettings {
  /** The HTTP(S) interface without credentials or database, e.g. `http://ch.internal:8123`. */
  url: string;
  /** From the URL's user part or SVC_CLICKHOUSE_USER (default `default`). */
  user: string;
  /** From the URL's password part or SVC_CLICKHOUSE_PASSWORD (default empty). */
  password: string;
  /** From the URL's path or SVC_CLICKHOUSE_DATABASE (default `svc`); created when missing. */
  database: string;
  /** SVC_CLICKHOUSE_CLUSTER: replicated tables and Distributed tables `ON CLUSTER` this cluster, sharded by project. */
  cluster?: string;
}

/** The OpenAI-compatible chat-completions endpoint model-judge evaluations call. */
export interface JudgeSettings {
  /** SVC_JUDGE_BASE_URL, e.g. `https://api.openai.com/v1`; unset: no judge (judge evaluations answer 503 `judge_not_configured`). */
  baseUrl?: string;
  /** SVC_JUDGE_API_KEY, sent as `Authorization: Bearer`. */
  apiKey?: string;
  /** SVC_JUDGE_MODEL: the model asked when an evaluator names none. */
  defaultModel?: string;
  /** SVC_JUDGE_PROVIDER: the provider the judge model's prices are listed under in a project's price table; unset: the any-provider entry. */
  provider?: string;
  /** SVC_JUDGE_TIMEOUT_SECONDS: per call, 1 to 300, default 60. */
  timeoutSeconds: number;
  /** SVC_JUDGE_MAX_ATTEMPTS: calls per evaluation (retries included), 1 to 10, default 3. */
  maxAttempts: number;
}

const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function intVar(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw new Error(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  return Number(raw);
}

function boolVar(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw !== 'true' && raw !== 'false') throw new Error(`${name} must be true or false, got "${raw}"`);
  return raw === 'true';
}

/** The URL a client on this machine reaches a server listening on `host:port` at. */
export function localUrl(host: string, port: number): string {
  const h = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return `http://${h}:${port}`;
}

function publicUrl(env: NodeJS.ProcessEnv, host: string, port: number): string {
  const raw = env.SVC_PUBLIC_URL;
  if (raw === undefined || raw === '') return localUrl(host, port);
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error(`SVC_PUBLIC_URL must be an absolute http(s) URL, got "${raw}"`);
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.search || u.hash)
    throw new Error(`SVC_PUBLIC_URL must be an absolute http(s) URL without query or fragment, got "${raw}"`);
  return u.href.replace(/\/+$/, '');
}

/**
 * `SVC_DATA_DIR` (default `./data`) is relative to the directory the user ran the command in:
 * `npm start` runs its script from the package root (and npm records the caller's directory in
 * INIT_CWD), so `process.cwd()` alone would put the data wherever the package happens to be.
 */
function dataDir(env: NodeJS.ProcessEnv): string {
  const base = env.INIT_CWD || process.cwd();
  return path.resolve(base, env.SVC_DATA_DIR || './data');
}

function keyHashSecret(env: NodeJS.ProcessEnv): Buffer | undefined {
  const raw = env.SVC_KEY_HASH_SECRET;
  if (raw === undefined || raw === '') return undefined;
  const bytes = /^[A-Za-z0-9+/_-]+={0,2}$/.test(raw.trim()) ? Buffer.from(raw.trim(), 'base64') : Buffer.alloc(0);
  if (bytes.length < 32) throw new Error('SVC_KEY_HASH_SECRET must be base64 of at least 32 bytes (e.g. `openssl rand -base64 32`)');
  return bytes;
}

function judgeSettings(env: NodeJS.ProcessEnv): JudgeSettings {
  const text = (name: string) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  let baseUrl = text('SVC_JUDGE_BASE_URL');
  if (baseUrl !== undefined) {
    let u: URL | undefined;
    try {
      u = new URL(baseUrl);
    } catch {
      u = undefined;
    }
    if (!u || (u.protocol !== 'http:' && u.protocol !== 'https:') || u.search || u.hash)
      throw new Error(`SVC_JUDGE_BASE_URL must be an absolute http(s) URL without query or fragment, got "${baseUrl}"`);
    baseUrl = u.href.replace(/\/+$/, '');
  }
  return {
    baseUrl,
    apiKey: text('SVC_JUDGE_API_KEY'),
    defaultModel: text('SVC_JUDGE_MODEL')?.trim() || undefined,
    provider: text('SVC_JUDGE_PROVIDER')?.trim() || undefined,
    timeoutSeconds: intVar(env, 'SVC_JUDGE_TIMEOUT_SECONDS', 60, 1, 300),
    maxAttempts: intVar(env, 'SVC_JUDGE_MAX_ATTEMPTS', 3, 1, 10),
  };
}

function jobSettings(env: NodeJS.ProcessEnv): JobSettings {
  const n = (k: keyof typeof JOB_SETTING_VARS) => {
    const [name, fallback, min, max] = JOB_SETTING_VARS[k];
    return intVar(env, name, fallback, min, max);
  };
  return {
    enabled: boolVar(env, 'SVC_JOBS_ENABLED', true),
    pollIntervalMs: n('pollIntervalMs'),
    leaseSeconds: n('leaseSeconds'),
    maxAttempts: n('maxAttempts'),
    concurrency: n('concurrency'),
    shutdownGraceSeconds: n('shutdownGraceSeconds'),
  };
}

const CH_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** SVC_CLICKHOUSE_URL (`http(s)://[user[:password]@]host[:port][/database]`) and its companions; undefined when unset. */
export function clickhouseSettings(env: NodeJS.ProcessEnv): ClickHouseSettings | undefined {
  const raw = env.SVC_CLICKHOUSE_URL;
  if (!raw) {
    for (const name of ['SVC_CLICKHOUSE_CLUSTER', 'SVC_CLICKHOUSE_DATABASE', 'SVC_CLICKHOUSE_USER', 'SVC_CLICKHOUSE_PASSWORD'])
      if (env[name]) throw new Error(`${name} is set but SVC_CLICKHOUSE_URL is not: set the URL of ClickHouse's HTTP interface too`);
    return undefined;
  }
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new Error('SVC_CLICKHOUSE_URL must be a URL such as http://user:password@host:8123/database');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error(`SVC_CLICKHOUSE_URL must use http or https (ClickHouse's HTTP interface), got ${u.protocol}`);
  if (u.search || u.hash) throw new Error('SVC_CLICKHOUSE_URL takes no query or fragment; use SVC_CLICKHOUSE_* variables for settings');
  const fromPath = decodeURIComponent(u.pathname.replace(/^\/+|\/+$/g, ''));
  const database = env.SVC_CLICKHOUSE_DATABASE || fromPath || 'svc';
  if (!CH_IDENTIFIER.test(database)) throw new Error(`the ClickHouse database must be letters, digits and _ (not starting with a digit), got "${database}"`);
  const cluster = env.SVC_CLICKHOUSE_CLUSTER || undefined;
  if (cluster !== undefined && !CH_IDENTIFIER.test(cluster)) throw new Error(`SVC_CLICKHOUSE_CLUSTER must be letters, digits and _ (not starting with a digit), got "${cluster}"`);
  const user = env.SVC_CLICKHOUSE_USER || decodeURIComponent(u.username) || 'default';
  const password = env.SVC_CLICKHOUSE_PASSWORD ?? (u.password ? decodeURIComponent(u.password) : '');
  return { url: `${u.protocol}//${u.host}`, user, password, database, cluster };
}

function duckdbSettings(env: NodeJS.ProcessEnv): Config['duckdb'] {
  const memoryLimit = env.SVC_DUCKDB_MEMORY_LIMIT || undefined;
  if (memoryLimit !== undefined && !/^\d+(\.\d+)?\s*(%|[KMGT]i?B|B)$/i.test(memoryLimit))
    throw new Error(`SVC_DUCKDB_MEMORY_LIMIT must be a size such as 2GB, 512MiB or 50%, got "${memoryLimit}"`);
  return { threads: intVar(env, 'SVC_DUCKDB_THREADS', 0, 0, 256), memoryLimit, readers: intVar(env, 'SVC_DUCKDB_READERS', 4, 1, 64) };
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = (env.SVC_LOG_LEVEL || 'info') as LogLevel;
  if (!LEVELS.includes(logLevel)) throw new Error(`SVC_LOG_LEVEL must be one of ${LEVELS.join(', ')}`);
  const port = intVar(env, 'SVC_PORT', 8080, 0, 65535);
  const host = env.SVC_HOST || '127.0.0.1';
  return {
    port,
    host,
    dataDir: dataDir(env),
    databaseUrl: env.DATABASE_URL || undefined,
    logLevel,
    init: {
      orgId: env.SVC_INIT_ORG_ID || undefined,
      projectId: env.SVC_INIT_PROJECT_ID || undefined,
      apiKey: env.SVC_INIT_API_KEY || undefined,
    },
    bodyLimit: intVar(env, 'SVC_BODY_LIMIT_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
    otlpBodyLimit: intVar(env, 'SVC_OTLP_BODY_LIMIT_BYTES', 16 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    cookieSecure: boolVar(env, 'SVC_COOKIE_SECURE', false),
    duckdb: duckdbSettings(env),
    clickhouse: clickhouseSettings(env),
    assetReviewWindowDays: intVar(env, 'SVC_ASSET_REVIEW_WINDOW_DAYS', 7, 1, 365),
    publicUrl: publicUrl(env, host, port),
    uiDir: uiDir(env),
    keyHashSecret: keyHashSecret(env),
    jobs: jobSettings(env),
    contentPolicyTtlSeconds: intVar(env, 'SVC_CONTENT_POLICY_TTL_SECONDS', 30, 0, 30),
    retentionTtlSeconds: intVar(env, 'SVC_RETENTION_TTL_SECONDS', 30, 0, 30),
    judge: judgeSettings(env),
    evaluationSampling: {
      everySeconds: intVar(env, 'SVC_EVAL_SAMPLING_INTERVAL_SECONDS', 60, 5, 86_400),
      settleSeconds: intVar(env, 'SVC_EVAL_SAMPLING_SETTLE_SECONDS', 300, 0, 86_400),
    },
  };
}
