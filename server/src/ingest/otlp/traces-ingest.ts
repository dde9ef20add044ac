/** The rules of OTLP trace ingestion (spec 1 "Project" sampling_rate; docs/agent-model.md). */
import type { ProjectRecord } from '../../domains/projects/store.js';
import type { SpansSink } from '../../domains/traces/rows.js';
import { committedOr503, plural, type SignalOutcome } from './signal-ingest.js';
import type { SignalInput, SpanMessage } from './signal-decode.js';
import { convertTraces } from './traces-convert.js';
import type { ContentAccess } from '../../domains/content-policy/access.js';
import type { Credential } from '../../domains/traces/rows.js';

export const TRACES_SAMPLING_DISABLED_MESSAGE = 'ingestion is disabled for this project (sampling_rate is 0); no spans were stored';

/**
 * Stores the request's spans in the project and resolves once they are committed.
 *
 * sampling_rate 0 disables ingestion: nothing is stored (no sightings either) and every span is reported
 * rejected. Between 0 and 1 whole traces are kept or dropped by the hash of their id; dropped spans are
 * not rejected (traces-convert.ts). Spans of a deleted trace (a retried or late export) are left out by
 * the writer and, like sampled spans, are not rejected: the export succeeded, the deletion is the
 * project's policy, and a client told "rejected" could only retry in vain; they count as dropped.
 * Context events that are not accepted make a warning in the `partial_success` message without
 * rejecting their span (docs/agent-model.md).
 */
export async function ingestTraces(
  writer: SpansSink,
  project: ProjectRecord,
  credential: Credential,
  input: SignalInput<SpanMessage>,
  nowUs: number,
  /** Called after the commit with the observation keys of the batch's sightings (asset discovery). */
  onSightings?: (observationKeys: string[]) => void,
  /** What the project's content policy lets be stored (one lookup per request). */
  store?: ContentAccess,
): Promise<SignalOutcome> {
  if (project.samplingRate === 0) {
    let n = 0;
    input.forEach(() => void n++);
    return n > 0 ? { rejected: n, errorMessage: TRACES_SAMPLING_DISABLED_MESSAGE, stored: 0, dropped: 0 } : { rejected: 0, stored: 0, dropped: 0 };
  }
  const c = convertTraces(input, project.samplingRate, store);
  let tombstoned = 0;
  if (c.spans.length > 0 || c.sightings.length > 0) {
    await committedOr503(async () => {
      ({ tombstoned } = await writer.write(project.id, { spans: c.spans, events: c.events, sightings: c.sightings, credential, ingestedAtUs: nowUs }));
    }, 'spans');
    if (onSightings && c.sightings.length > 0) onSightings(c.sightings.map((x) => x.observationKey));
  }
  const messages: string[] = [];
  if (c.rejected > 0) messages.push(`${plural(c.rejected, 'span was', 'spans were')} rejected; the first: ${c.firstRejection}`);
  if (c.notAccepted > 0)
    messages.push(`${plural(c.notAccepted, 'context event was', 'context events were')} not accepted and stored as plain span events; the first: ${c.firstNotAccepted}`);
  const outcome: SignalOutcome = { rejected: c.rejected, stored: c.spans.length - tombstoned, dropped: c.dropped + tombstoned };
  if (messages.length > 0) outcome.errorMessage = messages.join('; ');
  return outcome;
}
