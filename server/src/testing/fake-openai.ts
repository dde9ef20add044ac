/**
 * A fake OpenAI-compatible model server for the framework tests (ingest/otlp/frameworks/): node:http on
 * 127.0.0.1 with an ephemeral port, answering `POST /v1/chat/completions` (plain JSON, or server-sent
 * events when the request says `stream: true`) and `POST /v1/embeddings`.
 *
 * The script is a two-step tool loop, decided by the conversation it is sent (so every framework, whatever
 * it retries or resends, gets the same answers): while no `tool` message is in the request, the answer asks
 * for one call of `get_weather` with arguments `{"city":"Paris"}` (finish_reason `tool_calls`); once the
 * tool result is in the request, the answer is the final text (finish_reason `stop`). Each answer carries
 * `usage` and the fixed response model {@link FAKE_RESPONSE_MODEL}; a stream carries usage in its last chunk
 * when the request asks for it (`stream_options.include_usage`), as OpenAI does.
 *
 * Every request received is recorded (path and parsed body) in `requests`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** The model the clients ask for. */
export const FAKE_REQUEST_MODEL = 'fake-gpt';
/** The model every answer names (differs from the request model, so fixtures show which one a framework records). */
export const FAKE_RESPONSE_MODEL = 'fake-gpt-2026-01-01';
export const WEATHER_TOOL = 'get_weather';
export const WEATHER_ARGS = '{"city":"Paris"}';
export const WEATHER_CALL_ID = 'call_weather_1';
/** What the tests' `get_weather` returns. */
export const WEATHER_RESULT = { city: 'Paris', temperature_c: 21, condition: 'sunny' };
export const FINAL_ANSWER = 'It is sunny and 21 °C in Paris.';
/** Usage of the tool-call answer and of the final answer. */
export const TOOL_CALL_USAGE = { prompt_tokens: 52, completion_tokens: 17, total_tokens: 69 };
export const FINAL_USAGE = { prompt_tokens: 88, completion_tokens: 12, total_tokens: 100 };
const CREATED = 1_767_225_600; // 2026-01-01T00:00:00Z

/** The OpenAI function-tool definition of `get_weather`, for clients that take raw tool JSON. */
export const WEATHER_TOOL_DEFINITION = {
  type: 'function' as const,
  function: {
    name: WEATHER_TOOL,
    description: 'Current weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
  },
};

export interface RecordedRequest {
  method: string;
  path: string;
  body: Record<string, unknown> | undefined;
}

export interface FakeOpenAi {
  /** `http://127.0.0.1:<port>/v1`, the base URL OpenAI clients take. */
  baseURL: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

type Message = { role?: string };

function chatAnswer(body: Record<string, unknown>) {
  const messages = Array.isArray(body.messages) ? (body.messages as Message[]) : [];
  const toolResultSeen = messages.some((m) => m?.role === 'tool');
  const n = toolResultSeen ? 2 : 1;
  return toolResultSeen
    ? { id: `chatcmpl-fake-${n}`, finish: 'stop' as const, content: FINAL_ANSWER, toolCall: false, usage: FINAL_USAGE }
    : { id: `chatcmpl-fake-${n}`, finish: 'tool_calls' as const, content: null, toolCall: true, usage: TOOL_CALL_USAGE };
}

const toolCall = { id: WEATHER_CALL_ID, type: 'function', function: { name: WEATHER_TOOL, arguments: WEATHER_ARGS } };

function sendJson(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function chatCompletion(body: Record<string, unknown>, res: ServerResponse) {
  const a = chatAnswer(body);
  const base = { id: a.id, created: CREATED, model: FAKE_RESPONSE_MODEL, system_fingerprint: 'fp_fake' };
  if (body.stream !== true) {
    sendJson(res, 200, {
      ...base,
      object: 'chat.completion',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: a.content, refusal: null, ...(a.toolCall ? { tool_calls: [toolCall] } : {}) },
          logprobs: null,
          finish_reason: a.finish,
        },
      ],
      usage: a.usage,
    });
    return;
  }
  const includeUsage = (body.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true;
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...extra })}\n\n`);
  const delta = (d: Record<string, unknown>, finish: string | null = null) => chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);
  if (a.toolCall) {
    delta({ role: 'assistant', content: null, tool_calls: [{ index: 0, ...toolCall, function: { name: WEATHER_TOOL, arguments: '' } }] });
    delta({ tool_calls: [{ index: 0, function: { arguments: WEATHER_ARGS.slice(0, 8) } }] });
    delta({ tool_calls: [{ index: 0, function: { arguments: WEATHER_ARGS.slice(8) } }] });
  } else {
    delta({ role: 'assistant', content: '' });
    const words = FINAL_ANSWER.split(/(?<= )/);
    for (const w of words) delta({ content: w });
  }
  delta({}, a.finish);
  if (includeUsage) chunk([], { usage: a.usage });
  res.write('data: [DONE]\n\n');
  res.end();
}

function embeddings(body: Record<string, unknown>, res: ServerResponse) {
  const inputs = Array.isArray(body.input) ? body.input : [body.input];
  sendJson(res, 200, {
    object: 'list',
    data: inputs.map((_, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2, 0.3] })),
    model: 'fake-embedding',
    usage: { prompt_tokens: 4 * inputs.length, total_tokens: 4 * inputs.length },
  });
}

async function readBody(req: IncomingMessage): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of req) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

/** Starts the fake server on 127.0.0.1 and an ephemeral port. */
export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    readBody(req)
      .then((text) => {
        const path = (req.url ?? '/').split('?')[0]!;
        let body: Record<string, unknown> | undefined;
        try {
          body = text ? (JSON.parse(text) as Record<string, unknown>) : undefined;
        } catch {
          body = undefined;
        }
        requests.push({ method: req.method ?? '', path, body });
        if (req.method !== 'POST' || !body) return sendJson(res, 400, { error: { message: 'POST a JSON body', type: 'invalid_request_error' } });
        if (path === '/v1/chat/completions') return chatCompletion(body, res);
        if (path === '/v1/embeddings') return embeddings(body, res);
        sendJson(res, 404, { error: { message: `no route ${path}`, type: 'invalid_request_error' } });
      })
      .catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}
