/**
 * What the summaries keep of a stored span (domains/agent-runs/summary.ts `SpanDigest`): built from a span row
 * the writer stores, or read back from `spans` (a stored trace the writer no longer remembers, the backfill).
 * Never its attributes: they are never summarized.
 */
import type { SpanDigest } from '../../../domains/agent-runs/summary.js';
import { numOrNull, strOrNull } from './agent-runs-sql.js';
import type { SpanRow } from '../../../domains/traces/rows.js';

/** The `spans` columns a digest reads, in `digestsOf` order. */
export { DIGEST_COLUMNS } from '../row-mappers.js';

/** Digests of rows read with DIGEST_COLUMNS, column by column (one chunk's columns). */
export function digestsOf(columns: readonly (readonly unknown[])[], rowCount: number): (SpanDigest & { traceId: string })[] {
  const out: (SpanDigest & { traceId: string })[] = new Array(rowCount);
  const c = columns;
  for (let i = 0; i < rowCount; i++) {
    out[i] = {
      traceId: String(c[0][i]),
      spanId: String(c[1][i]),
      parentSpanId: strOrNull(c[2][i]),
      name: String(c[3][i]),
      serviceName: strOrNull(c[4][i]),
      environment: strOrNull(c[5][i]),
      statusCode: String(c[6][i]),
      startUs: Number(c[7][i]),
      endUs: Number(c[8][i]),
      ingestedAtUs: Number(c[9][i]),
      canonicalOperation: String(c[10][i]),
      responseStatus: strOrNull(c[11][i]),
      outcome: strOrNull(c[12][i]),
      agentName: strOrNull(c[13][i]),
      agentId: strOrNull(c[14][i]),
      observationKey: strOrNull(c[15][i]),
      sessionKey: strOrNull(c[16][i]),
      turnId: strOrNull(c[17][i]),
      runStatus: strOrNull(c[18][i]),
      terminalReason: strOrNull(c[19][i]),
      model: strOrNull(c[20][i]),
      provider: strOrNull(c[21][i]),
      inputTokens: numOrNull(c[22][i]),
      outputTokens: numOrNull(c[23][i]),
      reportedCostNanos: numOrNull(c[24][i]),
      safetyCheck: c[25][i] === true,
    };
  }
  return out;
}

/** What the summaries keep of a stored span (not its attributes: they are never summarized). */
export function digestOf(r: SpanRow, ingestedAtUs: number): SpanDigest & { traceId: string } {
  return {
    traceId: r.traceId,
    spanId: r.spanId,
    parentSpanId: r.parentSpanId,
    name: r.name,
    serviceName: r.serviceName,
    environment: r.environment,
    statusCode: r.statusCode,
    startUs: r.startUs,
    endUs: r.endUs,
    ingestedAtUs,
    canonicalOperation: r.canonicalOperation,
    responseStatus: r.responseStatus,
    outcome: r.outcome,
    agentName: r.agentName,
    agentId: r.agentId,
    observationKey: r.observationKey,
    sessionKey: r.sessionKey,
    turnId: r.turnId,
    runStatus: r.runStatus,
    terminalReason: r.terminalReason,
    model: r.model,
    provider: r.provider,
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens,
    reportedCostNanos: r.reportedCostNanos,
    safetyCheck: r.safetyCheck,
  };
}
