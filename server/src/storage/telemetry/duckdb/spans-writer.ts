/**
 * Writes ingested spans, their events and the agent sightings they carry, with group commit
 * (rows-writer.ts): one transaction per batch of requests holds the `spans` and `span_events` rows and the
 * `agent_sightings` and `agent_sighting_environments` upserts, and a request is answered only after that transaction committed.
 *
 * Deleted traces stay deleted (spec 1 Authentication rule 10; ARCHITECTURE: durable deletions are
 * tombstones that also hide later or retried copies). `DELETE /traces/{id}` writes a `trace_tombstones`
 * row in the transaction that removes the trace's rows (traces-query.ts), and every ingest transaction
 * leaves out the spans, span events and sightings of the tombstoned traces of its batch, looked up in the
 * table inside the transaction. The two are serialized per store by a gate (`traceDeleteGate`): an ingest
 * transaction runs wholly before a trace delete (which then removes what it stored) or wholly after it
 * (and sees the tombstone). Without the gate an ingest transaction that began before the delete committed
 * would not see the tombstone (snapshot isolation), and the delete would not see its uncommitted rows.
 */
import { LIST, VARCHAR, listValue, type DuckDBConnection, type DuckDBDataChunk, type DuckDBPreparedStatement } from '@duckdb/node-api';
import type { SpanBatch, SpanEventRow, SpanRow, SpanWriteResult, SpansSink } from '../../../domains/traces/rows.js';
import { WriterStoppedError } from '../../../lib/writer-stopped.js';
import type { TelemetryDb } from './open.js';
import { OneAtATime } from './statements.js';
import { GroupCommitWriter, appendChunks, rowChunks, tableLayout, type ColumnGetters, type TableLayout } from './rows-writer.js';
import { summaryUpkeep, type ProjectSpans, type SummaryUpkeep } from './summaries-writer.js';
import { digestOf } from './span-digests.js';

/**
 * Per telemetry store: runs the spans writer's transactions and the trace deletes one at a time, in
 * arrival order, and remembers whether `trace_tombstones` may hold a row, so that a store where no trace
 * was ever deleted spends no lookup per commit. `trace_tombstones` is written only under this gate.
 */
export class TraceDeleteGate extends OneAtATime {
  /** False only when the table is known to be empty; undefined until read. Changed only under the gate. */
  mayHaveTombstones: boolean | undefined = undefined;
}

const gates = new WeakMap<TelemetryDb, TraceDeleteGate>();

/** The gate of this store (one per TelemetryDb, shared by its spans writer and its trace deletes). */
export function traceDeleteGate(db: TelemetryDb): TraceDeleteGate {
  let g = gates.get(db);
  if (!g) gates.set(db, (g = new TraceDeleteGate()));
  return g;
}

interface Layouts {
  spans: TableLayout;
  events: TableLayout;
}

interface Pending {
  projectId: string;
  rows: SpanBatch;
  layouts: Layouts;
  /** The rows as chunks, built in the request's turn; rebuilt in the commit only when a trace of them is tombstoned. */
  spans: DuckDBDataChunk[];
  events: DuckDBDataChunk[];
  /** Set by the commit (each attempt): spans left out as tombstoned. */
  tombstoned: number;
  /** Set by the commit (each attempt): the environment rows its transaction upserted, shared by the batch. */
  environmentsWritten: EnvironmentAggregate[];
}

/** Tombstoned trace ids by project (of the traces of a batch). */
type Tombstoned = Map<string, Set<string>>;
const NONE: Tombstoned = new Map();

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

function environmentsUpsertSql(rows: number): string {
  return (
    'INSERT INTO agent_sighting_environments (project_id, observation_key, environment, first_seen_us, last_seen_us) VALUES ' +
    new Array(rows).fill('(?, ?, ?, ?, ?)').join(', ') +
    ' ON CONFLICT (project_id, observation_key, environment) DO UPDATE SET' +
    ' first_seen_us = least(agent_sighting_environments.first_seen_us, excluded.first_seen_us),' +
    ' last_seen_us = greatest(agent_sighting_environments.last_seen_us, excluded.last_seen_us)'
  );
}

/**
 * How stale (µs) the stored last_seen_us of a (project, key, environment) may be before a sighting
 * refreshes it. A second upsert in every commit would cost about as much as the agent_sightings one;
 * an agent keeps sending from the same environments, so within this window the writer skips the rows it
 * committed itself. The order of environments by recency is therefore exact to this much.
 */
export const ENVIRONMENT_REFRESH_US = 60_000_000;
/** Entries of the written-environments memory before it is forgotten (costs one more write of each). */
const ENVIRONMENTS_REMEMBERED = 100_000;

interface EnvironmentAggregate {
  /** JSON of [project, key, environment]. */
  id: string;
  projectId: string;
  observationKey: string;
  environment: string;
  firstUs: number;
  lastUs: number;
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

export class SpansWriter implements SpansSink {
  private readonly gc: GroupCommitWriter<Pending>;
  private readonly gate: TraceDeleteGate;
  private readonly summaries: SummaryUpkeep;
  private layouts: Promise<Layouts> | null = null;
  /** Prepared upserts by table and row count, on the writer's connection (preparing costs more than running them). */
  private readonly upserts = new Map<string, DuckDBPreparedStatement>();
  private upsertConn: DuckDBConnection | null = null;
  /** (project, key, environment) -> last_seen_us this writer committed for it. */
  private readonly environmentsSeen = new Map<string, number>();

  constructor(private readonly db: TelemetryDb) {
    this.gate = traceDeleteGate(db);
    this.summaries = summaryUpkeep(db);
    this.gc = new GroupCommitWriter<Pending>(db, 'spans', (c, batch) => this.commit(c, batch), (fn) => this.gate.run(fn));
  }

  /**
   * Resolves once the batch is committed; rejects when the commit failed or the writer is stopped.
   * Spans of a deleted trace are left out (with their events and sightings) and counted in the result.
   */
  async write(projectId: string, batch: SpanBatch): Promise<SpanWriteResult> {
    if (this.gc.isStopped) throw new WriterStoppedError('spans');
    this.layouts ??= Promise.all([tableLayout(this.db, 'spans'), tableLayout(this.db, 'span_events')]).then(([spans, events]) => ({ spans, events }));
    const layouts = await this.layouts.catch((e) => {
      this.layouts = null;
      throw e;
    });
    // The chunks are filled in the request's own turn, usually while the previous flush waits for its commit.
    const p: Pending = {
      projectId,
      rows: batch,
      layouts,
      spans: rowChunks(layouts.spans, spanColumns(projectId, batch.ingestedAtUs), batch.spans),
      events: rowChunks(layouts.events, eventColumns(projectId), batch.events),
      tombstoned: 0,
      environmentsWritten: [],
    };
    await this.gc.write(p);
    // Committed: later sightings of these environments within the refresh window need no write.
    if (this.environmentsSeen.size > ENVIRONMENTS_REMEMBERED) this.environmentsSeen.clear();
    for (const e of p.environmentsWritten) this.environmentsSeen.set(e.id, Math.max(this.environmentsSeen.get(e.id) ?? 0, e.lastUs));
    return { tombstoned: p.tombstoned };
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

  /** Runs inside the transaction, under the gate; returns the summaries' memory update, applied after COMMIT. */
  private async commit(c: DuckDBConnection, batch: Pending[]): Promise<() => void> {
    const gone = await this.tombstoned(c, batch);
    const spans: DuckDBDataChunk[] = [];
    const events: DuckDBDataChunk[] = [];
    const summarized: ProjectSpans[] = [];
    for (const p of batch) {
      const g = gone.get(p.projectId);
      p.tombstoned = 0;
      if (!g || !p.rows.spans.some((r) => g.has(r.traceId))) {
        spans.push(...p.spans);
        events.push(...p.events);
        summarized.push({ projectId: p.projectId, spans: p.rows.spans.map((r) => digestOf(r, p.rows.ingestedAtUs)) });
        continue;
      }
      // Rare (a retried export of a deleted trace): the chunks are built again without its rows.
      const keptSpans = p.rows.spans.filter((r) => !g.has(r.traceId));
      p.tombstoned = p.rows.spans.length - keptSpans.length;
      const keptEvents = p.rows.events.filter((r) => !g.has(r.traceId));
      spans.push(...rowChunks(p.layouts.spans, spanColumns(p.projectId, p.rows.ingestedAtUs), keptSpans));
      events.push(...rowChunks(p.layouts.events, eventColumns(p.projectId), keptEvents));
      summarized.push({ projectId: p.projectId, spans: keptSpans.map((r) => digestOf(r, p.rows.ingestedAtUs)) });
    }
    // Before the spans are appended: a stored trace's earlier spans are read from `spans` (summaries-writer.ts).
    const afterCommit = await this.summaries.update(c, summarized);
    await appendChunks(c, 'spans', spans);
    await appendChunks(c, 'span_events', events);
    await this.upsertSightings(c, batch, gone);
    return afterCommit;
  }

  /**
   * The tombstoned traces among those of the batch (its spans and its sightings), read in the commit's
   * transaction: one query over the batch's trace ids, none while the store has no tombstone.
   */
  private async tombstoned(c: DuckDBConnection, batch: Pending[]): Promise<Tombstoned> {
    if (this.gate.mayHaveTombstones === undefined) {
      const r = await c.runAndReadAll('SELECT EXISTS (SELECT 1 FROM trace_tombstones)');
      this.gate.mayHaveTombstones = r.getRows()[0][0] === true;
    }
    if (!this.gate.mayHaveTombstones) return NONE;
    const ids = new Set<string>();
    for (const p of batch) {
      for (const r of p.rows.spans) ids.add(r.traceId);
      for (const g of p.rows.sightings) ids.add(g.traceId);
    }
    if (ids.size === 0) return NONE;
    const r = await c.runAndReadAll('SELECT project_id, trace_id FROM trace_tombstones WHERE trace_id IN (SELECT unnest($1))', [listValue([...ids])], [LIST(VARCHAR)]);
    const out: Tombstoned = new Map();
    for (const [project, trace] of r.getRows() as [string, string][]) {
      let set = out.get(project);
      if (!set) out.set(project, (set = new Set()));
      set.add(trace);
    }
    return out;
  }

  private async upsertStatement(c: DuckDBConnection, table: 'sightings' | 'environments', rows: number): Promise<DuckDBPreparedStatement> {
    if (this.upsertConn !== c) {
      this.upserts.clear(); // statements of another connection (closing it destroyed them)
      this.upsertConn = c;
    }
    const key = `${table}:${rows}`;
    let stmt = this.upserts.get(key);
    if (!stmt) this.upserts.set(key, (stmt = await c.prepare(table === 'sightings' ? sightingsUpsertSql(rows) : environmentsUpsertSql(rows))));
    return stmt;
  }

  /**
   * One row per (project, observation key, source, api key) of the batch, added to what is stored; and one
   * per (project, observation key, environment) for the sightings that name an environment.
   */
  private async upsertSightings(c: DuckDBConnection, batch: Pending[], gone: Tombstoned): Promise<void> {
    const agg = new Map<string, SightingAggregate>();
    const envAgg = new Map<string, EnvironmentAggregate>();
    for (const p of batch) {
      const g = gone.get(p.projectId);
      const counts = new Map<string, number>();
      const seenUs = p.rows.ingestedAtUs;
      for (const { traceId, observationKey, environment } of p.rows.sightings) {
        if (g?.has(traceId)) continue;
        counts.set(observationKey, (counts.get(observationKey) ?? 0) + 1);
        if (environment === null) continue;
        const id = JSON.stringify([p.projectId, observationKey, environment]);
        if ((this.environmentsSeen.get(id) ?? -Infinity) >= seenUs - ENVIRONMENT_REFRESH_US) continue;
        const e = envAgg.get(id);
        if (e) {
          e.firstUs = Math.min(e.firstUs, seenUs);
          e.lastUs = Math.max(e.lastUs, seenUs);
        } else envAgg.set(id, { id, projectId: p.projectId, observationKey, environment, firstUs: seenUs, lastUs: seenUs });
      }
      const { source, apiKeyId } = p.rows.credential;
      for (const [observationKey, count] of counts) {
        const k = JSON.stringify([p.projectId, observationKey, source, apiKeyId]);
        const a = agg.get(k);
        if (a) {
          a.count += count;
          a.firstUs = Math.min(a.firstUs, seenUs);
          a.lastUs = Math.max(a.lastUs, seenUs);
        } else agg.set(k, { projectId: p.projectId, observationKey, source, apiKeyId, firstUs: seenUs, lastUs: seenUs, count });
      }
    }
    await this.upsertInParts(c, 'sightings', [...agg.values()], (stmt, r, i) => {
      stmt.bindVarchar(i++, r.projectId);
      stmt.bindVarchar(i++, r.observationKey);
      stmt.bindVarchar(i++, r.source);
      stmt.bindVarchar(i++, r.apiKeyId);
      stmt.bindBigInt(i++, BigInt(r.firstUs));
      stmt.bindBigInt(i++, BigInt(r.lastUs));
      stmt.bindBigInt(i++, BigInt(r.count));
      return i;
    });
    const envRows = [...envAgg.values()];
    for (const p of batch) p.environmentsWritten = envRows;
    await this.upsertInParts(c, 'environments', envRows, (stmt, r, i) => {
      stmt.bindVarchar(i++, r.projectId);
      stmt.bindVarchar(i++, r.observationKey);
      stmt.bindVarchar(i++, r.environment);
      stmt.bindBigInt(i++, BigInt(r.firstUs));
      stmt.bindBigInt(i++, BigInt(r.lastUs));
      return i;
    });
  }

  /** Upserts `rows` into `table`, SIGHTINGS_PER_INSERT per statement; `bind` binds one row from position `i` and returns the next. */
  private async upsertInParts<R>(c: DuckDBConnection, table: 'sightings' | 'environments', rows: R[], bind: (stmt: DuckDBPreparedStatement, r: R, i: number) => number): Promise<void> {
    for (let off = 0; off < rows.length; off += SIGHTINGS_PER_INSERT) {
      const part = rows.slice(off, off + SIGHTINGS_PER_INSERT);
      const stmt = await this.upsertStatement(c, table, part.length);
      let i = 1;
      for (const r of part) i = bind(stmt, r, i);
      await stmt.run();
    }
  }
}
