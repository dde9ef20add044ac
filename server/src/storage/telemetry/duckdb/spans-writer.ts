/**
 * Writes ingested spans, their events and the agent sightings they carry, with group commit
 * (rows-writer.ts): one transaction per batch of requests holds the `spans` and `span_events` rows and the
 * `agent_sightings` upsert, and a request is answered only after that transaction committed.
 */
import type { DuckDBConnection, DuckDBDataChunk, DuckDBPreparedStatement } from '@duckdb/node-api';
import type { TelemetryDb } from './open.js';
import { GroupCommitWriter, WriterStoppedError, appendChunks, rowChunks, tableLayout, type ColumnGetters, type TableLayout } from './rows-writer.js';

/** One `spans` row (agent-model columns as derived at ingest, docs/agent-model.md). Times in µs since the epoch. */
export interface SpanRow {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  kind: string;
  startUs: number;
  endUs: number;
  statusCode: string;
  statusMessage: string | null;
  serviceName: string | null;
  environment: string | null;
  scopeName: string | null;
  /** JSON object text. */
  attributes: string;
  resourceAttributes: string;
  operationName: string | null;
  canonicalOperation: string;
  responseStatus: string | null;
  outcome: string | null;
  agentName: string | null;
  agentId: string | null;
  observationKey: string | null;
  sessionKey: string | null;
  turnId: string | null;
  runStatus: string | null;
  terminalReason: string | null;
  toolName: string | null;
  model: string | null;
  provider: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  reportedCostNanos: number | null;
  safetyCheck: boolean;
  memoryItemId: string | null;
  memoryStore: string | null;
  memoryProvenance: string | null;
  memoryTrustLabel: string | null;
  contextEvents: number;
}

export interface SpanEventRow {
  traceId: string;
  spanId: string;
  index: number;
  tsUs: number;
  name: string;
  attributes: string;
  category: string | null;
  contextKind: string | null;
  /** JSON text of the typed detail of an accepted context event. */
  contextDetail: string | null;
  contextSourceIds: string[] | null;
}

/** Who sent the spans (spec 2 "Attribution entry"). */
export interface Credential {
  source: 'api_key' | 'bearer_token';
  /** '' unless the source is api_key. */
  apiKeyId: string;
}

export interface SpanBatch {
  spans: SpanRow[];
  events: SpanEventRow[];
  /** invoke_agent spans per observation key. */
  sightings: Map<string, number>;
  credential: Credential;
  /** Ingest time (µs): ingested_at_us of the rows, first and last seen of the sightings. */
  ingestedAtUs: number;
}

interface Pending {
  projectId: string;
  spans: DuckDBDataChunk[];
  events: DuckDBDataChunk[];
  sightings: Map<string, number>;
  credential: Credential;
  seenUs: number;
}

const spanColumns = (projectId: string, ingestedAtUs: number): ColumnGetters<SpanRow> => ({
  project_id: () => projectId,
  trace_id: (r) => r.traceId,
  span_id: (r) => r.spanId,
  parent_span_id: (r) => r.parentSpanId,
  name: (r) => r.name,
  kind: (r) => r.kind,
  start_us: (r) => r.startUs,
  end_us: (r) => r.endUs,
  status_code: (r) => r.statusCode,
  status_message: (r) => r.statusMessage,
  service_name: (r) => r.serviceName,
  environment: (r) => r.environment,
  scope_name: (r) => r.scopeName,
  attributes: (r) => r.attributes,
  resource_attributes: (r) => r.resourceAttributes,
  operation_name: (r) => r.operationName,
  canonical_operation: (r) => r.canonicalOperation,
  response_status: (r) => r.responseStatus,
  outcome: (r) => r.outcome,
  agent_name: (r) => r.agentName,
  agent_id: (r) => r.agentId,
  observation_key: (r) => r.observationKey,
  session_key: (r) => r.sessionKey,
  turn_id: (r) => r.turnId,
  run_status: (r) => r.runStatus,
  terminal_reason: (r) => r.terminalReason,
  tool_name: (r) => r.toolName,
  model: (r) => r.model,
  provider: (r) => r.provider,
  input_tokens: (r) => r.inputTokens,
  output_tokens: (r) => r.outputTokens,
  reported_cost_nanos: (r) => r.reportedCostNanos,
  safety_check: (r) => r.safetyCheck,
  memory_item_id: (r) => r.memoryItemId,
  memory_store: (r) => r.memoryStore,
  memory_provenance: (r) => r.memoryProvenance,
  memory_trust_label: (r) => r.memoryTrustLabel,
  context_events: (r) => r.contextEvents,
  ingested_at_us: () => ingestedAtUs,
});

const eventColumns = (projectId: string): ColumnGetters<SpanEventRow> => ({
  project_id: () => projectId,
  trace_id: (r) => r.traceId,
  span_id: (r) => r.spanId,
  event_index: (r) => r.index,
  ts_us: (r) => r.tsUs,
  name: (r) => r.name,
  attributes: (r) => r.attributes,
  category: (r) => r.category,
  context_kind: (r) => r.contextKind,
  context_detail: (r) => r.contextDetail,
  context_source_ids: (r) => r.contextSourceIds,
});

/** Sightings per INSERT statement. */
const SIGHTINGS_PER_INSERT = 200;

function sightingsUpsertSql(rows: number): string {
  return (
    'INSERT INTO agent_sightings (project_id, observation_key, source, api_key_id, first_seen_us, last_seen_us, sighting_count) VALUES ' +
    new Array(rows).fill('(?, ?, ?, ?, ?, ?, ?)').join(', ') +
    ' ON CONFLICT (project_id, observation_key, source, api_key_id) DO UPDATE SET' +
    ' first_seen_us = least(agent_sightings.first_seen_us, excluded.first_seen_us),' +
    ' last_seen_us = greatest(agent_sightings.last_seen_us, excluded.last_seen_us),' +
    ' sighting_count = agent_sightings.sighting_count + excluded.sighting_count'
  );
}

interface SightingAggregate {
  projectId: string;
  observationKey: string;
  source: string;
  apiKeyId: string;
  firstUs: number;
  lastUs: number;
  count: number;
}

export class SpansWriter {
  private readonly gc: GroupCommitWriter<Pending>;
  private layouts: Promise<{ spans: TableLayout; events: TableLayout }> | null = null;
  /** Prepared upserts by row count, on the writer's connection (preparing costs more than running them). */
  private readonly upserts = new Map<number, DuckDBPreparedStatement>();
  private upsertConn: DuckDBConnection | null = null;

  constructor(private readonly db: TelemetryDb) {
    this.gc = new GroupCommitWriter<Pending>(db, 'spans', (c, batch) => this.commit(c, batch));
  }

  /** Resolves once the batch is committed; rejects when the commit failed or the writer is stopped. */
  async write(projectId: string, batch: SpanBatch): Promise<void> {
    if (this.gc.isStopped) throw new WriterStoppedError('spans');
    this.layouts ??= Promise.all([tableLayout(this.db, 'spans'), tableLayout(this.db, 'span_events')]).then(([spans, events]) => ({ spans, events }));
    const layouts = await this.layouts.catch((e) => {
      this.layouts = null;
      throw e;
    });
    // The chunks are filled in the request's own turn, usually while the previous flush waits for its commit.
    return this.gc.write({
      projectId,
      spans: rowChunks(layouts.spans, spanColumns(projectId, batch.ingestedAtUs), batch.spans),
      events: rowChunks(layouts.events, eventColumns(projectId), batch.events),
      sightings: batch.sightings,
      credential: batch.credential,
      seenUs: batch.ingestedAtUs,
    });
  }

  flush(): Promise<void> {
    return this.gc.flush();
  }

  /** Refuses new writes, then commits what is queued. Idempotent. */
  async stop(): Promise<void> {
    await this.gc.stop(); // closing the connection destroys its prepared statements
    this.upserts.clear();
    this.upsertConn = null;
  }

  private async commit(c: DuckDBConnection, batch: Pending[]): Promise<void> {
    await appendChunks(c, 'spans', batch.flatMap((p) => p.spans));
    await appendChunks(c, 'span_events', batch.flatMap((p) => p.events));
    await this.upsertSightings(c, batch);
  }

  private async upsertStatement(c: DuckDBConnection, rows: number): Promise<DuckDBPreparedStatement> {
    if (this.upsertConn !== c) {
      this.upserts.clear(); // statements of another connection (closing it destroyed them)
      this.upsertConn = c;
    }
    let stmt = this.upserts.get(rows);
    if (!stmt) this.upserts.set(rows, (stmt = await c.prepare(sightingsUpsertSql(rows))));
    return stmt;
  }

  /** One row per (project, observation key, source, api key) of the batch, added to what is stored. */
  private async upsertSightings(c: DuckDBConnection, batch: Pending[]): Promise<void> {
    const agg = new Map<string, SightingAggregate>();
    for (const p of batch) {
      for (const [observationKey, count] of p.sightings) {
        const k = JSON.stringify([p.projectId, observationKey, p.credential.source, p.credential.apiKeyId]);
        const a = agg.get(k);
        if (a) {
          a.count += count;
          a.firstUs = Math.min(a.firstUs, p.seenUs);
          a.lastUs = Math.max(a.lastUs, p.seenUs);
        } else
          agg.set(k, { projectId: p.projectId, observationKey, source: p.credential.source, apiKeyId: p.credential.apiKeyId, firstUs: p.seenUs, lastUs: p.seenUs, count });
      }
    }
    const rows = [...agg.values()];
    for (let off = 0; off < rows.length; off += SIGHTINGS_PER_INSERT) {
      const part = rows.slice(off, off + SIGHTINGS_PER_INSERT);
      const stmt = await this.upsertStatement(c, part.length);
      let i = 1;
      for (const r of part) {
        stmt.bindVarchar(i++, r.projectId);
        stmt.bindVarchar(i++, r.observationKey);
        stmt.bindVarchar(i++, r.source);
        stmt.bindVarchar(i++, r.apiKeyId);
        stmt.bindBigInt(i++, BigInt(r.firstUs));
        stmt.bindBigInt(i++, BigInt(r.lastUs));
        stmt.bindBigInt(i++, BigInt(r.count));
      }
      await stmt.run();
    }
  }
}
