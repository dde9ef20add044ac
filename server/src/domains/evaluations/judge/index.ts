/**
 * The model judge as the service builds it: the OpenAI-compatible client when SVC_JUDGE_BASE_URL is set
 * (no client otherwise: a judge evaluation then answers 503 `judge_not_configured`).
 */
import type { JudgeSettings } from '../../../config.js';
import { ModelJudge, type JudgeDeps } from './judge.js';
import { OpenAiJudgeModel } from './openai-client.js';

export { ModelJudge, type JudgeDeps } from './judge.js';

export function modelJudge(settings: JudgeSettings, deps: Omit<JudgeDeps, 'model' | 'settings'>): ModelJudge {
  const model = settings.baseUrl ? new OpenAiJudgeModel({ baseUrl: settings.baseUrl, apiKey: settings.apiKey, timeoutMs: settings.timeoutSeconds * 1000 }) : null;
  return new ModelJudge({ ...deps, model, settings });
}
