/**
 * The judge model seam: one chat call to a model that answers JSON. The OpenAI-compatible client
 * (openai-client.ts) is one implementation; another provider implements `JudgeModel` the same way.
 *
 * A call either answers (`JudgeCompletion`, whatever its content: judge.ts decides whether the reply is
 * usable) or throws a `JudgeCallError` saying whether another call may succeed (a timeout, a refused
 * connection, 429 and 5xx answers) or not (a refused key, an unknown model). Retries, their backoff and
 * the attempt budget belong to the caller (calls.ts), so every provider retries the same way.
 */

export interface JudgeMessage {
  role: 'system' | 'user';
  content: string;
}

export interface JudgeUsage {
  input_tokens: number;
  output_tokens: number;
}

export interface JudgeCompletion {
  /** The reply's text (the model was asked for a JSON object). */
  content: string;
  /** The model that actually answered, when the reply names it. */
  model?: string;
  /** Token usage, when the reply reports it. */
  usage?: JudgeUsage;
}

export interface JudgeModel {
  complete(req: { model: string; messages: JudgeMessage[]; signal: AbortSignal }): Promise<JudgeCompletion>;
}

/** A call that brought no reply. `retryable`: another call may succeed (timeout, transport failure, 429, 5xx). */
export class JudgeCallError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The HTTP status of the provider's answer, when there was one. */
    readonly status?: number,
    /** Seconds the provider asked to wait (Retry-After), when it said. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}
