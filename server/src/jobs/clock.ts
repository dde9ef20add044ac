/**
 * The runner's clock port: the time, and a way to wait. Production waits on real timers; tests use
 * ManualClock, whose time moves only when told, waking whoever waits for the new time.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../lib/clock.js';

export interface JobClock extends Clock {
  /** Resolves after `ms` of this clock's time, or at once when `signal` aborts (never rejects). */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

async function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  try {
    await delay(ms, undefined, { signal, ref: false });
  } catch {
    /* aborted */
  }
}

/** A clock's time with real waits (the service's own clock may be a fixed one in tests). */
export function jobClock(clock: Clock): JobClock {
  if ('sleep' in clock && typeof (clock as JobClock).sleep === 'function') return clock as JobClock;
  return { now: () => clock.now(), sleep: realSleep };
}

export const systemJobClock: JobClock = jobClock({ now: () => new Date() });

interface Sleeper {
  until: number;
  resolve(): void;
}

/** The test clock: a fixed time that `set`/`advance` move; sleepers wake when their time comes. */
export class ManualClock implements JobClock {
  private t: number;
  private sleepers: Sleeper[] = [];

  constructor(iso: string) {
    this.t = Date.parse(iso);
    if (Number.isNaN(this.t)) throw new Error(`ManualClock: not a time: ${iso}`);
  }

  now(): Date {
    return new Date(this.t);
  }

  set(iso: string): void {
    this.t = Date.parse(iso);
    this.wake();
  }

  advance(ms: number): void {
    this.t += ms;
    this.wake();
  }

  /** How many are waiting on this clock. */
  get waiting(): number {
    return this.sleepers.length;
  }

  /** The time left of each wait, in ms (tests wait until the runner waits for a given period). */
  pendingSleeps(): number[] {
    return this.sleepers.map((s) => s.until - this.t);
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (ms <= 0 || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const s: Sleeper = {
        until: this.t + ms,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        this.sleepers = this.sleepers.filter((x) => x !== s);
        s.resolve();
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.sleepers.push(s);
    });
  }

  private wake(): void {
    const due = this.sleepers.filter((s) => s.until <= this.t);
    this.sleepers = this.sleepers.filter((s) => s.until > this.t);
    for (const s of due) s.resolve();
  }
}
