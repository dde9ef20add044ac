/**
 * The rows an OTLP traces request becomes (spans, their events, the agent sightings they carry), as
 * ingestion hands them to the telemetry store, and the store's write port. Engine-neutral.
 */
import type { AgentSpanColumns } from '../agent-runs/store.js';
import type { SpanEventRow as TraceSpanEventRow, SpanRow as TraceSpanRow } from './store.js';

/**
 * One `spans` row: the span's own columns as the trace read returns them, and the agent-model columns
 * derived at ingest (docs/agent-model.md). Times in µs since the epoch.
 */
export interface SpanRow extends TraceSpanRow, AgentSpanColumns {
  traceId: string;
}

/** One `span_events` row: the event as the trace read returns it, and its agent-event columns. */
export interface SpanEventRow extends TraceSpanEventRow {
  traceId: string;
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

/** One received run-root candidate (agent span or top workflow span) with an observation key (kept or dropped by sampling). */
export interface Sighting {
  traceId: string;
  observationKey: string;
  /** The deployment environment of the span's resource; null when it names none (or ""). */
  environment: string | null;
}

export interface SpanBatch {
  spans: SpanRow[];
  events: SpanEventRow[];
  /**
   * Sightings: each delivery of a run-root candidate span counts, also a span sent again (a retried export).
   * See SightingRow.sightingCount (domains/agent-runs/store.ts) for why deliveries are counted.
   */
  sightings: Sighting[];
  credential: Credential;
  /** Ingest time (µs): ingested_at_us of the rows, first and last seen of the sightings. */
  ingestedAtUs: number;
}

export interface SpanWriteResult {
  /** Spans left out because their trace was deleted (it has a tombstone). */
  tombstoned: number;
}

/** Where ingested spans go: a 2xx is built on `write` having resolved (the rows are stored, the summaries they change with them). */
export interface SpansSink {
  /** Resolves once the batch is stored; rejects when it could not be or the writer is stopped (WriterStoppedError). */
  write(projectId: string, batch: SpanBatch): Promise<SpanWriteResult>;
  /** Waits until everything handed over so far is stored (or failed). */
  flush(): Promise<void>;
  /** Refuses new writes, then stores what is queued. Idempotent. */
  stop(): Promise<void>;
}
