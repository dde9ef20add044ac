/** The calibration records port (docs/evaluations-calibration.md): immutable records, one per distinct set of inputs. */
import type { CalibrationRecord } from './model.js';

export interface CalibrationFilter {
  projectId: string;
  evaluatorId: string;
  /** An exact version; absent: every version. */
  evaluatorVersion?: number;
  /** OR within; absent: every state. */
  states?: string[];
}

/** Newest first: the position of the last row of a page. */
export interface CalibrationPosition {
  createdAt: string;
  id: string;
}

export interface CalibrationStore {
  /**
   * Inserts the record; false (and nothing written) when the project already holds a record of the same
   * evaluator with the same input digest. Not for use inside a transaction (a refused insert ends one on PostgreSQL).
   */
  insert(r: CalibrationRecord): Promise<boolean>;
  /** The record of an evaluator with this input digest, if any. */
  byDigest(projectId: string, evaluatorId: string, inputDigest: string): Promise<CalibrationRecord | undefined>;
  /** Newest first by (created_at, id): at most `limit` rows after `after`. */
  list(f: CalibrationFilter, o: { after?: CalibrationPosition; limit: number }): Promise<CalibrationRecord[]>;
}
