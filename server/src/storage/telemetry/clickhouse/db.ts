/**
 * The ClickHouse telemetry store: a client on the configured database, its schema created at open
 * (idempotent DDL, schema.ts), and the table names reads, inserts and deletes use in either mode.
 */
import type { ClickHouseSettings } from '../../../config.js';
import { chClient, type ChClient } from './client.js';
import { deleteTarget, schemaStatements, type SchemaOptions } from './schema.js';

export interface ChTelemetryDb {
  client: ChClient;
  schema: SchemaOptions;
  /** Where a lightweight DELETE of this table's rows goes (the table, or every shard's local table ON CLUSTER). */
  deleteTarget(table: string): string;
  close(): Promise<void>;
}

export async function openChTelemetryDb(settings: ClickHouseSettings, opts: { log?: (line: string) => void } = {}): Promise<ChTelemetryDb> {
  const schema: SchemaOptions = { database: settings.database, cluster: settings.cluster };
  // The database may not exist yet: the DDL runs on the server's default database.
  const admin = chClient(settings, { database: 'default' });
  try {
    for (const stmt of schemaStatements(schema)) await admin.command(stmt);
  } catch (e) {
    throw new Error(`cannot create the telemetry tables on ClickHouse at ${settings.url} (database ${settings.database}): ${(e as Error).message}`);
  } finally {
    await admin.close();
  }
  opts.log?.(`telemetry: ClickHouse at ${settings.url}, database ${settings.database}${settings.cluster ? `, cluster ${settings.cluster}` : ''}`);
  const client = chClient(settings);
  return {
    client,
    schema,
    deleteTarget: (table) => deleteTarget(schema, table),
    close: () => client.close(),
  };
}
