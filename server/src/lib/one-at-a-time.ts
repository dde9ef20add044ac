/** Work that must not overlap, run in arrival order (one telemetry store's deletes, its trace deletes and span writes). */
/** Runs tasks one at a time, in arrival order; a failed task does not stop the next. */
export class OneAtATime {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const out = this.tail.then(fn);
    this.tail = out.catch(() => undefined);
    return out;
  }
}

const deleteQueues = new WeakMap<object, OneAtATime>();

/**
 * The deletes of one telemetry store (metric tombstones, log deletes) run one at a time, so identical
 * concurrent deletes never race on the same rows or tombstone (DuckDB refuses the second writer of a row
 * instead of waiting). A task takes its connection inside the queue, so waiting deletes hold none.
 */
export function deleteQueue(db: object): OneAtATime {
  let q = deleteQueues.get(db);
  if (!q) deleteQueues.set(db, (q = new OneAtATime()));
  return q;
}

const traceGates = new WeakMap<object, OneAtATime>();

/** Per telemetry store: span writes and trace deletes, one at a time (a delete never interleaves with a write of the trace it removes). */
export function traceGate(db: object): OneAtATime {
  let q = traceGates.get(db);
  if (!q) traceGates.set(db, (q = new OneAtATime()));
  return q;
}
