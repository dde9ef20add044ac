/**
 * Spans of a decoded ExportTraceServiceRequest -> `spans` / `span_events` rows with the agent model
 * derived per span (agent-derive.ts), after validation and sampling.
 *
 * A span is rejected (counted in partial_success `rejected_spans`) when its trace id is not 16 bytes or is
 * all zero, its span id is not 8 bytes or is all zero, its parent span id is neither empty nor 8 bytes, its
 * start time is 0, or it ends before it starts. An all-zero parent span id is read as "no parent" (some
 * exporters send zeros for a root). Other spans of the request are stored.
 *
 * Sampling drops whole traces (traces-sampling.ts). A dropped span is NOT rejected: sampling is the
 * project's policy, the export itself succeeded, and a client told "rejected" could only retry in vain or
 * log a false alarm. Dropped spans still count as agent sightings (attribution records which credential
 * sends which agent, whatever share of its traces is stored); only a sampling_rate of 0 records nothing.
 *
 * The spans of a deleted trace (a retried or late export of it) are left out by the writer, with their
 * events and sightings (spans-writer.ts). They are not rejected either, for the same reason as sampled
 * spans: the export succeeded and the deletion is the project's policy.
 */
import { hexOf, noId, validId, type SignalInput, type SpanMessage } from './signal-decode.js';
import { deriveEvent, deriveSpan } from './agent-derive.js';
import { isRunRootCandidate } from '../../domains/agent-runs/model.js';
import { attributesJson, nanosToUs } from './attributes-json.js';
import type { ContentAccess } from '../../domains/content-policy/access.js';
import type { KeyValue } from './decode.js';
import { keepTraceBytes } from './traces-sampling.js';
import { resourceIdentity } from './values.js';
import type { Sighting, SpanEventRow, SpanRow } from '../../domains/traces/rows.js';

const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const STATUS = ['unset', 'ok', 'error'];

export interface TracesConversion {
  spans: SpanRow[];
  events: SpanEventRow[];
  /** The run-root candidates (agent spans, top workflow spans) with an observation key (kept or dropped by sampling). */
  sightings: Sighting[];
  rejected: number;
  firstRejection: string | null;
  /** Context events stored as plain span events (docs/agent-model.md: not accepted). */
  notAccepted: number;
  firstNotAccepted: string | null;
  /** Valid spans dropped by sampling. */
  dropped: number;
}

interface ResourceInfo {
  serviceName: string | null;
  environment: string | null;
  json: string;
}

const spanLabel = (s: SpanMessage) => `span ${JSON.stringify(s.name ?? '')}`;

/** Why the span cannot be stored; null when it is valid. */
function invalidity(s: SpanMessage, startUs: number, endUs: number): string | null {
  if (!validId(s.traceId, 16)) return `${spanLabel(s)}: trace_id must be 16 bytes (32 hex digits in JSON) and not all zero`;
  if (!validId(s.spanId, 8)) return `${spanLabel(s)}: span_id must be 8 bytes (16 hex digits in JSON) and not all zero`;
  if (!noId(s.parentSpanId) && s.parentSpanId!.length !== 8) return `${spanLabel(s)}: parent_span_id must be empty or 8 bytes (16 hex digits in JSON)`;
  if (Number.isNaN(startUs)) return `${spanLabel(s)}: start_time_unix_nano is not a time (an unsigned 64-bit count of nanoseconds)`;
  if (!(startUs > 0)) return `${spanLabel(s)}: start_time_unix_nano is 0 (or missing)`;
  if (!(endUs >= startUs)) return `${spanLabel(s)}: end_time_unix_nano is before start_time_unix_nano (or missing)`;
  return null;
}

/** `store`: what the project's content policy lets be stored of recorded content (absent: everything, for tests of the conversion). */
export function convertTraces(input: SignalInput<SpanMessage>, samplingRate: number, store?: ContentAccess): TracesConversion {
  const out: TracesConversion = { spans: [], events: [], sightings: [], rejected: 0, firstRejection: null, notAccepted: 0, firstNotAccepted: null, dropped: 0 };
  let lastAttrs: KeyValue[] | null = null;
  let resource: ResourceInfo = { serviceName: null, environment: null, json: '{}' };
  // Sampling decisions per trace within the request (the spans of a trace usually travel together).
  const decided = new Map<string, boolean>();

  input.forEach((resourceAttrs, scopeName, s) => {
    if (resourceAttrs !== lastAttrs) {
      lastAttrs = resourceAttrs;
      resource = { ...resourceIdentity(resourceAttrs), json: attributesJson(resourceAttrs, store) };
    }
    const startUs = nanosToUs(s.startTimeUnixNano);
    const endUs = nanosToUs(s.endTimeUnixNano);
    const bad = invalidity(s, startUs, endUs);
    if (bad !== null) {
      out.rejected++;
      out.firstRejection ??= bad;
      return;
    }
    const attrs = s.attributes ?? [];
    const d = deriveSpan(attrs, resource.serviceName);
    const traceId = hexOf(s.traceId!);
    if (isRunRootCandidate(d.canonicalOperation, !noId(s.parentSpanId)) && d.observationKey !== null) out.sightings.push({ traceId, observationKey: d.observationKey, environment: resource.environment || null });

    if (samplingRate < 1) {
      let keep = decided.get(traceId);
      if (keep === undefined) decided.set(traceId, (keep = keepTraceBytes(s.traceId!, samplingRate)));
      if (!keep) {
        out.dropped++;
        return;
      }
    }
    const spanId = hexOf(s.spanId!);
    let contextEvents = 0;
    const events = s.events ?? [];
    for (let i = 0; i < events.length; i++) {
      const e = events[i];
      const name = e.name ?? '';
      const eattrs = e.attributes ?? [];
      const ed = deriveEvent(name, eattrs);
      if (ed.notAccepted !== null) {
        out.notAccepted++;
        out.firstNotAccepted ??= `event ${JSON.stringify(name)} of ${spanLabel(s)}: ${ed.notAccepted}`;
      }
      if (ed.context) contextEvents++;
      const ts = nanosToUs(e.timeUnixNano);
      out.events.push({
        traceId,
        spanId,
        index: i,
        tsUs: ts > 0 ? ts : startUs, // an event without a time is placed at its span's start
        name,
        attributes: attributesJson(eattrs, store),
        category: ed.category,
        contextKind: ed.context?.kind ?? null,
        contextDetail: ed.context ? JSON.stringify(ed.context.detail) : null,
        contextSourceIds: ed.context ? ed.context.sourceIds : null,
      });
    }
    const status = s.status;
    out.spans.push({
      traceId,
      spanId,
      parentSpanId: noId(s.parentSpanId) ? null : hexOf(s.parentSpanId!),
      name: s.name ?? '',
      kind: KINDS[s.kind ?? 0] ?? 'unspecified',
      startUs,
      endUs,
      statusCode: STATUS[status?.code ?? 0] ?? 'unset',
      statusMessage: status?.message || null,
      serviceName: resource.serviceName,
      environment: resource.environment,
      scopeName,
      attributes: attributesJson(attrs, store),
      resourceAttributes: resource.json,
      ...d,
      contextEvents,
    });
  });
  return out;
}
