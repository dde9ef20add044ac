/**
 * A judge model for tests: a real HTTP server (node:http on 127.0.0.1, ephemeral port) answering
 * `POST /v1/chat/completions` as an OpenAI-compatible API does, from a queue of scripted replies, one per
 * request, in order. Every request is recorded (headers and parsed body) before it is answered.
 *
 * A scripted reply is one of:
 * - `{content, model?, usage?}`: a 200 chat completion whose message content is `content` (omit `model`
 *   or `usage` with `null`; the defaults are {@link JUDGE_REPLY_MODEL} and 100 prompt / 20 completion tokens);
 * - `{status, body?, headers?}`: that HTTP answer (an error, a rate limit);
 * - `{raw}`: a 200 whose body is this text (not a chat completion);
 * - `{hang: true}`: no answer at all (the connection stays open until the client gives up or the server closes).
 * An empty queue answers 500.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export const JUDGE_REPLY_MODEL = 'judge-model-2026-01-01';
export const DEFAULT_JUDGE_USAGE = { prompt_tokens: 100, completion_tokens: 20 };

export type ScriptedReply =
  | { content: string; model?: string | null; usage?: { prompt_tokens: number; completion_tokens: number } | null }
  | { status: number; body?: unknown; headers?: Record<string, string> }
  | { raw: string }
  | { hang: true };

export interface JudgeRequest {
  path: string;
  headers: IncomingMessage['headers'];
  body: { model?: string; messages?: { role: string; content: string }[]; temperature?: number; response_format?: unknown } & Record<string, unknown>;
}

export interface JudgeModelServer {
  /** `http://127.0.0.1:<port>/v1`. */
  baseUrl: string;
  requests: JudgeRequest[];
  /** Adds replies to the end of the queue. */
  script(...replies: ScriptedReply[]): void;
  /** The user message of request `i` (default: the last). */
  userMessage(i?: number): string;
  close(): Promise<void>;
}

/** A usable reply to a rubric: `{scores, label, reasoning}` as the judge asks for it. */
export const verdict = (scores: Record<string, number>, label = 'pass', reasoning = 'The agent answered the question.') =>
  JSON.stringify({ scores, label, reasoning });

function send(res: ServerResponse, status: number, text: string, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function answer(r: ScriptedReply | undefined, res: ServerResponse) {
  if (!r) return send(res, 500, JSON.stringify({ error: { message: 'no scripted reply left' } }));
  if ('hang' in r) return;
  if ('raw' in r) return send(res, 200, r.raw);
  if ('status' in r) return send(res, r.status, JSON.stringify(r.body ?? { error: { message: `scripted ${r.status}` } }), r.headers);
  const usage = r.usage === null ? undefined : (r.usage ?? DEFAULT_JUDGE_USAGE);
  const model = r.model === null ? undefined : (r.model ?? JUDGE_REPLY_MODEL);
  send(
    res,
    200,
    JSON.stringify({
      id: 'chatcmpl-judge',
      object: 'chat.completion',
      created: 1_767_225_600,
      ...(model !== undefined ? { model } : {}),
      choices: [{ index: 0, message: { role: 'assistant', content: r.content }, finish_reason: 'stop' }],
      ...(usage ? { usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens } } : {}),
    }),
  );
}

export async function startJudgeModelServer(): Promise<JudgeModelServer> {
  const queue: ScriptedReply[] = [];
  const requests: JudgeRequest[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      let body: JudgeRequest['body'] = {};
      try {
        body = JSON.parse(Buffer.concat(parts).toString('utf8')) as JudgeRequest['body'];
      } catch {
        body = {};
      }
      const path = (req.url ?? '/').split('?')[0]!;
      requests.push({ path, headers: req.headers, body });
      if (req.method !== 'POST' || path !== '/v1/chat/completions') return send(res, 404, JSON.stringify({ error: { message: `no route ${path}` } }));
      answer(queue.shift(), res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    script: (...replies) => void queue.push(...replies),
    userMessage: (i = requests.length - 1) => requests[i]?.body.messages?.find((m) => m.role === 'user')?.content ?? '',
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
