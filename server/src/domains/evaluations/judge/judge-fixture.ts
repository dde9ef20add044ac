/**
 * Test fixture of the judge tests: a listening test app, a judge model server, projects with a content
 * policy, agent runs sent with the real OpenTelemetry SDK, and their facts read back through the
 * agent-runs store (the run's row and its steps, as the evaluation runner reads them).
 */
import { projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { gridRules, setContentPolicy } from '../../../testing/content-policy.js';
import { startJudgeModelServer, type JudgeModelServer } from '../../../testing/judge-model-server.js';
import { sendAgentRun, type AgentRunOptions } from '../../../testing/otel-agent-run.js';
import type { AgentRunsStore } from '../../agent-runs/store.js';
import type { Boundary, ContentClass, Decision } from '../../content-policy/model.js';
import type { JudgeConfig, RunFacts } from '../model.js';
import type { JudgeInput } from '../ports.js';
import { ModelJudge, type JudgeDeps } from './judge.js';
import { OpenAiJudgeModel } from './openai-client.js';

export const SECRET_PROMPT = '[{"role":"user","content":"What is the refund policy for order 4471?"}]';
export const SECRET_COMPLETION = '[{"role":"assistant","content":"Refunds are possible within 30 days."}]';
export const SECRET_TOOL_ARGS = '{"query":"refund policy order 4471"}';
export const SECRET_TOOL_RESULT = '{"hits":3}';
export const ALL_CONTENT = { prompt: SECRET_PROMPT, completion: SECRET_COMPLETION, toolArguments: SECRET_TOOL_ARGS, toolResult: SECRET_TOOL_RESULT };

export interface JudgeFixture {
  t: TestApp;
  base: string;
  server: JudgeModelServer;
  store: AgentRunsStore;
  close(): Promise<void>;
}

export async function judgeFixture(): Promise<JudgeFixture> {
  // No policy cache: a test that changes (or fails) the policy store sees it at the next decision.
  const t = await testApp({ env: { SVC_CONTENT_POLICY_TTL_SECONDS: '0' } });
  const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  const server = await startJudgeModelServer();
  return {
    t,
    base,
    server,
    store: t.ctx.telemetry.agentRuns,
    async close() {
      await server.close();
      await t.close();
    },
  };
}

/** A project whose policy has every cell `allow` except the ones `cell` decides otherwise. */
export async function projectWith(f: JudgeFixture, cell: (c: ContentClass, b: Boundary) => Decision | undefined = () => undefined) {
  const p = await projectWithKey(f.t, ['agents:read', 'ingest:write']);
  await setContentPolicy(f.t, p.projectId, gridRules((c, b) => cell(c, b) ?? 'allow'));
  return p;
}

/** Sends the issue-4 agent run (with `content`, if any) and reads back its facts and trace id. */
export async function sendRun(f: JudgeFixture, key: string, projectId: string, content?: AgentRunOptions['content']): Promise<RunFacts> {
  const spans = await sendAgentRun({ base: f.base, format: 'json', key, content });
  const runId = spans.root.spanContext().traceId;
  const [row] = await f.store.runs({ projectId, traceIds: [runId] }, {});
  if (!row) throw new Error('the run was not stored');
  const steps = await f.store.steps(projectId, runId);
  return {
    kind: 'run',
    runId,
    status: row.status,
    startUs: row.startUs,
    durationMs: Math.round((row.endUs - row.startUs) / 1000),
    stepCount: row.stepCount,
    errorSteps: row.errorSteps,
    toolCalls: row.toolCalls,
    modelCalls: row.modelCalls,
    costNanos: null,
    safetyErrorSteps: null,
    steps: steps
      .filter((s) => s.spanId !== row.rootSpanId)
      .map((s) => ({ spanId: s.spanId, parentSpanId: s.parentSpanId, canonicalOperation: s.canonicalOperation, outcome: s.outcome, toolName: s.toolName, startUs: s.startUs })),
    sessionKey: row.sessionKey,
    release: null,
  };
}

export function rubric(over: Partial<JudgeConfig> = {}): JudgeConfig {
  return {
    criteria: [
      { name: 'helpful', description: 'The answer addresses the question', weight: 3 },
      { name: 'grounded', description: 'The answer is supported by the tool results', weight: 1 },
    ],
    evidence: ['run_summary', 'step_sequence', 'model_transcript', 'tool_calls'],
    max_evidence_chars: 12_000,
    ...over,
  };
}

export function judgeOf(f: JudgeFixture, over: Partial<JudgeDeps> = {}, timeoutMs = 5000): ModelJudge {
  return new ModelJudge({
    steps: f.store,
    policy: f.t.ctx.contentPolicy,
    pricing: f.t.ctx.llmPricing,
    model: new OpenAiJudgeModel({ baseUrl: f.server.baseUrl, apiKey: 'judge-secret-key', timeoutMs }),
    settings: { defaultModel: 'judge-default', maxAttempts: 3 },
    backoffMs: 1,
    ...over,
  });
}

export function input(f: JudgeFixture, projectId: string, facts: JudgeInput['facts'], config: JudgeConfig, over: Partial<JudgeInput> = {}): JudgeInput {
  return { orgId: f.t.orgId, projectId, config, facts, credentialMayReadContent: true, signal: new AbortController().signal, ...over };
}
