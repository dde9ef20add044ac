/**
 * Storage ports of telemetry retention (docs/retention.md): the windows in the control store (adapter:
 * storage/control/telemetry-retention-store.ts), and the deletion of expired rows in the telemetry store (each
 * engine's `expiry`: storage/telemetry/duckdb/expiry.ts, storage/telemetry/clickhouse/expiry.ts).
 */
import type { RetainedSignal } from './model.js';

/** Who changed the windows: taken from the credential. */
export interface Actor {
  userId: string | null;
  apiKeyId: string | null;
}

export interface RetentionWindowRecord {
  signal: RetainedSignal;
  retentionDays: number;
  updatedBy: Actor;
  updatedAt: string;
}

/** One window of a live project, for the sweep. */
export interface ProjectWindow {
  projectId: string;
  orgId: string;
  signal: RetainedSignal;
  retentionDays: number;
}

export interface TelemetryRetentionStore {
  /** The windows of the project (a signal without one has no row). */
  windows(projectId: string): Promise<RetentionWindowRecord[]>;
  /**
   * Replaces every window of the project and returns the windows it replaced. Replacements of one project run
   * one at a time (PostgreSQL: a lock held to the end of the caller's transaction; SQLite: one writer), so
   * concurrent ones each land whole and each sees the one before it. Call inside a transaction.
   */
  replace(projectId: string, orgId: string, windows: { signal: RetainedSignal; retentionDays: number }[], by: Actor, at: string): Promise<RetentionWindowRecord[]>;
  /** Every window of every live (not deleted) project. */
  live(): Promise<ProjectWindow[]>;
  /** A deleted project's windows go with it. */
  forgetProject(projectId: string): Promise<void>;
}

/** Rows one expiry removed, per table (for the job's outcome and the tests). */
export type ExpiryCounts = Record<string, number>;

/**
 * Deletes a project's telemetry of one signal older than a cut-off (the sweep; docs/retention.md). Idempotent:
 * a second call finds nothing. Reads already leave those rows out, so a partial run changes no answer.
 *
 * - metrics: metric points and histogram samples stamped before the cut-off;
 * - spans: spans that started before it and span events that happened before it; the summaries of traces
 *   whose every span ended before it (their trace, run and session rows: summaries follow their spans);
 * - logs: log records stamped before it.
 */
export interface TelemetryExpiry {
  expire(projectId: string, signal: RetainedSignal, beforeUs: number, abort?: AbortSignal): Promise<ExpiryCounts>;
}
