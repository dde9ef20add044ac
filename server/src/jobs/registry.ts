/** Job kinds and their handlers; a runner claims only the kinds registered in its own process. */
import type { JobHandler, RegisterOptions } from './types.js';

/** Lower-case words joined by `.`, `_` or `-` (e.g. `signals.review_window`). */
export const KIND_PATTERN = /^[a-z][a-z0-9]*(?:[._-][a-z0-9]+)*$/;
export const MAX_KIND_LENGTH = 100;
export const DEFAULT_TIMEOUT_SECONDS = 900;
export const DEFAULT_BACKOFF_BASE_SECONDS = 30;
/** The longest interval of a recurring job (a year). */
export const MAX_EVERY_SECONDS = 366 * 86_400;
/** No retry waits longer than this. */
export const MAX_BACKOFF_SECONDS = 3600;

export interface Registered {
  kind: string;
  handler: JobHandler<any>;
  maxAttempts?: number;
  everySeconds?: number;
  timeoutSeconds: number;
  backoffBaseSeconds: number;
}

function positiveInt(name: string, v: number | undefined, max: number): void {
  if (v !== undefined && (!Number.isInteger(v) || v < 1 || v > max)) throw new Error(`${name} must be an integer between 1 and ${max}, got ${v}`);
}

export function assertKind(kind: string): void {
  if (typeof kind !== 'string' || kind.length > MAX_KIND_LENGTH || !KIND_PATTERN.test(kind))
    throw new Error(`job kind must be lower-case words joined by . _ or - (at most ${MAX_KIND_LENGTH} characters), got "${String(kind).slice(0, 120)}"`);
}

export class JobRegistry {
  private readonly kinds = new Map<string, Registered>();

  register<P>(kind: string, handler: JobHandler<P>, opts: RegisterOptions = {}): void {
    assertKind(kind);
    if (this.kinds.has(kind)) throw new Error(`job kind "${kind}" is already registered`);
    positiveInt('maxAttempts', opts.maxAttempts, 100);
    positiveInt('everySeconds', opts.everySeconds, MAX_EVERY_SECONDS);
    positiveInt('timeoutSeconds', opts.timeoutSeconds, 86_400);
    positiveInt('backoffBaseSeconds', opts.backoffBaseSeconds, MAX_BACKOFF_SECONDS);
    this.kinds.set(kind, {
      kind,
      handler: handler as JobHandler<any>,
      maxAttempts: opts.maxAttempts,
      everySeconds: opts.everySeconds,
      timeoutSeconds: opts.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS,
      backoffBaseSeconds: opts.backoffBaseSeconds ?? DEFAULT_BACKOFF_BASE_SECONDS,
    });
  }

  get(kind: string): Registered | undefined {
    return this.kinds.get(kind);
  }

  /** Throws for a kind nobody registered (a typo would otherwise wait forever). */
  require(kind: string): Registered {
    const r = this.kinds.get(kind);
    if (!r) throw new Error(`job kind "${String(kind).slice(0, 120)}" is not registered`);
    return r;
  }

  names(): string[] {
    return [...this.kinds.keys()];
  }

  recurring(): Registered[] {
    return [...this.kinds.values()].filter((r) => r.everySeconds !== undefined);
  }
}

/**
 * The wait before the next attempt after `attempt` (1-based) failed: base × 2^(attempt−1), at most
 * an hour. With the default base: 30 s, 1 min, 2 min, 4 min, 8 min, ...
 */
export function retryDelaySeconds(attempt: number, baseSeconds = DEFAULT_BACKOFF_BASE_SECONDS): number {
  return Math.min(baseSeconds * 2 ** Math.max(0, attempt - 1), MAX_BACKOFF_SECONDS);
}
