/**
 * Group commit without a transaction: requests hand over their work and wait; one flush at a time takes
 * everything queued since the last one and stores it with as few inserts as possible (ClickHouse wants
 * few large inserts: each makes a part). A waiter is resolved only after every insert of its flush
 * returned, so a 2xx built on it means stored. When a flush of several requests fails, each is retried on
 * its own, so only a request that cannot be stored is refused. (A retry may store a row twice; every read
 * takes one copy of a row, as it does of a client's retried export.)
 */
import { PartialWriteError, WriterStoppedError } from '../../../lib/writer-stopped.js';

interface Waiting<T> {
  item: T;
  resolve(): void;
  reject(e: unknown): void;
}

export class Batcher<T> {
  private queue: Waiting<T>[] = [];
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly what: string,
    private readonly flushItems: (items: T[]) => Promise<void>,
  ) {}

  get isStopped(): boolean {
    return this.stopped;
  }

  write(item: T): Promise<void> {
    if (this.stopped) return Promise.reject(new WriterStoppedError(this.what));
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.running ??= this.loop();
    });
  }

  async flush(): Promise<void> {
    while (this.running) await this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.flush();
  }

  private async loop(): Promise<void> {
    // Let the requests of the current tick join the first flush.
    await new Promise<void>((r) => setImmediate(r));
    try {
      while (this.queue.length > 0) {
        const batch = this.queue;
        this.queue = [];
        try {
          await this.flushItems(batch.map((w) => w.item));
          for (const w of batch) w.resolve();
        } catch (e) {
          if (batch.length === 1) {
            batch[0].reject(new PartialWriteError(this.what, e));
            continue;
          }
          for (const w of batch) {
            try {
              await this.flushItems([w.item]);
              w.resolve();
            } catch (e1) {
              w.reject(new PartialWriteError(this.what, e1));
            }
          }
        }
      }
    } finally {
      this.running = null;
    }
  }
}
