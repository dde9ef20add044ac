/**
 * Test fixture of the sampling job: an app listening on a port, projects whose runs the real OpenTelemetry
 * SDK sends, and the job's two ports as seams: an in-memory `SamplingRules` (the rules' CRUD is another
 * part; here each test states its rules exactly) and a recording `EvaluationRunner` that answers as the
 * test scripts it (the runner is another part; what the job must do with each kind of answer is the
 * subject here, and a scripted answer makes every kind reachable). Runs are real: sent by the SDK, stored
 * by ingest, read back through the agent-runs store.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { ApiError } from '../../../http/errors.js';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../../testing/app.js';
import { hrMicros, readable, sendAgentRun } from '../../../testing/otel-agent-run.js';
import type { RunPosition } from '../../agent-runs/store.js';
import type { EvaluateAnswer, EvaluateInput, EvaluationRunner, SamplingRuleRecord, SamplingRules } from '../ports.js';

export const SETTLE_SECONDS = 60;

export interface SamplingEnv {
  t: TestApp;
  base: string;
  rules: MemoryRules;
  runner: RecordingRunner;
  /** Fresh rules and a fresh runner (scripted, or scoring everything), wired into the app's sampling job. */
  wire(script?: Script): void;
  /** One tick of the app's sampling job at `at` (default: every run sent so far has settled). */
  tick(at?: Date): ReturnType<TestApp['ctx']['evaluationSampling']['tick']>;
}

/** One app per test file, listening on a port; the job's ports are the service's own again after each test. */
export function useSamplingApp(): SamplingEnv {
  const env = {} as SamplingEnv;
  beforeAll(async () => {
    env.t = await testApp({ clock: fixedClock(new Date().toISOString()), env: { SVC_EVAL_SAMPLING_SETTLE_SECONDS: String(SETTLE_SECONDS) } });
    env.base = await env.t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => env.t?.close());
  // After each test the job reads the service's own ports again (its rules: none exist in this app).
  afterEach(() => {
    env.t.ctx.samplingPorts = { rules: env.t.ctx.samplingRules, runner: env.t.ctx.evaluationRunner };
  });
  env.wire = (script) => {
    env.rules = new MemoryRules();
    env.runner = new RecordingRunner(script);
    env.t.ctx.samplingPorts = { rules: env.rules, runner: env.runner };
  };
  env.tick = (at = settled()) => env.t.ctx.evaluationSampling.tick(at);
  return env;
}

/** The rules as the port answers them: enabled, a rate above 0 and a per-tick limit above 0. */
export class MemoryRules implements SamplingRules {
  readonly rules = new Map<string, SamplingRuleRecord>();
  async active() {
    return [...this.rules.values()].filter((r) => r.enabled && r.samplingRate > 0 && r.perTickLimit > 0);
  }
  put(r: Partial<SamplingRuleRecord> & Pick<SamplingRuleRecord, 'ruleId' | 'orgId' | 'projectId'>): SamplingRuleRecord {
    const now = new Date().toISOString();
    const rule: SamplingRuleRecord = {
      evaluator: { evaluator_id: 'ev-1', version: 1 },
      subjectKind: 'SUBJECT_KIND_AGENT_RUN',
      samplingRate: 1,
      perTickLimit: 100,
      enabled: true,
      createdAt: now,
      updatedAt: now,
      ...this.rules.get(r.ruleId),
      ...r,
    };
    this.rules.set(r.ruleId, rule);
    return rule;
  }
}

export type Script = (input: EvaluateInput, call: number) => EvaluateAnswer | Error | Promise<EvaluateAnswer | Error>;
export const scored: EvaluateAnswer = { outcome: 'scored', alreadyEvaluated: false, resultId: 'res' };

/** Records every call and answers as scripted (scored by default). */
export class RecordingRunner implements EvaluationRunner {
  readonly calls: EvaluateInput[] = [];
  constructor(public script: Script = () => scored) {}
  async evaluate(input: EvaluateInput): Promise<EvaluateAnswer> {
    this.calls.push(input);
    const a = await this.script(input, this.calls.length);
    if (a instanceof Error) throw a;
    return a;
  }
  /** The run ids evaluated, in call order. */
  runs(): string[] {
    return this.calls.map((c) => c.subjectRef);
  }
}

export const budgetSpent = () => new ApiError(429, 'budget_exhausted', 'spent', { limit: 'daily_limit_nano_usd' });

/** `n` runs sent one after the other by the SDK with the key, oldest first (start, then trace id). */
export async function sendRuns(base: string, key: string, n: number): Promise<RunPosition[]> {
  const runs: RunPosition[] = [];
  for (let i = 0; i < n; i++) {
    const spans = await sendAgentRun({ base, format: 'json', key, agentId: `sampled-${i}` });
    runs.push({ traceId: spans.root.spanContext().traceId, startUs: hrMicros(readable(spans.root).startTime) });
    await new Promise((r) => setTimeout(r, 2));
  }
  return runs.sort((a, b) => a.startUs - b.startUs || (a.traceId < b.traceId ? -1 : 1));
}

/** A fresh project with a key that may send telemetry. */
export const freshProject = (t: TestApp) => projectWithKey(t, ['ingest:write', 'agents:read']);

/** A tick time at which every run sent so far has settled. */
export const settled = () => new Date(Date.now() + (SETTLE_SECONDS + 1) * 1000);
export const ids = (rs: RunPosition[]) => rs.map((r) => r.traceId);
