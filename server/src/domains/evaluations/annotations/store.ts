/**
 * The human judgments port (docs/evaluations-human.md "Human judgments"). A judgment is one person's
 * verdict on one agent run for one metric: `numeric_value` and/or `label`, and a comment. Each person has
 * at most one judgment per (run, metric); judging again replaces that person's judgment (with a new id)
 * and never touches anyone else's. Times are ISO 8601 text (UTC, milliseconds).
 */
export interface AnnotationRecord {
  /** A new id for every recorded judgment (a replacement gets a new one). */
  id: string;
  orgId: string;
  projectId: string;
  /** The run (trace) id, lower-case hex. */
  runId: string;
  /** Lower-cased and trimmed. */
  metricName: string;
  /** Absent (null) means not scored; 0 is a score of zero. */
  numericValue: number | null;
  label: string | null;
  comment: string;
  /** The person who judged (a user id); never an API key. */
  authorId: string;
  createdAt: string;
}

export interface AnnotationFilter {
  projectId: string;
  /** One set of run ids (OR); absent: every run. */
  runIds?: string[];
  metricName?: string;
  authorId?: string;
}

export interface AnnotationStore {
  /**
   * Records the judgment, replacing the author's judgment of the same run and metric when there is one
   * (in one transaction). Returns the replaced judgment's id, if any.
   */
  replace(r: AnnotationRecord): Promise<{ replacedId: string | null }>;
  get(projectId: string, id: string): Promise<AnnotationRecord | undefined>;
  /** Oldest first by (created_at, id): at most `limit` rows after `after`. */
  list(f: AnnotationFilter, o: { after?: { createdAt: string; id: string }; limit: number }): Promise<AnnotationRecord[]>;
}
