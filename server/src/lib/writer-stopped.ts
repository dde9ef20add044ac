/** A telemetry writer refused rows because it is stopped (the server is shutting down): ingest answers 503. */
export class WriterStoppedError extends Error {
  constructor(what: string) {
    super(`the ${what} writer is stopped`);
  }
}

/**
 * A telemetry writer without transactions (ClickHouse) could not store all of a request's rows: some may be
 * stored. Ingest answers 503; the client's retry is safe (every read takes one copy of a row stored twice).
 */
export class PartialWriteError extends Error {
  constructor(
    what: string,
    readonly cause: unknown,
  ) {
    super(`the ${what} could not all be stored: ${(cause as Error)?.message ?? String(cause)}`);
  }
}
