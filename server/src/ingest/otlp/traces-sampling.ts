/**
 * Trace sampling (docs/agent-model.md "Sampling"): a project's `sampling_rate` keeps a trace when
 * h(trace_id) < sampling_rate, where h is the first 8 bytes of SHA-256 of the 16-byte trace id read as an
 * unsigned integer over 2^64. The answer depends on the trace id and the rate only, so every span (and
 * every log) of a trace is kept or dropped together, on every node, whatever request it arrives in.
 */
import { createHash } from 'node:crypto';

const TWO32 = 4294967296;
const TWO64 = TWO32 * TWO32;

/** h(trace_id) in [0, 1) for the 16 raw bytes of a trace id. */
export function traceHash(traceId: Uint8Array): number {
  const d = createHash('sha256').update(traceId).digest();
  // Rounded to a double: the comparison with the rate (itself a double) loses nothing that matters,
  // and the rounding is the same on every node.
  return (d.readUInt32BE(0) * TWO32 + d.readUInt32BE(4)) / TWO64;
}

/** Whether a trace (raw 16 bytes) is kept at `rate`. Rate 0 keeps none, 1 (or more) keeps all. */
export function keepTraceBytes(traceId: Uint8Array, rate: number): boolean {
  if (rate >= 1) return true;
  if (!(rate > 0)) return false;
  return traceHash(traceId) < rate;
}

/** Whether the trace with this id (32 hex digits, either case) is kept at `rate`. */
export function keepTrace(traceIdHex: string, rate: number): boolean {
  if (!/^[0-9a-fA-F]{32}$/.test(traceIdHex)) throw new RangeError(`not a trace id: ${JSON.stringify(traceIdHex)}`);
  return keepTraceBytes(Buffer.from(traceIdHex, 'hex'), rate);
}
