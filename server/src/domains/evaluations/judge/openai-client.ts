/**
 * An OpenAI-compatible chat-completions client over `fetch` (the judge's default provider): POST
 * `{base}/chat/completions` with `Authorization: Bearer <key>`, temperature 0 and
 * `response_format: {type: 'json_object'}`. One call per `complete`, bounded by the per-call timeout and
 * by the caller's signal; retries are the caller's (calls.ts).
 *
 * What a call answers: the first choice's message content, the `model` the reply names, and `usage`
 * (prompt and completion tokens) when reported. What it throws (`JudgeCallError`): a timeout, a transport
 * failure, 408, 429 and 5xx (retryable); any other non-2xx answer, which another call would not change
 * (not retryable); a 2xx whose body is not a chat completion (retryable: a proxy's page, a cut body).
 * An abort by the caller's signal is rethrown as the signal's reason, never turned into a retry.
 */
import { JudgeCallError, type JudgeCompletion, type JudgeMessage, type JudgeModel } from './provider.js';

/** A reply larger than this is not read (a judge reply is one small JSON object). */
const MAX_REPLY_BYTES = 1024 * 1024;

export interface OpenAiJudgeOptions {
  /** E.g. `https://api.openai.com/v1` (no trailing slash needed). */
  baseUrl: string;
  apiKey?: string;
  timeoutMs: number;
}

const RETRYABLE_STATUS = (s: number) => s === 408 || s === 429 || s >= 500;

function retryAfter(h: string | null): number | undefined {
  if (!h || !/^\d{1,6}$/.test(h.trim())) return undefined;
  return Number(h.trim());
}

async function readCapped(res: Response): Promise<string> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > MAX_REPLY_BYTES) throw new JudgeCallError(`the judge reply is larger than ${MAX_REPLY_BYTES} bytes`, true, res.status);
  const reader = res.body?.getReader();
  if (!reader) return '';
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_REPLY_BYTES) {
      await reader.cancel().catch(() => {});
      throw new JudgeCallError(`the judge reply is larger than ${MAX_REPLY_BYTES} bytes`, true, res.status);
    }
    parts.push(value);
  }
  return Buffer.concat(parts).toString('utf8');
}

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined);

/** The parts of a chat completion the judge reads; throws (retryable) when the body is not one. */
export function completionOf(text: string, status: number): JudgeCompletion {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new JudgeCallError('the judge endpoint answered a body that is not JSON', true, status);
  }
  const b = body as { choices?: { message?: { content?: unknown } }[]; model?: unknown; usage?: { prompt_tokens?: unknown; completion_tokens?: unknown } };
  const content = Array.isArray(b?.choices) ? b.choices[0]?.message?.content : undefined;
  if (typeof content !== 'string') throw new JudgeCallError('the judge endpoint answered no message content', true, status);
  const input = count(b.usage?.prompt_tokens);
  const output = count(b.usage?.completion_tokens);
  return {
    content,
    ...(typeof b.model === 'string' && b.model.trim() !== '' ? { model: b.model } : {}),
    ...(input !== undefined && output !== undefined ? { usage: { input_tokens: input, output_tokens: output } } : {}),
  };
}

export class OpenAiJudgeModel implements JudgeModel {
  private readonly url: string;
  constructor(private readonly o: OpenAiJudgeOptions) {
    this.url = `${o.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  }

  async complete(req: { model: string; messages: JudgeMessage[]; signal: AbortSignal }): Promise<JudgeCompletion> {
    req.signal.throwIfAborted();
    const timeout = AbortSignal.timeout(this.o.timeoutMs);
    const signal = AbortSignal.any([req.signal, timeout]);
    try {
      const res = await fetch(this.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json', ...(this.o.apiKey ? { authorization: `Bearer ${this.o.apiKey}` } : {}) },
        body: JSON.stringify({ model: req.model, messages: req.messages, temperature: 0, response_format: { type: 'json_object' } }),
        signal,
        redirect: 'error',
      });
      const text = await readCapped(res);
      if (!res.ok) {
        throw new JudgeCallError(`the judge endpoint answered HTTP ${res.status}`, RETRYABLE_STATUS(res.status), res.status, retryAfter(res.headers.get('retry-after')));
      }
      return completionOf(text, res.status);
    } catch (e) {
      if (req.signal.aborted) throw req.signal.reason;
      if (e instanceof JudgeCallError) throw e;
      if (timeout.aborted) throw new JudgeCallError(`the judge call timed out after ${this.o.timeoutMs} ms`, true);
      throw new JudgeCallError(`the judge endpoint could not be reached (${(e as Error)?.message ?? 'transport failure'})`, true);
    }
  }
}
