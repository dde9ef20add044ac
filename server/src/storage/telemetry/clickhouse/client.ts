/**
 * The ClickHouse engine's one way to the server: the official `@clickhouse/client` over the HTTP
 * interface. Every insert is synchronous (`async_insert = 0`): when it resolves the rows are stored,
 * which is what a 2xx on ingest promises. 64-bit integers come back as JSON strings (the client's
 * default); the adapters turn them into numbers (times, counts: below 2^53) or bigints (series ids).
 */
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import type { ClickHouseSettings } from '../../../config.js';

export type QueryParams = Record<string, unknown>;

export interface ChClient {
  readonly settings: ClickHouseSettings;
  /** Rows of a SELECT as objects (JSONEachRow). Parameters are `{name:Type}` placeholders, sent apart from the SQL. */
  query<T = Record<string, unknown>>(sql: string, params?: QueryParams): Promise<T[]>;
  /** Stores the rows (JSONEachRow); resolves when they are stored. */
  insert(table: string, rows: readonly object[]): Promise<void>;
  /** A statement with no result (DDL, DELETE, ALTER). */
  command(sql: string, params?: QueryParams): Promise<void>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

export function chClient(settings: ClickHouseSettings, opts: { database?: string; requestTimeoutMs?: number } = {}): ChClient {
  const client: ClickHouseClient = createClient({
    url: settings.url,
    username: settings.user,
    password: settings.password,
    database: opts.database ?? settings.database,
    request_timeout: opts.requestTimeoutMs ?? 60_000,
    application: 'svc',
    // Long parameter lists (a flush's trace ids) go in the body, never in an over-long URL.
    use_multipart_params_auto: true,
    clickhouse_settings: {
      async_insert: 0,
      // 64-bit integers as JSON strings: series ids pass 2^53 (the adapters convert).
      output_format_json_quote_64bit_integers: 1,
      // One time zone for every reader.
      session_timezone: 'UTC',
      // DELETE FROM (lightweight deletes) and ALTER ... DELETE return once the rows are gone from reads.
      lightweight_deletes_sync: '2',
      mutations_sync: '2',
      // A FINAL read of the summaries may still skip granules by their indexes.
      use_skip_indexes_if_final: 1,
      // Cluster: an insert into a Distributed table returns once the shards stored it, and a subquery reads
      // each shard's local table (a project's rows are all on one shard).
      ...(settings.cluster ? { distributed_foreground_insert: 1, distributed_product_mode: 'local' as const } : {}),
    },
  });
  return {
    settings,
    async query<T>(sql: string, params?: QueryParams) {
      const rs = await client.query({ query: sql, format: 'JSONEachRow', query_params: params });
      return (await rs.json()) as T[];
    },
    async insert(table, rows) {
      if (rows.length === 0) return;
      await client.insert({ table, values: rows as object[], format: 'JSONEachRow' });
    },
    async command(sql, params) {
      await client.command({ query: sql, query_params: params });
    },
    async ping() {
      const r = await client.ping();
      if (!r.success) throw r.error;
    },
    close: () => client.close(),
  };
}
