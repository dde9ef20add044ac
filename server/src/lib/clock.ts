import { randomUUID } from 'node:crypto';

/** Injected time and id sources, so tests can be exact. */
export interface Clock {
  now(): Date;
}
export const systemClock: Clock = { now: () => new Date() };

export interface IdGenerator {
  uuid(): string;
}
export const randomIds: IdGenerator = { uuid: () => randomUUID() };
