/**
 * The change feed: how a node hears that control data it may hold in memory changed, on this node or
 * another (docs/several-nodes.md).
 *
 * Publishing goes through the control store (`stores.changes.publish`, with the writing transaction's
 * stores where there is one), so an announcement is sent exactly when the write commits. Receiving is here:
 *
 * - `InProcessChangeFeed` (SQLite, the embedded single process): the control store hands each committed
 *   announcement to its subscribers. Nothing can be missed.
 * - `PostgresChangeFeed` (postgres-change-feed.ts): the same local delivery plus a dedicated connection
 *   that LISTENs to what the other nodes NOTIFY. When that connection drops, notifications may have been
 *   missed: subscribers of `onResync` drop everything, and `live` is false until LISTEN holds again.
 *
 * Handlers only drop or re-check what they hold: a change may be delivered more than once (the writing node
 * hears its own NOTIFY too), and must be cheap to act on.
 */
import type { ControlStore, ControlStores } from '../storage/control/stores.js';
import type { Change, ChangeOf, ChangeTopic } from './changes.js';

export interface FeedLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface ChangeFeed {
  /**
   * True while this node hears every committed change (always, in process; on PostgreSQL, while its LISTEN
   * connection holds). Caches keep nothing while it is false.
   */
  readonly live: boolean;
  /** Announces a change; with `tx`, when that transaction commits. The same as `(tx ?? control).changes.publish`. */
  publish(change: Change, tx?: ControlStores): Promise<void>;
  /** Calls `handler` with each committed change of `topic`, from any node. Returns the unsubscribe function. */
  subscribe<T extends ChangeTopic>(topic: T, handler: (change: ChangeOf<T>) => void): () => void;
  /** Calls `handler` when changes may have been missed (the listening connection dropped, and again when it is back). */
  onResync(handler: () => void): () => void;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** Local fan-out of the control store's committed announcements: the whole feed of a single process. */
export class InProcessChangeFeed implements ChangeFeed {
  private readonly handlers = new Map<ChangeTopic, Set<(change: Change) => void>>();
  private readonly resyncs = new Set<() => void>();
  private unhook?: () => void;

  constructor(
    protected readonly control: ControlStore,
    protected readonly log?: FeedLog,
  ) {
    this.unhook = control.onCommittedChange((c) => this.deliver(c));
  }

  get live(): boolean {
    return true;
  }

  publish(change: Change, tx?: ControlStores): Promise<void> {
    return (tx ?? this.control).changes.publish(change);
  }

  subscribe<T extends ChangeTopic>(topic: T, handler: (change: ChangeOf<T>) => void): () => void {
    let set = this.handlers.get(topic);
    if (!set) this.handlers.set(topic, (set = new Set()));
    const h = handler as (change: Change) => void;
    set.add(h);
    return () => void set.delete(h);
  }

  onResync(handler: () => void): () => void {
    this.resyncs.add(handler);
    return () => void this.resyncs.delete(handler);
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    this.unhook?.();
    this.unhook = undefined;
  }

  /** Hands a change to its topic's handlers; one handler's failure never stops the others. */
  protected deliver(change: Change): void {
    for (const h of this.handlers.get(change.topic) ?? []) {
      try {
        h(change);
      } catch (err) {
        this.log?.error({ err: String(err), topic: change.topic }, 'changes: a handler failed');
      }
    }
  }

  /** Tells every cache to drop what it holds: changes may have been missed. */
  protected resync(): void {
    for (const h of this.resyncs) {
      try {
        h();
      } catch (err) {
        this.log?.error({ err: String(err) }, 'changes: a resync handler failed');
      }
    }
  }
}
