/** Schemas of the telemetry retention windows (docs/retention.md). */
import { Type } from '@sinclair/typebox';
import { stringEnum } from '../../http/schemas.js';
import { RETAINED_SIGNALS, RETENTION_MAX_DAYS, RETENTION_MIN_DAYS, SIGNALS } from './model.js';

const SIGNAL_DESCRIPTION = 'SIGNAL_METRICS (metric points and histogram samples), SIGNAL_SPANS (spans, span events, and what is read from them: traces, agent runs, sessions, turns, steps, agent events, LLM calls, memory operations) or SIGNAL_LOGS (log records)';

export const ProjectParams = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });

const Days = Type.Integer({
  minimum: RETENTION_MIN_DAYS,
  maximum: RETENTION_MAX_DAYS,
  description: `whole days, ${RETENTION_MIN_DAYS} to ${RETENTION_MAX_DAYS}: what is older than now minus this is hidden from every read at once and deleted within the hour`,
});

const Actor = Type.Object(
  { user_id: Type.Optional(Type.String()), api_key_id: Type.Optional(Type.String()) },
  { additionalProperties: false, description: 'who set it, from their credential' },
);

export const RetentionView = Type.Object(
  {
    project_id: Type.String(),
    windows: Type.Array(
      Type.Object(
        { signal: stringEnum(SIGNALS, { description: SIGNAL_DESCRIPTION }), retention_days: Days, updated_by: Actor, updated_at: Type.String({ description: 'RFC 3339' }) },
        { additionalProperties: false },
      ),
      { description: 'only signals that have a window, in the order metrics, spans, logs; a signal without one is kept (no default is made up)' },
    ),
  },
  { additionalProperties: false },
);

export const PutRetentionBody = Type.Object(
  {
    windows: Type.Array(
      Type.Object(
        { signal: stringEnum(RETAINED_SIGNALS, { description: `${SIGNAL_DESCRIPTION}; SIGNAL_UNSPECIFIED and anything else is refused` }), retention_days: Days },
        { additionalProperties: false },
      ),
      { maxItems: RETAINED_SIGNALS.length, description: 'replaces every window: a signal not listed has none (kept); one window per signal' },
    ),
  },
  { additionalProperties: false },
);
