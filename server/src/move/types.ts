/** Shapes shared by the parts of the move (move.ts). */

/**
 * Called after a batch's insert into the destination returned and before the batch is recorded as done (for
 * control data: inside the batch's transaction). A hook that throws interrupts the move at that point, which is
 * the worst moment for a crash: the tests use it to interrupt and resume.
 */
export type MoveHook = (at: { phase: 'control' | 'telemetry' | 'summaries'; table: string; batch: number; rows: number }) => void | Promise<void>;

export interface CountRow {
  store: 'control' | 'telemetry';
  table: string;
  /** Rows in the source (null: the table is not in the source). */
  source: number | null;
  /** Rows stored in the destination (ClickHouse: stored rows, before any merge). */
  destination: number | null;
  /** ClickHouse tables read with FINAL (summaries): the rows a read sees. */
  visible?: number;
  /** Whether the counts agree (for the summaries: source and visible rows). */
  ok: boolean;
  note?: string;
}
