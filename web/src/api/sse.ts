/**
 * Server-Sent Events over fetch (not EventSource): a refusal before the stream opens is the API's JSON
 * error, shown in its words, which EventSource cannot read. Reconnects after a dropped stream with
 * `Last-Event-ID` (the service resumes after that record), and stops on the service's final `error`
 * event (a revoked credential, a lost scope), whose message it reports.
 */
import { ApiFailure } from './client';

export interface SseEvent {
  event: string;
  id?: string;
  data: string;
}

/** Parses complete events out of `buffer`; answers them and what is left (an incomplete event). */
export function parseSse(buffer: string): { events: SseEvent[]; rest: string } {
  const events: SseEvent[] = [];
  const blocks = buffer.replace(/\r\n?/g, '\n').split('\n\n');
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    let event = 'message';
    let id: string | undefined;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (!line || line.startsWith(':')) continue;
      const at = line.indexOf(':');
      const field = at < 0 ? line : line.slice(0, at);
      const value = at < 0 ? '' : line.slice(at + 1).replace(/^ /, '');
      if (field === 'event') event = value;
      else if (field === 'id') id = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length) events.push({ event, id, data: data.join('\n') });
  }
  return { events, rest };
}

/**
 * Follows a stream until `signal` aborts or the service ends it for good. `open` starts one connection
 * (given the last event id seen); `onEvent` gets every event; `onStatus` the connection's state in words.
 */
export async function follow(opts: {
  open: (lastEventId: string | undefined, signal: AbortSignal) => Promise<{ body: ReadableStream<Uint8Array> }>;
  onEvent: (e: SseEvent) => void;
  onStatus: (status: 'open' | 'reconnecting' | 'ended', detail?: string) => void;
  onFailure: (f: ApiFailure) => void;
  signal: AbortSignal;
}): Promise<void> {
  let last: string | undefined;
  let delay = 1000;
  while (!opts.signal.aborted) {
    try {
      const { body } = await opts.open(last, opts.signal);
      opts.onStatus('open');
      delay = 1000;
      const reader = body.getReader();
      const decoder = new TextDecoder();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        const parsed = parseSse(buffer + decoder.decode(value, { stream: true }));
        buffer = parsed.rest;
        for (const e of parsed.events) {
          if (e.id) last = e.id;
          if (e.event === 'error') {
            const body = JSON.parse(e.data) as { error: string; message: string; final?: boolean };
            if (body.final) {
              opts.onFailure(new ApiFailure(0, body.error, body.message));
              opts.onStatus('ended', body.message);
              return;
            }
          }
          opts.onEvent(e);
        }
      }
    } catch (e) {
      if (opts.signal.aborted) return;
      if (e instanceof ApiFailure && e.status >= 400 && e.status < 500 && e.status !== 429) {
        opts.onFailure(e);
        opts.onStatus('ended', e.message);
        return;
      }
    }
    if (opts.signal.aborted) return;
    opts.onStatus('reconnecting', `reconnecting in ${delay / 1000} s`);
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(delay * 2, 30_000);
  }
}
