/**
 * The live log tail, `GET /stream/logs` (spec 1, "Raw observability"; Authentication rules 7 and 8).
 *
 * Decisions (quoted in docs/reference.md):
 * - Server-Sent Events. Each new matching log record is `event: log` with `id: <log_id>` and the record
 *   (the `/logs` shape) as `data`. A comment `: ping` is sent every 15 seconds so proxies keep the
 *   connection; the stream opens with the comment `: stream open`.
 * - Filters as `/logs`: `service`, `severity`, `q`, `trace_id`, `attr`; there is no window: the tail sends
 *   records ingested after it opened (none of the backlog), in ingest order. It polls every second (at most
 *   500 records per poll; a faster flow is sent over the next polls, never skipped), re-reading the last
 *   5 seconds of ingest time so records committed late by a concurrent ingest batch are still sent once.
 * - The credential is re-checked every 5 seconds (through `watchCredential`, http/recheck.ts) with the
 *   scope it was admitted with (`logs:read`), and at once when this node hears that the key, sign-in, agent
 *   approval or person changed, on this node or another (`recheckCredentials`, cluster/apply-changes.ts).
 *   A revoked, unknown or expired API key, a signed-out session, a person removed from the organization:
 *   final `event: error` with
 *   `{"error":"unauthorized","message":...,"final":true}`. Scope narrowing or a role change that removes
 *   `logs:read`: the same with `forbidden`. Routine expiry of a session (or its rotation by a refresh)
 *   and a short-lived agent token that merely expired: the stream ends without that event (a comment says
 *   why), so the client renews and resumes. The stream stops within 30 seconds in every case (rule 7).
 * - The client disconnecting stops the polling and the re-checks. A server shutdown ends every tail
 *   without the final event.
 * - A client reconnecting with `Last-Event-ID` (EventSource does this by itself) naming a record of the
 *   project resumes after that record's ingest time, reaching back at most 10 minutes; an unknown id
 *   starts from now.
 * - At most 20 tails are open per organization at once; one more is 429 `too_many_streams` with
 *   `Retry-After`, before the stream opens.
 * - The intervals are settings (`settings`, and the environment variables SVC_LOG_TAIL_POLL_MS,
 *   SVC_STREAM_RECHECK_MS, SVC_STREAM_HEARTBEAT_MS read at start), so tests can shorten them.
 */
import { readableClasses, type ContentAccess } from '../content-policy/access.js';
import { ApiError } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import { watchCredential, type CredentialRechecker, type CredentialWatch } from '../../http/recheck.js';
import type { SseStream } from '../../http/sse.js';
import { logView, LOGS_READ } from './service.js';
import type { LogFilter, LogsStore } from './store.js';

export interface TailSettings {
  pollMs: number;
  recheckMs: number;
  heartbeatMs: number;
  /** Records sent per poll at most. */
  batch: number;
  /** How far back in ingest time each poll looks again (µs). */
  overlapUs: number;
  maxPerOrg: number;
  /** How far back (µs of ingest time) a resume with Last-Event-ID may start. */
  resumeWindowUs: number;
}

function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw) || Number(raw) < 10) throw new Error(`${name} must be an integer of at least 10 (milliseconds), got "${raw}"`);
  return Number(raw);
}

export function defaultTailSettings(): TailSettings {
  return {
    pollMs: envInt('SVC_LOG_TAIL_POLL_MS', 1000),
    // At most 30 seconds may pass before a revoked credential's stream stops (rule 7); checked well within.
    recheckMs: Math.min(envInt('SVC_STREAM_RECHECK_MS', 5000), 25_000),
    heartbeatMs: envInt('SVC_STREAM_HEARTBEAT_MS', 15_000),
    batch: 500,
    overlapUs: 5_000_000,
    maxPerOrg: 20,
    resumeWindowUs: 10 * 60 * 1_000_000,
  };
}

export interface TailRequest {
  sse: SseStream;
  principal: Principal;
  /** The credential's secret, re-resolved at each check. */
  secret: string;
  projectId: string;
  filter: LogFilter;
  /** What the reader is served of recorded content, asked at each poll (a policy change reaches an open tail too). */
  content: () => Promise<ContentAccess>;
}

const FINAL_MESSAGES = {
  unauthorized: 'authentication required',
  forbidden: `this stream needs scope ${LOGS_READ}, which the credential no longer holds`,
} as const;

export class LogTailService {
  readonly settings: TailSettings;
  private readonly openStreams = new Map<SseStream, { projectId: string; principal: Principal; watch: CredentialWatch }>();
  private readonly perOrg = new Map<string, number>();

  constructor(
    private readonly store: LogsStore,
    private readonly rechecker: CredentialRechecker,
    settings: Partial<TailSettings> = {},
  ) {
    this.settings = { ...defaultTailSettings(), ...settings };
  }

  /** Open tails right now (all organizations). */
  get openCount(): number {
    return this.openStreams.size;
  }

  /** Refuses a tail over the organization's cap (429), before the stream opens. */
  checkCapacity(orgId: string): void {
    if ((this.perOrg.get(orgId) ?? 0) >= this.settings.maxPerOrg)
      throw new ApiError(
        429,
        'too_many_streams',
        `this organization already has ${this.settings.maxPerOrg} live log tails open; close one or retry later`,
        { limit: this.settings.maxPerOrg },
        { 'retry-after': '5' },
      );
  }

  /**
   * Where the tail starts: after everything already ingested, or, when the client resumes with
   * `Last-Event-ID` naming a record of the project, after that record's ingest time (the ids in the
   * overlap before the start are taken as seen).
   */
  async startPosition(projectId: string, lastEventId?: string): Promise<{ watermark: number; seen: Map<string, number> }> {
    const resumed = lastEventId ? await this.store.get(projectId, lastEventId) : null;
    const latest = (await this.store.maxIngested(projectId)) ?? 0;
    // A resume reaches back at most the resume window; older records are the backlog of /logs.
    const watermark = resumed ? Math.max(resumed.ingestedUs, latest - this.settings.resumeWindowUs) : latest;
    const seen = new Map<string, number>();
    for (const r of await this.store.idsIngestedBetween(projectId, watermark - this.settings.overlapUs, watermark)) seen.set(r.logId, r.ingestedUs);
    return { watermark, seen };
  }

  /** Runs a tail on an open stream until either side ends it. */
  run(t: TailRequest, start: { watermark: number; seen: Map<string, number> }): void {
    const { sse, principal } = t;
    const s = this.settings;
    this.perOrg.set(principal.orgId, (this.perOrg.get(principal.orgId) ?? 0) + 1);
    let { watermark } = start;
    const seen = start.seen;
    let timer: NodeJS.Timeout | undefined;

    const heartbeat = setInterval(() => sse.comment('ping'), s.heartbeatMs);
    heartbeat.unref?.();
    const stopWatch = watchCredential(
      this.rechecker,
      principal,
      t.secret,
      [LOGS_READ],
      (verdict) => {
        if (verdict === 'expired') {
          sse.comment('credential expired; renew it and reconnect');
          sse.end();
        } else sse.finalError(verdict, FINAL_MESSAGES[verdict]);
      },
      s.recheckMs,
    );
    this.openStreams.set(sse, { projectId: t.projectId, principal, watch: stopWatch });

    sse.onClose(() => {
      clearInterval(heartbeat);
      clearTimeout(timer);
      stopWatch();
      this.openStreams.delete(sse);
      const n = (this.perOrg.get(principal.orgId) ?? 1) - 1;
      if (n <= 0) this.perOrg.delete(principal.orgId);
      else this.perOrg.set(principal.orgId, n);
    });

    const poll = async () => {
      if (sse.closed) return;
      try {
        // Reads up to the latest ingest time, so that a filter matching rarely does not make each poll
        // scan further back: when everything up to it was read, the tail moves past it.
        const latest = (await this.store.maxIngested(t.projectId)) ?? watermark;
        // A body search matches the content bodies the reader is served in full now, not at the tail's start.
        const early = t.filter.text !== undefined ? await t.content() : undefined;
        const rows = await this.store.tail({
          projectId: t.projectId,
          filter: early ? { ...t.filter, readableBodyClasses: readableClasses(early) } : t.filter,
          afterUs: watermark - s.overlapUs,
          upToUs: latest,
          exclude: [...seen.keys()],
          limit: s.batch,
        });
        const access = rows.length > 0 ? (early ?? (await t.content())) : undefined;
        for (const r of rows) {
          if (sse.closed) return;
          seen.set(r.logId, r.ingestedUs);
          if (r.ingestedUs > watermark) watermark = r.ingestedUs;
          await sse.send('log', logView(r, access!), r.logId);
        }
        if (rows.length < s.batch && latest > watermark) watermark = latest;
        for (const [id, at] of seen) if (at <= watermark - s.overlapUs) seen.delete(id);
      } catch {
        /* the store could not answer now: the next poll tries again */
      }
      if (!sse.closed) {
        timer = setTimeout(poll, s.pollMs);
        timer.unref?.();
      }
    };
    timer = setTimeout(poll, 0);
    timer.unref?.();
  }

  /**
   * Ends the tails of a deleted project without the final event: the credential still holds, the
   * project is gone, and a reconnect answers 404 like any read of it.
   */
  endProject(projectId: string): void {
    for (const [sse, open] of [...this.openStreams]) {
      if (open.projectId !== projectId) continue;
      sse.comment('project deleted');
      sse.end();
    }
  }

  /**
   * Re-checks now the credential of every open tail whose principal `matches` (a change to it was heard):
   * a revoked one ends its tail within the check's read instead of at the next interval.
   */
  recheckCredentials(matches: (admittedAs: Principal) => boolean): void {
    for (const { principal, watch } of this.openStreams.values()) if (matches(principal)) watch.recheckNow();
  }

  /** Ends every open tail without the final event (server shutdown). */
  closeAll(): void {
    for (const sse of [...this.openStreams.keys()]) {
      sse.comment('server shutting down; reconnect');
      sse.end();
    }
  }
}
