/**
 * Server-Sent Events over a Fastify reply: the route hands the socket over (`reply.hijack()`), so the
 * error handler and serializers no longer apply; errors must be raised before `openSse` is called.
 *
 * Spec 1, Authentication rule 8: a stream stopped because the credential no longer authenticates or no
 * longer holds a permission ends with a final event (`finalError`); routine expiry ends it without one.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

export interface SseStream {
  /** Sends one event; resolves once the socket can take more (backpressure). */
  send(event: string, data: unknown, id?: string): Promise<void>;
  /** A comment line (`: text`), used for heartbeats; ignored by clients. */
  comment(text: string): void;
  /** The final error event of rule 8, then the end of the stream. */
  finalError(error: 'unauthorized' | 'forbidden', message: string): void;
  end(): void;
  readonly closed: boolean;
  /** Called once when the stream ends, by either side. */
  onClose(fn: () => void): void;
}

/** One event in the SSE wire format; `data` is JSON on one line. */
export function sseEvent(event: string, data: unknown, id?: string): string {
  return `${id !== undefined ? `id: ${id.replace(/[\r\n]/g, '')}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

export function openSse(req: FastifyRequest, reply: FastifyReply): SseStream {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  // The first bytes tell the client the stream is open (and flush proxies).
  res.write(': stream open\n\n');
  let closed = false;
  const listeners: (() => void)[] = [];
  const close = () => {
    if (closed) return;
    closed = true;
    for (const fn of listeners.splice(0)) {
      try {
        fn();
      } catch {
        /* a listener's fault must not keep the others from running */
      }
    }
  };
  req.raw.on('close', close);
  res.on('close', close);
  res.on('error', close);

  // Writers waiting for 'drain'; released on drain or when the stream closes.
  const waiting = new Set<() => void>();
  res.on('drain', () => {
    for (const w of [...waiting]) w();
  });
  listeners.push(() => {
    for (const w of [...waiting]) w();
  });
  const write = (chunk: string): Promise<void> => {
    if (closed) return Promise.resolve();
    if (res.write(chunk)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        waiting.delete(done);
        resolve();
      };
      waiting.add(done);
    });
  };

  const end = () => {
    if (!closed && !res.writableEnded) res.end();
    close();
  };

  return {
    send: (event, data, id) => write(sseEvent(event, data, id)),
    comment(text) {
      if (!closed) res.write(`: ${text.replace(/[\r\n]/g, ' ')}\n\n`);
    },
    finalError(error, message) {
      if (!closed) res.write(sseEvent('error', { error, message, final: true }));
      end();
    },
    end,
    get closed() {
      return closed;
    },
    onClose(fn) {
      if (closed) fn();
      else listeners.push(fn);
    },
  };
}
