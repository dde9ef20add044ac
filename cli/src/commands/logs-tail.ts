/**
 * `svc logs tail`: the live tail over Server-Sent Events (`GET /stream/logs`), its reconnects and
 * the final events that stop it (spec 1, Authentication rule 8).
 */
import type { Context } from '../context.js';
import { CliError, ExitCode, type ExitCodeValue } from '../errors.js';
import type { Query } from '../http.js';
import { realSleep } from '../session.js';
import { readSse } from '../sse.js';
import type { LogRecord } from './logs.js';

export const TAIL_BACKOFF_MS = 1000;
export const TAIL_MAX_BACKOFF_MS = 30_000;

export const severityOf = (l: LogRecord) => l.severity ?? l.severity_text;

/** One record on one line, for the tail at a terminal (the whole body, newlines shown as ⏎). */
export function tailLine(l: LogRecord): string {
  const sev = (severityOf(l) ?? '-').toUpperCase().padEnd(5);
  const body = l.body === null || l.body === undefined ? '' : l.body.replace(/\r?\n/g, ' ⏎ ');
  return `${l.timestamp}  ${sev}  ${l.service_name ?? '-'}  ${body}`.trimEnd() + '\n';
}

/**
 * The tail: prints each `event: log`; a final `event: error` stops it (unauthorized exit 3, forbidden 4);
 * a stream that ends without one is reopened with `Last-Event-ID` after the backoff, unless
 * `reconnect` is false. A 429/503 refusal waits its `Retry-After` (else the backoff) and tries again.
 */
export async function tailLogs(ctx: Context, query: Query, reconnect: boolean): Promise<void> {
  const client = ctx.client();
  const sleep = ctx.io.sleep ?? realSleep;
  const ndjson = ctx.format === 'json';
  let lastId: string | undefined;
  let backoff = TAIL_BACKOFF_MS;
  let opened = false;
  const wait = async (ms: number, why: string) => {
    ctx.note(`${why}; reconnecting in ${ms / 1000}s`);
    await sleep(ms);
  };
  ctx.note('tailing logs (Ctrl-C to stop)');
  for (;;) {
    let res: Response;
    try {
      res = await client.stream('/stream/logs', { query, headers: lastId !== undefined ? { 'last-event-id': lastId } : undefined });
    } catch (e) {
      if (!reconnect || !(e instanceof CliError)) throw e;
      const status = e.extra.status;
      if (status === 429 || status === 503) {
        if (e.extra.retryAfter !== undefined) {
          await wait(e.extra.retryAfter * 1000, `refused (HTTP ${status})`);
          continue;
        }
      } else if (!(opened && (e.code === 'connection_failed' || (status !== undefined && status >= 500)))) throw e;
      await wait(backoff, status !== undefined ? `refused (HTTP ${status})` : 'cannot reach the server');
      backoff = Math.min(backoff * 2, TAIL_MAX_BACKOFF_MS);
      continue;
    }
    opened = true;
    let records = 0;
    try {
      if (res.body) {
        for await (const ev of readSse(res.body)) {
          if (ev.event === 'log') {
            if (ev.id !== undefined) lastId = ev.id;
            let log: LogRecord;
            try {
              log = JSON.parse(ev.data) as LogRecord;
            } catch {
              ctx.note('skipped a log event whose data is not JSON');
              continue;
            }
            records++;
            if (log && typeof log === 'object' && typeof log.log_id === 'string' && ev.id === undefined) lastId = log.log_id;
            ctx.io.stdout.write(ndjson ? `${JSON.stringify(log)}\n` : tailLine(log));
          } else if (ev.event === 'error') {
            const err = finalError(ev.data);
            if (err) throw err;
          }
        }
      }
    } catch (e) {
      if (e instanceof CliError) throw e;
      // The connection broke mid-stream: the same as an end without the final event.
    }
    if (!reconnect) return;
    if (records > 0) backoff = TAIL_BACKOFF_MS;
    await wait(backoff, 'the stream ended');
    backoff = Math.min(backoff * 2, TAIL_MAX_BACKOFF_MS);
  }
}

/** The CliError of a final `event: error` (`{"error","message","final":true}`), or undefined when not final. */
export function finalError(data: string): CliError | undefined {
  let body: { error?: unknown; message?: unknown; final?: unknown };
  try {
    body = JSON.parse(data) as typeof body;
  } catch {
    return undefined;
  }
  if (!body || typeof body !== 'object' || body.final !== true) return undefined;
  const code = typeof body.error === 'string' && body.error ? body.error : 'stream_error';
  const exit: ExitCodeValue = code === 'unauthorized' ? ExitCode.unauthenticated : code === 'forbidden' ? ExitCode.forbidden : ExitCode.general;
  const message = typeof body.message === 'string' && body.message ? body.message : `the server ended the stream: ${code}`;
  return new CliError(code, message, exit);
}
