/**
 * Identical reads share one answer (request collapsing). A route that only reads telemetry says
 * `sharedRead: true`; two requests to it are identical when the same credential sends the same method,
 * URL (path and query string, as sent), body and `Accept` header.
 *
 * Per identical request at most one answer is being computed at a time. A request that arrives while
 * none is running computes its own. One that arrives while one is running never takes that answer (it
 * may have been read before this request's writes were acknowledged): it waits for the next run, which
 * starts when the running one ends and answers every request that arrived in between. So a shared answer
 * is always read after the request arrived and before it is answered, exactly as its own would be: it
 * sees every write acknowledged before the request was sent, and a relative window (`since=1h`) ends at
 * an instant within the request's own lifetime. Under concurrency this bounds the work of a popular read
 * (a dashboard polled by many clients, the default run list) to one computation after another, however
 * many clients ask; without concurrency nothing changes.
 *
 * What each request still does itself: authentication, scope and budget checks, query validation (all
 * before this hook), its audit line and its own response headers. The shared part is the status, the
 * body as serialized by the first request and its content headers. A streamed answer is never shared
 * (those requests run on their own).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route only reads: identical concurrent requests may share one answer (http/shared-reads.ts). */
    sharedRead?: boolean;
  }
  interface FastifyRequest {
    /** The run this request computes for the requests identical to it. */
    sharedRun?: SharedRun;
  }
}

/** What a waiting request answers with. */
interface Answer {
  status: number;
  headers: Record<string, string>;
  payload: string | Buffer;
}

interface SharedRun {
  key: string;
  done: boolean;
  /** Settles with the answer, or with undefined when there is none to share (each waiter then runs its own). */
  promise: Promise<Answer | undefined>;
  settle: (a: Answer | undefined) => void;
}

interface Slot {
  running?: SharedRun;
  /** Starts when `running` ends; requests that arrived during `running` wait for it. */
  next?: SharedRun;
}

/** Headers of the first answer that every shared answer carries (content description; never per-request ones). */
const SHARED_HEADERS = ['content-type', 'cache-control', 'link', 'allow'];

function newRun(key: string): SharedRun {
  let settle!: (a: Answer | undefined) => void;
  const promise = new Promise<Answer | undefined>((resolve) => (settle = resolve));
  return { key, done: false, promise, settle };
}

function keyOf(req: FastifyRequest): string | undefined {
  const p = req.principal;
  if (!p) return undefined;
  const who = `${p.kind}:${p.keyId ?? p.signInId ?? p.connectionId ?? ''}:${p.orgId}`;
  let body = '';
  if (req.body !== undefined && req.body !== null) {
    if (typeof req.body === 'string') body = req.body;
    else if (Buffer.isBuffer(req.body)) body = req.body.toString('base64');
    else body = JSON.stringify(req.body);
  }
  return JSON.stringify([who, req.method, req.url, req.headers.accept ?? '', body]);
}

/** Identical requests in flight, by key (exported for tests: empty once every request is answered). */
export const sharedSlots = new Map<string, Slot>();

export function registerSharedReads(app: FastifyInstance): void {
  const slots = sharedSlots;

  function end(run: SharedRun, answer: Answer | undefined): void {
    if (run.done) return;
    run.done = true;
    const slot = slots.get(run.key);
    if (slot?.running === run) slot.running = undefined;
    if (slot && !slot.running && !slot.next) slots.delete(run.key);
    run.settle(answer);
  }

  async function answerFrom(reply: FastifyReply, a: Answer): Promise<FastifyReply> {
    return reply.code(a.status).headers(a.headers).send(a.payload);
  }

  app.addHook('preHandler', async (req, reply) => {
    if (!req.routeOptions.config.sharedRead) return;
    const key = keyOf(req);
    if (key === undefined) return;
    let slot = slots.get(key);
    if (!slot) slots.set(key, (slot = {}));
    if (slot.next) {
      // The next run has not started: its answer is read after this request arrived.
      const a = await slot.next.promise;
      if (a) return answerFrom(reply, a);
      return; // nothing to share: this request runs on its own
    }
    if (!slot.running) {
      req.sharedRun = slot.running = newRun(key);
      return;
    }
    // One is running (perhaps read before this request arrived): this request leads the next one.
    const next = (slot.next = newRun(key));
    const running = slot.running;
    await running.promise;
    if (slot.next === next) slot.next = undefined;
    slot.running = next;
    slots.set(key, slot);
    req.sharedRun = next;
  });

  app.addHook('onSend', async (req, reply, payload) => {
    const run = req.sharedRun;
    if (!run || run.done) return payload;
    if (typeof payload === 'string' || Buffer.isBuffer(payload)) {
      const headers: Record<string, string> = {};
      for (const h of SHARED_HEADERS) {
        const v = reply.getHeader(h);
        if (v !== undefined) headers[h] = String(v);
      }
      end(run, { status: reply.statusCode, headers, payload });
    } else end(run, undefined); // a stream (or no body): each waiter runs its own
    return payload;
  });

  // A leader that never reached onSend (its connection dropped) lets its waiters run on their own.
  app.addHook('onResponse', async (req) => {
    if (req.sharedRun) end(req.sharedRun, undefined);
  });
  app.addHook('onRequestAbort', async (req) => {
    if (req.sharedRun) end(req.sharedRun, undefined);
  });
}
