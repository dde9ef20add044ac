/**
 * chdb's native addon, for the two entry points the engine needs beyond chdb's public wrappers (engine.ts).
 */
import { createRequire } from 'node:module';

/** What chdb's native addon returns for a query. */
export interface NativeQueryResult {
  bytes: Uint8Array;
  elapsed: number;
  rowsRead?: number;
  bytesRead?: number;
}
/** What chdb's native addon returns for an insert with a raw payload. */
export interface NativeInsertResult {
  elapsed: number;
  rowsWritten: number;
  bytesWritten: number;
}
/** The two entry points of chdb's native addon used here (chdb 3.4.0; the JS wrappers do not expose them as needed). */
export interface NativeAddon {
  QueryAsyncConnection(conn: unknown, sql: string, format: string, params?: Record<string, string>): Promise<NativeQueryResult>;
  InsertRawAsyncConnection(conn: unknown, prefix: string, data: Buffer, countLines: boolean): Promise<NativeInsertResult>;
}

/**
 * The native addon, through chdb's own loader (the same cached instance chdb's Session uses). Two things need it
 * rather than the public wrappers: binding `param_` values verbatim (the wrappers re-escape JS strings, which would
 * change what the client sent), and inserting a raw payload after an arbitrary INSERT statement (the wrappers only
 * take a bare table name, not `INSERT INTO db.t (a, b) SETTINGS … FORMAT X`).
 */
export function loadNative(): NativeAddon {
  const require = createRequire(import.meta.url);
  const chdbMain = require.resolve('chdb');
  const loader = createRequire(chdbMain)('./dist/loader.js') as { loadNative(): NativeAddon };
  const native = loader.loadNative();
  if (typeof native.QueryAsyncConnection !== 'function' || typeof native.InsertRawAsyncConnection !== 'function') {
    throw new Error('this chdb version does not provide QueryAsyncConnection/InsertRawAsyncConnection (chdb 3.4.0 does)');
  }
  return native;
}
