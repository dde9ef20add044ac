/**
 * Session costs remembered by exactly what they were computed from.
 *
 * A session's cost is priced from every model call of its runs, each call rounded on its own, so it cannot be
 * kept as a sum at ingest; and prices may change at any time (a price set later prices runs already stored).
 * A page of 50 recent sessions of 100 runs each prices ~20,000 calls, most of the session list's time. So a
 * cost computed once is remembered with (1) the fingerprint the store gives of the session's calls (their
 * count and a hash of every run's usage: equal fingerprints mean equal calls) and (2) the prices it used,
 * model by model. A later page that finds the same fingerprint and the same prices for those models takes
 * the remembered cost; anything else is priced again from the calls. Nothing is kept that the current
 * answer would not be: a new run, a late span of a run, a run deleted, retention moving on, or a price
 * changed or removed changes one of the two.
 */
import type { ModelRef } from './pricing-port.js';
import type { Cost, GroupCostReason, PriceBook } from './cost.js';

interface Remembered {
  fingerprint: string;
  models: ModelRef[];
  prices: string;
  cost: Cost<GroupCostReason>;
}

/** Sessions remembered per service (least recently used forgotten first). */
const REMEMBERED = 20_000;

export class SessionCosts {
  private readonly entries = new Map<string, Remembered>();

  constructor(private readonly capacity = REMEMBERED) {}

  /** The models these calls name, each once. */
  static modelsOf(calls: { provider: string | null; model: string | null }[]): ModelRef[] {
    const seen = new Map<string, ModelRef>();
    for (const c of calls) if (c.model) seen.set(`${c.provider || ''}\u0000${c.model}`, { provider: c.provider || null, model: c.model });
    return [...seen.values()];
  }

  /** What the book prices these models at, as text (undefined prices included). */
  static pricesOf(book: PriceBook, models: ModelRef[]): string {
    return JSON.stringify(models.map((m) => book.price(m.provider, m.model) ?? null));
  }

  /** The remembered entry of a session whose calls have this fingerprint (its prices still to be compared). */
  candidate(projectId: string, sessionKey: string, fingerprint: string): Remembered | undefined {
    const k = `${projectId}\u0000${sessionKey}`;
    const e = this.entries.get(k);
    if (!e || e.fingerprint !== fingerprint) return undefined;
    this.entries.delete(k); // most recently used last
    this.entries.set(k, e);
    return e;
  }

  remember(projectId: string, sessionKey: string, e: Remembered): void {
    const k = `${projectId}\u0000${sessionKey}`;
    this.entries.delete(k);
    this.entries.set(k, e);
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
  }

  get size(): number {
    return this.entries.size;
  }
}
