/**
 * A Server-Sent Events reader (the WHATWG "event stream interpretation"): lines end with CRLF, LF or
 * CR; `event`, `data` (joined with "\n"), `id` and comments (`: ...`, skipped); a blank line
 * dispatches the event. `retry` is ignored (the caller owns the reconnection policy).
 */

export interface SseEvent {
  /** `message` when the stream named none. */
  event: string;
  data: string;
  /** The last event id seen so far (the stream's, persisting across events), if any. */
  id?: string;
}

/** Reads events from a response body until it ends. */
export async function* readSse(body: ReadableStream<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder('utf-8');
  const parser = new SseParser();
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      yield* parser.push(decoder.decode(value, { stream: true }));
    }
    // An event without its closing blank line at the end of the stream is discarded (as EventSource does).
    yield* parser.push(decoder.decode());
  } finally {
    reader.releaseLock();
  }
}

/** The incremental parser behind `readSse` (exported for tests). */
export class SseParser {
  private buffer = '';
  private first = true;
  private pendingCr = false;
  private event = '';
  private data: string[] = [];
  private hasData = false;
  private lastId: string | undefined;

  /** Feeds text; returns the events completed by it. */
  push(text: string): SseEvent[] {
    if (this.first && text.length > 0) {
      this.first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    // A CR that ended the previous chunk may be the first half of a CRLF.
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buffer += text;
    const out: SseEvent[] = [];
    for (;;) {
      const m = /\r\n|\n|\r/.exec(this.buffer);
      if (!m) break;
      // A lone CR at the very end may still be followed by LF in the next chunk.
      if (m[0] === '\r' && m.index === this.buffer.length - 1) this.pendingCr = true;
      const line = this.buffer.slice(0, m.index);
      this.buffer = this.buffer.slice(m.index + m[0].length);
      const ev = this.line(line);
      if (ev) out.push(ev);
    }
    return out;
  }

  private line(line: string): SseEvent | undefined {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (field === 'id') {
      if (!value.includes('\0')) this.lastId = value;
    }
    return undefined;
  }

  private dispatch(): SseEvent | undefined {
    const ev: SseEvent | undefined = this.hasData
      ? { event: this.event || 'message', data: this.data.join('\n'), ...(this.lastId ? { id: this.lastId } : {}) }
      : undefined;
    this.event = '';
    this.data = [];
    this.hasData = false;
    return ev;
  }
}
