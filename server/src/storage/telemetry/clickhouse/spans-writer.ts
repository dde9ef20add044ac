/**
 * Writes ingested spans, their events and the agent sightings they carry to ClickHouse, with group commit
 * (batcher.ts), then brings the touched traces' summaries up to date (summaries.ts) before any request of
 * the flush is answered: a 2xx means the spans and the summaries that count them are stored.
 *
 * Deleted traces stay deleted: spans of a trace with a `trace_tombstones` row are left out (looked up for
 * the batch's traces in every flush; another node may have deleted one). A delete that lands between that
 * lookup and the insert is still honoured by the reads, which leave out tombstoned traces.
 */
import type { SpanBatch, SpanEventRow, SpanRow, SpanWriteResult, SpansSink } from '../../../domains/traces/rows.js';
import { WriterStoppedError } from '../../../lib/writer-stopped.js';
import { traceGate } from '../../../lib/one-at-a-time.js';
import { Batcher } from './batcher.js';
import type { ChTelemetryDb } from './db.js';
import { refreshChSummaries } from './summaries.js';

/** As on the embedded engine (duckdb/spans-writer.ts): how stale a stored last_seen_us of an environment may be before a sighting refreshes it. */
const ENVIRONMENT_REFRESH_US = 60_000_000;
const ENVIRONMENTS_REMEMBERED = 100_000;

interface Pending {
  projectId: string;
  batch: SpanBatch;
  tombstoned: number;
}

export function spanRecord(projectId: string, r: SpanRow, ingestedAtUs: number): Record<string, unknown> {
  return {
    project_id: projectId,
    trace_id: r.traceId,
    span_id: r.spanId,
    parent_span_id: r.parentSpanId,
    name: r.name,
    kind: r.kind,
    start_us: r.startUs,
    end_us: r.endUs,
    status_code: r.statusCode,
    status_message: r.statusMessage,
    service_name: r.serviceName,
    environment: r.environment,
    scope_name: r.scopeName,
    attributes: r.attributes,
    resource_attributes: r.resourceAttributes,
    operation_name: r.operationName,
    canonical_operation: r.canonicalOperation,
    response_status: r.responseStatus,
    outcome: r.outcome,
    agent_name: r.agentName,
    agent_id: r.agentId,
    observation_key: r.observationKey,
    session_key: r.sessionKey,
    turn_id: r.turnId,
    run_status: r.runStatus,
    terminal_reason: r.terminalReason,
    tool_name: r.toolName,
    model: r.model,
    provider: r.provider,
    input_tokens: r.inputTokens,
    output_tokens: r.outputTokens,
    reported_cost_nanos: r.reportedCostNanos,
    safety_check: r.safetyCheck,
    memory_item_id: r.memoryItemId,
    memory_store: r.memoryStore,
    memory_provenance: r.memoryProvenance,
    memory_trust_label: r.memoryTrustLabel,
    context_events: r.contextEvents,
    ingested_at_us: ingestedAtUs,
  };
}

export function eventRecord(projectId: string, r: SpanEventRow): Record<string, unknown> {
  return {
    project_id: projectId,
    trace_id: r.traceId,
    span_id: r.spanId,
    event_index: r.index,
    ts_us: r.tsUs,
    name: r.name,
    attributes: r.attributes,
    category: r.category,
    context_kind: r.contextKind,
    context_detail: r.contextDetail,
    context_source_ids: r.contextSourceIds ?? [],
  };
}

export class ChSpansWriter implements SpansSink {
  private readonly batcher: Batcher<Pending>;
  /** (project, key, environment) -> last_seen_us this writer stored for it. */
  private readonly environmentsSeen = new Map<string, number>();

  constructor(private readonly db: ChTelemetryDb) {
    // On this node, a flush and a trace delete never overlap; across nodes the reads leave out a tombstoned trace's late copies.
    this.batcher = new Batcher<Pending>('spans', (items) => traceGate(db).run(() => this.store(items)));
  }

  async write(projectId: string, batch: SpanBatch): Promise<SpanWriteResult> {
    if (this.batcher.isStopped) throw new WriterStoppedError('spans');
    const p: Pending = { projectId, batch, tombstoned: 0 };
    await this.batcher.write(p);
    return { tombstoned: p.tombstoned };
  }

  flush(): Promise<void> {
    return this.batcher.flush();
  }

  stop(): Promise<void> {
    return this.batcher.stop();
  }

  private async store(items: Pending[]): Promise<void> {
    const gone = await this.tombstoned(items);
    const spans: Record<string, unknown>[] = [];
    const events: Record<string, unknown>[] = [];
    const touched = new Map<string, Set<string>>();
    for (const p of items) {
      const g = gone.get(p.projectId);
      const at = p.batch.ingestedAtUs;
      p.tombstoned = 0;
      let t = touched.get(p.projectId);
      if (!t) touched.set(p.projectId, (t = new Set()));
      for (const r of p.batch.spans) {
        if (g?.has(r.traceId)) {
          p.tombstoned++;
          continue;
        }
        spans.push(spanRecord(p.projectId, r, at));
        t.add(r.traceId);
      }
      for (const e of p.batch.events) if (!g?.has(e.traceId)) events.push(eventRecord(p.projectId, e));
    }
    await Promise.all([this.db.client.insert('spans', spans), this.db.client.insert('span_events', events), this.storeSightings(items, gone)]);
    await refreshChSummaries(this.db, touched);
  }

  /** The tombstoned traces among those of the flush (its spans and its sightings), by project. */
  private async tombstoned(items: Pending[]): Promise<Map<string, Set<string>>> {
    const byProject = new Map<string, Set<string>>();
    for (const p of items) {
      let ids = byProject.get(p.projectId);
      if (!ids) byProject.set(p.projectId, (ids = new Set()));
      for (const r of p.batch.spans) ids.add(r.traceId);
      for (const g of p.batch.sightings) ids.add(g.traceId);
    }
    const out = new Map<string, Set<string>>();
    for (const [projectId, ids] of byProject) {
      if (ids.size === 0) continue;
      const rows = await this.db.client.query<{ trace_id: string }>('SELECT DISTINCT trace_id FROM trace_tombstones WHERE project_id = {p:String} AND trace_id IN {t:Array(String)}', {
        p: projectId,
        t: [...ids],
      });
      if (rows.length) out.set(projectId, new Set(rows.map((r) => r.trace_id)));
    }
    return out;
  }

  /** One row per (project, key, source, api key) and per (project, key, environment) of the flush: the tables add them up (min, max, sum). */
  private async storeSightings(items: Pending[], gone: Map<string, Set<string>>): Promise<void> {
    const agg = new Map<string, { project_id: string; observation_key: string; source: string; api_key_id: string; first_seen_us: number; last_seen_us: number; sighting_count: number }>();
    const env = new Map<string, { project_id: string; observation_key: string; environment: string; first_seen_us: number; last_seen_us: number }>();
    for (const p of items) {
      const g = gone.get(p.projectId);
      const at = p.batch.ingestedAtUs;
      const { source, apiKeyId } = p.batch.credential;
      for (const { traceId, observationKey, environment } of p.batch.sightings) {
        if (g?.has(traceId)) continue;
        const k = JSON.stringify([p.projectId, observationKey, source, apiKeyId]);
        const a = agg.get(k);
        if (a) {
          a.sighting_count++;
          a.first_seen_us = Math.min(a.first_seen_us, at);
          a.last_seen_us = Math.max(a.last_seen_us, at);
        } else agg.set(k, { project_id: p.projectId, observation_key: observationKey, source, api_key_id: apiKeyId, first_seen_us: at, last_seen_us: at, sighting_count: 1 });
        if (environment === null) continue;
        const id = JSON.stringify([p.projectId, observationKey, environment]);
        if ((this.environmentsSeen.get(id) ?? -Infinity) >= at - ENVIRONMENT_REFRESH_US) continue;
        const e = env.get(id);
        if (e) {
          e.first_seen_us = Math.min(e.first_seen_us, at);
          e.last_seen_us = Math.max(e.last_seen_us, at);
        } else env.set(id, { project_id: p.projectId, observation_key: observationKey, environment, first_seen_us: at, last_seen_us: at });
      }
    }
    await Promise.all([this.db.client.insert('agent_sightings', [...agg.values()]), this.db.client.insert('agent_sighting_environments', [...env.values()])]);
    if (this.environmentsSeen.size > ENVIRONMENTS_REMEMBERED) this.environmentsSeen.clear();
    for (const [id, e] of env) this.environmentsSeen.set(id, Math.max(this.environmentsSeen.get(id) ?? 0, e.last_seen_us));
  }
}
