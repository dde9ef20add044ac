/**
 * What the HTTP layer asks of the engine and gets back (engine.ts, http.ts): a request, its session, the result
 * with ClickHouse's summary header, and a ClickHouse exception.
 */

/** The `X-ClickHouse-Summary` header, as ClickHouse sends it (all values strings). */
export interface Summary {
  read_rows: string;
  read_bytes: string;
  written_rows: string;
  written_bytes: string;
  total_rows_to_read: string;
  result_rows: string;
  result_bytes: string;
  elapsed_ns: string;
}

export interface ExecSession {
  id: string;
  /** Seconds of inactivity after which the session is closed (ClickHouse's `session_timeout`, default 60). */
  timeoutSec: number;
  /** `session_check=1`: fail with SESSION_NOT_FOUND instead of creating the session. */
  check: boolean;
  /** `close_session=1`: close the session after this query. */
  close: boolean;
}

export interface ExecRequest {
  /** The SQL text. With `data`, the INSERT statement the payload belongs to. */
  sql: string;
  /** A raw insert payload (the request body after `?query=INSERT … FORMAT X`), handed to the engine as bytes. */
  data?: Buffer;
  /** The output format when the SQL has no FORMAT clause (`default_format`, else TabSeparated). */
  defaultFormat: string;
  /** ClickHouse settings, in the order received. */
  settings: Array<[string, string]>;
  /** `{name:Type}` parameter values, as sent (`param_<name>`). */
  params: Record<string, string>;
  /** The current database for this query (`database`). */
  database?: string;
  session?: ExecSession;
}

export interface ExecResult {
  body: Buffer;
  summary: Summary;
}

/** A ClickHouse exception: what the HTTP layer turns into `Code: N. DB::Exception: … (NAME) (version …)`. */
export class EngineError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly errorName: string,
  ) {
    super(message);
  }
}

/** A summary header from the counts the engine reports (absent counts are 0). */
export function summary(fields: Partial<Record<keyof Summary, number>>): Summary {
  const s = (n: number | undefined) => String(Math.max(0, Math.round(n ?? 0)));
  return {
    read_rows: s(fields.read_rows),
    read_bytes: s(fields.read_bytes),
    written_rows: s(fields.written_rows),
    written_bytes: s(fields.written_bytes),
    total_rows_to_read: s(fields.total_rows_to_read),
    result_rows: s(fields.result_rows),
    result_bytes: s(fields.result_bytes),
    elapsed_ns: s(fields.elapsed_ns),
  };
}
