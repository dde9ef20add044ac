/**
 * The facts of a subject (docs/evaluations-scoring.md "Facts"), read through the agent reads
 * (domains/agent-runs/service.ts) so that every rule they apply (run status, counts, run and session
 * cost with their reasons, safety steps, session turn count and times, run id normalization, the 404s)
 * is the one the evaluators score. Nothing is derived again here: the views are only re-shaped.
 *
 * - A run's step sequence is every step but the root, oldest first (start time, then span id).
 * - A step subject is any step the run graph lists (the root too); a span id is 16 hexadecimal
 *   characters (upper case read as lower case), anything else is 400.
 * - The release of a run is its root span's `gen_ai.agent.version` attribute, else the root's `service.version`
 *   resource attribute; of a session, the
 *   release of its newest run (the release that served its latest activity).
 * - A run is read through the run graph, so a run of more than 10,000 steps is refused as the graph
 *   refuses it (429 `result_too_large`), never scored on part of its steps.
 */
import { invalidRequest, notFound } from '../../../http/errors.js';
import { parseTimeBound } from '../../../http/time.js';
import type { AgentRunsService } from '../../agent-runs/service.js';
import type { RunFacts, SessionFacts, StepFact, StepSubjectFacts } from '../model.js';
import type { SubjectFactsReader } from '../ports.js';

/** The release a run's root span declares (telemetry adapter: storage/telemetry/duckdb/release-query.ts). */
export interface RunReleaseReader {
  /** The root span's `gen_ai.agent.version`, else its `service.version` resource attribute; null when neither is set. */
  rootRelease(projectId: string, runId: string, rootSpanId: string): Promise<string | null>;
}

type Graph = Awaited<ReturnType<AgentRunsService['graph']>>;
type StepView = Graph['steps'][number];

const SPAN_ID = /^[0-9a-fA-F]{16}$/;

/** Microseconds of a time the agent reads answered (their own RFC 3339 with microseconds). */
const micros = (iso: string) => parseTimeBound('started_at', iso, 0).us;

function stepFact(s: StepView): StepFact {
  return {
    spanId: s.step_id,
    parentSpanId: s.parent_step_id ?? null,
    canonicalOperation: s.canonical_operation,
    outcome: s.outcome ?? null,
    toolName: s.tool_name ?? null,
    startUs: micros(s.started_at),
    safetyCheck: s.safety_check === true,
  };
}

const oldestFirst = (a: StepFact, b: StepFact) => a.startUs - b.startUs || (a.spanId < b.spanId ? -1 : a.spanId > b.spanId ? 1 : 0);

export class AgentFactsReader implements SubjectFactsReader {
  constructor(
    private readonly runs: AgentRunsService,
    private readonly releases: RunReleaseReader,
  ) {}

  private async runFacts(projectId: string, g: Graph): Promise<RunFacts> {
    const r = g.run;
    const cost = 'cost_nanos' in r && typeof r.cost_nanos === 'number' ? r.cost_nanos : null;
    const reason = (r as { cost_unavailable_reason?: string }).cost_unavailable_reason;
    const steps = g.steps
      .filter((s) => s.step_id !== r.root_step_id)
      .map(stepFact)
      .sort(oldestFirst);
    return {
      kind: 'run',
      runId: r.run_id,
      status: r.status ?? null,
      startUs: micros(r.started_at),
      durationMs: Number.isFinite(r.duration_ms) && r.duration_ms >= 0 ? r.duration_ms : null,
      stepCount: r.step_count,
      errorSteps: r.error_steps,
      toolCalls: r.tool_calls,
      modelCalls: r.model_calls,
      costNanos: cost,
      ...(cost === null && reason !== undefined ? { costUnavailableReason: reason } : {}),
      safetyErrorSteps: r.safety_error_steps ?? null,
      steps,
      sessionKey: r.session_key ?? null,
      release: await this.releases.rootRelease(projectId, r.run_id, r.root_step_id),
    };
  }

  async run(projectId: string, runId: string): Promise<RunFacts> {
    return this.runFacts(projectId, await this.runs.graph(projectId, runId));
  }

  async step(projectId: string, runId: string, spanId: string): Promise<StepSubjectFacts> {
    if (!SPAN_ID.test(spanId)) throw invalidRequest('a step is named by its span id: 16 hexadecimal characters');
    const g = await this.runs.graph(projectId, runId);
    const id = spanId.toLowerCase();
    const view = g.steps.find((s) => s.step_id === id);
    if (!view) throw notFound('agent step');
    return { kind: 'step', run: await this.runFacts(projectId, g), step: stepFact(view) };
  }

  async session(projectId: string, sessionKey: string): Promise<SessionFacts> {
    const s = await this.runs.getSession(projectId, sessionKey);
    const cost = 'cost_nanos' in s && typeof s.cost_nanos === 'number' ? s.cost_nanos : null;
    const reason = (s as { cost_unavailable_reason?: string }).cost_unavailable_reason;
    // The newest run of the session (runs are listed newest first) names the session's release.
    const { runs } = await this.runs.listRuns(projectId, { session_key: sessionKey, limit: 1 });
    const newest = runs[0];
    return {
      kind: 'session',
      sessionKey: s.session_key,
      runCount: s.run_count,
      turnCount: s.turn_count ?? null,
      startUs: micros(s.started_at),
      durationMs: s.duration_ms,
      costNanos: cost,
      ...(cost === null && reason !== undefined ? { costUnavailableReason: reason } : {}),
      release: newest ? await this.releases.rootRelease(projectId, newest.run_id, newest.root_step_id) : null,
    };
  }
}
