/** A telemetry writer refused rows because it is stopped (the server is shutting down): ingest answers 503. */
export class WriterStoppedError extends Error {
  constructor(what: string) {
    super(`the ${what} writer is stopped`);
  }
}
