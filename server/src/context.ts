/** Everything a request may need, built once per process (or once per test file). */
import type { Config } from './config.js';
import { AgentBudgetService } from './domains/agent-connections/budgets-service.js';
import { AgentConnectionService } from './domains/agent-connections/service.js';
import { ApiKeyService } from './domains/api-keys/service.js';
import { AuditService } from './domains/audit/service.js';
import { IdempotencyService } from './domains/idempotency/service.js';
import { LlmCallsService } from './domains/llm/calls-service.js';
import { LlmPricingService } from './domains/llm/service.js';
import { MetricsService } from './domains/metrics/service.js';
import { LogsService } from './domains/logs/service.js';
import { LogTailService } from './domains/logs/tail.js';
import { TracesService } from './domains/traces/service.js';
import { CredentialRechecker } from './http/recheck.js';
import { AgentRunsService } from './domains/agent-runs/service.js';
import { AssetService } from './domains/assets/service.js';
import { SignalService } from './domains/assets/signals.js';
import { ConsentService } from './domains/oauth/consent-service.js';
import { OAuthServer } from './domains/oauth/server.js';
import { InvitationService } from './domains/people/invitations-service.js';
import { MemberService } from './domains/people/members-service.js';
import { ProjectService } from './domains/projects/service.js';
import { SessionService } from './domains/sessions/service.js';
import { randomIds, systemClock, type Clock, type IdGenerator } from './lib/clock.js';
import { KeyedHash } from './lib/keyed-hash.js';
import { jobClock } from './jobs/clock.js';
import { JobService } from './jobs/service.js';
import type { ControlStore } from './storage/control/stores.js';
import { QuarantineService } from './domains/quarantines/service.js';
import { targetResolver } from './domains/quarantines/target-resolver.js';
import { FleetService } from './domains/fleet/service.js';
import type { TelemetryEngine } from './storage/telemetry/engine.js';
import type { MetricsSink } from './domains/metrics/rows.js';
import type { SpansSink } from './domains/traces/rows.js';
import type { LogsSink } from './domains/logs/rows.js';
import { ContentPolicyService } from './domains/content-policy/service.js';
import { ContentErasureService } from './domains/content-erasure/service.js';
import { MemoryLabelService } from './domains/memory/service.js';
import { EvaluatorService } from './domains/evaluations/evaluators/service.js';
import { SamplingRuleService } from './domains/evaluations/evaluators/sampling-rules.js';
import { AuthorityEdgeService } from './domains/authority-edges/service.js';
import { ReceiptChain } from './domains/receipts/chain.js';
import type { ReceiptChainSource } from './domains/receipts/chain-source.js';
import { ReceiptService } from './domains/receipts/service.js';
// Signed artifacts: signing keys, bills of materials, deployments and their configuration (docs/signatures.md)
import { sealingKey, SigningKeyService } from './domains/signing/keys.js';
import { AbomService } from './domains/abom/service.js';
import { DeploymentService } from './domains/deployments/service.js';
import { ChainProofService } from './domains/chain-proofs/service.js';
import type { ArtifactSigner } from './domains/signing/signer.js';
// Evaluations: the budget and the sampling job (docs/evaluations-sampling.md)
import { EvaluationBudgetService } from './domains/evaluations/sampling/budget.js';
import { SAMPLING_JOB_KIND, SamplingJob } from './domains/evaluations/sampling/job.js';
import type { EvaluationRunner, SamplingRules } from './domains/evaluations/ports.js';
import { EvaluationRunnerService } from './domains/evaluations/runner.js';
import { EvaluationService } from './domains/evaluations/service.js';
import { AnnotationService } from './domains/evaluations/annotations/service.js';
// Evaluations: calibration of model judges against people's judgments (docs/evaluations-calibration.md)
import { CalibrationService } from './domains/evaluations/calibration/service.js';
import { modelJudge } from './domains/evaluations/judge/index.js';
import { AgentFactsReader } from './domains/evaluations/scoring/facts.js';
import { modellessScoring } from './domains/evaluations/scoring/index.js';
// Evaluations: release series and release gates (docs/evaluations-gates.md)
import { ReleaseSeriesService } from './domains/evaluations/releases/series.js';
import { ReleaseGateService } from './domains/evaluations/releases/gates.js';
// Evaluations: datasets (docs/evaluations-datasets.md)
import { DatasetService } from './domains/evaluations/datasets/service.js';
// Evaluations: experiments over dataset versions (docs/evaluations-experiments.md)
import { ExperimentService } from './domains/evaluations/experiments/service.js';
import { caseFacts, type DatasetCase } from './domains/evaluations/datasets/case.js';
// Telemetry retention per project and signal (docs/retention.md)
import { TelemetryRetentionService } from './domains/telemetry-retention/service.js';
import { retainedReads, type TelemetryReads } from './domains/telemetry-retention/reads.js';

export interface AppContext {
  config: Config;
  clock: Clock;
  ids: IdGenerator;
  control: ControlStore;
  /** The telemetry engine (embedded DuckDB or ClickHouse): every telemetry port of the domains. */
  telemetry: TelemetryEngine;
  /** The engine's read ports with the retention windows applied: every domain reads telemetry through these (docs/retention.md). */
  telemetryReads: TelemetryReads;
  /** Telemetry retention windows per project and signal (`/projects/{projectId}/retention`), the cut-off of every read, the sweep. */
  telemetryRetention: TelemetryRetentionService;
  /** HMAC under the server secret: API-key hashes and request fingerprints. */
  keyHash: KeyedHash;
  audit: AuditService;
  apiKeys: ApiKeyService;
  projects: ProjectService;
  metrics: MetricsService;
  /** `/services` and `/traces` reads, trace delete (issue 4). */
  traces: TracesService;
  /** `/logs` reads, aggregate, fields, patterns, context, delete (issue 4). */
  logs: LogsService;
  /** The live log tail `/stream/logs`; its `settings` hold the poll and re-check intervals. */
  logTail: LogTailService;
  /** Agent runs, graph, sessions, turns, events, identities (issue 4). */
  agentRuns: AgentRunsService;
  /** The agent inventory, attribution reads, review signals and their outbox (issue 10); `discoverAssets` and `sweepReviewWindow` are the periodic jobs. */
  assets: AssetService;
  signals: SignalService;
  members: MemberService;
  invitations: InvitationService;
  sessions: SessionService;
  /** The OAuth authorization server (oidc-provider) and its consent step. */
  oauth: OAuthServer;
  consent: ConsentService;
  agentConnections: AgentConnectionService;
  agentBudgets: AgentBudgetService;
  /** Replays of writes sent with an Idempotency-Key. */
  idempotency: IdempotencyService;
  /** The LLM model price table (`/llm/pricing`); also the `ModelPricing` port of the agent-run cost calculation. */
  llmPricing: LlmPricingService;
  /** Every model call of a project, inside agent runs or not (`/llm/calls`, `/llm/usage`), priced from `llmPricing`. */
  llmCalls: LlmCallsService;
  /** Containments of agents under the two-person rule (`/quarantines`). */
  quarantines: QuarantineService;
  /** The agents of a project with run health, signals and containment (`/fleet`). */
  fleet: FleetService;
  /** Group-commit writer of ingested metric rows (OTLP); stop() it before closing the telemetry store. */
  metricsWriter: MetricsSink;
  /** Group-commit writers of ingested spans (with agent sightings) and log records (OTLP), each on its own connection; stop() them before closing the telemetry store. */
  spansWriter: SpansSink;
  logsWriter: LogsSink;
  /**
   * Background jobs, durable in the control store: services `register` a kind's handler here and
   * `enqueue` or `schedule` work; main.ts starts the poll loop, the app's close stops it (docs/jobs.md).
   */
  jobs: JobService;
  /** Content policies and retention windows (`/content-policies`): the decisions of every content boundary (store, read, export, judge transfer) and the refusal audit. */
  contentPolicy: ContentPolicyService;
  /** Erasure of recorded content: a subject's on demand, every retention window's on the job runner (mediated receipts). */
  contentErasure: ContentErasureService;
  /** Memory item labels (revisions, POISONED_MEMORY_ITEM signals) and the propagation read (issue 11). */
  memory: MemoryLabelService;
  /** Action receipts: mediated appends (inside a decision's transaction), reported ingest, reads (docs/receipts.md). */
  receipts: ReceiptService;
  /** The projects' receipt chains as the signing part reads them (checkpoints, proofs) and the verify route. */
  receiptChain: ReceiptChainSource;
  /** Authority edges: sightings from AUTHORIZED entries, list, revoke. */
  authorityEdges: AuthorityEdgeService;
  /** The artifact signing keys (the ArtifactSigner of every signed artifact) and the published JWK Set. */
  signing: SigningKeyService;
  /** Signed bills of materials (`/abom-manifests`). */
  abom: AbomService;
  /** Deployments attested by a manifest and their configuration snapshots; the drift signals. */
  deployments: DeploymentService;
  /** Signed checkpoints and RFC 6962 tree heads of receipt chains, inclusion and consistency proofs, the entry export (`/receipt-chains/...`). */
  chainProofs: ChainProofService;
  /** Evaluators and their immutable versions (the EvaluatorVersions port of the evaluation area). */
  evaluators: EvaluatorService;
  /** Sampling rules (CRUD) and the SamplingRules port the sampling job reads. */
  samplingRules: SamplingRuleService;
  /** The organization's daily evaluation budget (`/evaluation/budget`); the runner's `EvaluationBudget` port. */
  evaluationBudget: EvaluationBudgetService;
  /** The one runner that evaluates a subject with an exact evaluator version and stores what it came to (on demand and sampled). */
  evaluationRunner: EvaluationRunnerService;
  /** On-demand evaluation and the reads of results and unscored subjects. */
  evaluations: EvaluationService;
  /** Human judgments of agent runs (`/agent-runs/{run_id}/annotations`, `/evaluation/annotations`). */
  annotations: AnnotationService;
  /** Calibration records: a model judge's agreement with people's judgments (`/evaluation/evaluators/{id}/.../calibrations`). */
  calibrations: CalibrationService;
  /** The `evaluation.sampling` job's work, one tick (registered on `jobs`). */
  evaluationSampling: SamplingJob;
  /** What the sampling job reads at each tick: the active rules and the runner (a test may put its own in). */
  samplingPorts: { rules: SamplingRules; runner: EvaluationRunner };
  // -- release series and release gates (docs/evaluations-gates.md)
  /** One exact evaluator version's mean per release (`/evaluation/release-series`). */
  releaseSeries: ReleaseSeriesService;
  /** Release gates and their decisions (`/evaluation/gates`). */
  releaseGates: ReleaseGateService;
  /** Datasets: metadata, sealed versions of reviewed cases, promotion and removal (the experiments read versions and items here). */
  datasets: DatasetService;
  /** Experiments: trials over an exact dataset version, scored through the one runner, and their comparison. */
  experiments: ExperimentService<DatasetCase>;
}

export function buildContext(opts: {
  config: Config;
  control: ControlStore;
  telemetry: TelemetryEngine;
  clock?: Clock;
  ids?: IdGenerator;
  /** Test seams: another receipt chain or artifact signer for the checkpoints and tree heads (default: the project's chain and the signing keys). */
  chainSource?: ReceiptChainSource;
  signer?: ArtifactSigner;
}): AppContext {
  const clock = opts.clock ?? systemClock;
  const ids = opts.ids ?? randomIds;
  if (!opts.config.keyHashSecret) throw new Error('no key hash secret: set SVC_KEY_HASH_SECRET or read the data dir\'s file (withKeyHashSecret)');
  const keyHash = new KeyedHash(opts.config.keyHashSecret);
  const audit = new AuditService(clock, ids);
  const projects = new ProjectService(opts.control, clock, ids);
  // Content policy: asked by ingest (store) and the reads (read); a deleted project's policy goes with it.
  const contentPolicy = new ContentPolicyService(opts.control.contentPolicies, projects, clock, opts.config.contentPolicyTtlSeconds);
  projects.onDelete(async (p) => contentPolicy.forgetProject(p.id));
  const telemetry = opts.telemetry;
  projects.onDelete((p) => telemetry.deleteProject(p.id));
  // Retention windows: every read below goes through `reads`, which leaves out what is older than a window;
  // the hourly sweep deletes it (docs/retention.md). A deleted project's windows go with it.
  const telemetryRetention = new TelemetryRetentionService(opts.control, projects, audit, clock, opts.config.retentionTtlSeconds);
  projects.onDelete(async (p) => telemetryRetention.forgetProject(p.id));
  const reads = retainedReads(telemetry, telemetryRetention);
  const members = new MemberService(opts.control, audit, clock);
  const sessions = new SessionService(opts.control, members, audit, clock, ids);
  // Removing a member ends their browser sessions in that organization at once.
  members.onRemoved(async (tx, orgId, userId, at) => ({ sessions_revoked: await sessions.revokeMember(tx, orgId, userId, at) }));
  const oauth = new OAuthServer(opts.control, opts.config, keyHash);
  const agentConnections = new AgentConnectionService(opts.control, oauth, members, audit, clock, ids);
  // ... and their agent approvals, with every token of them.
  members.onRemoved(async (tx, orgId, userId, at) => ({ agent_connections_revoked: await agentConnections.revokeForMember(tx, orgId, userId, at) }));
  // ... and the API keys they minted (directly or through a key of theirs): a key belongs to its person.
  const apiKeys = new ApiKeyService(opts.control, audit, clock, ids, keyHash);
  members.onRemoved(async (tx, orgId, userId, at) => ({ api_keys_revoked: await apiKeys.revokeForMember(tx, orgId, userId, at) }));
  // Approvals limited to a deleted project end with it (approvals for the whole organization stay).
  projects.onDelete(async (p) => void (await agentConnections.revokeForProject(p.id, p.orgId)));
  const llmPricing = new LlmPricingService(opts.control, clock);
  // A deleted project's model prices go with it.
  projects.onDelete(async (p) => llmPricing.forgetProject(p.id));
  const logsQuery = reads.logs;
  const agentRunsQuery = reads.agentRuns;
  const logTail = new LogTailService(logsQuery, new CredentialRechecker(apiKeys, sessions, members, opts.control, clock, agentConnections));
  const agentRuns = new AgentRunsService(agentRunsQuery, llmPricing, clock);
  const signals = new SignalService(opts.control, clock, ids, opts.config.assetReviewWindowDays);
  const assets = new AssetService(opts.control, projects, agentRunsQuery, clock, ids, signals);
  // An asset target resolves to the asset's observation keys (an asset of another project is no target).
  const assetKeys = {
    async keysOf(orgId: string, projectId: string, assetId: string) {
      const a = await opts.control.assets.find(assetId);
      return a && a.orgId === orgId && a.projectId === projectId ? a.observationKeys : undefined;
    },
    assetsOfKeys: (projectId: string, keys: string[]) => opts.control.assets.assetsOfKeys(projectId, keys),
  };
  // A deleted project's live tails end with it.
  projects.onDelete(async (p) => logTail.endProject(p.id));
  // Receipts: every AUTHORIZED entry exercises an authority edge; a revoked one raises a review signal.
  const authorityEdges = new AuthorityEdgeService(opts.control, signals, clock, ids);
  const receipts = new ReceiptService(opts.control, authorityEdges, clock, ids);
  const quarantines = new QuarantineService(opts.control, targetResolver({ control: opts.control, agentRuns }, assetKeys.keysOf), clock, ids, assets, signals, assetKeys, receipts);
  apiKeys.onRevoked((k) => quarantines.keyRevoked(k, () => opts.control.assets.liveProjects()));
  const jobs = new JobService(opts.control, jobClock(clock), ids, opts.config.jobs);
  registerGovernanceJobs(jobs, opts.control, assets, signals, quarantines);
  const contentErasure = new ContentErasureService(opts.control, projects, telemetry.contentEraser, contentPolicy, receipts, clock, ids);
  // Retention windows bring deletion forward: the scheduled erasure runs hourly (docs/content-policy.md).
  jobs.register('content.retention_erasure', async ({ now }) => void (await contentErasure.sweepRetention(now())), { everySeconds: 3600 });
  // Telemetry retention: what is older than a window is deleted hourly; a run cut short leaves only rows every read hides.
  jobs.register('retention.sweep', async ({ now, signal }) => void (await telemetryRetention.sweep(now(), telemetry.expiry, signal)), {
    everySeconds: 3600,
    timeoutSeconds: 3300,
  });
  // Signed artifacts: one key set for the service, its private keys sealed under the key-hash secret.
  const roleOf = (p: Parameters<MemberService['actingRole']>[0]) => members.actingRole(p);
  const receiptChain = new ReceiptChain(opts.control);
  const signing = new SigningKeyService(opts.control, clock, sealingKey(opts.config.keyHashSecret), roleOf);
  const abom = new AbomService(opts.control, signing, clock, ids, roleOf);
  const deployments = new DeploymentService(opts.control, abom, signals, clock, ids);
  // Evaluations: evaluators and rules, the budget, the one runner (model-less scorers and the model judge), the sampling job.
  const evaluators = new EvaluatorService(opts.control, clock);
  const samplingRules = new SamplingRuleService(opts.control, evaluators, clock);
  const evaluationBudget = new EvaluationBudgetService(opts.control.evaluationBudget, clock);
  const judge = modelJudge(opts.config.judge, { steps: agentRunsQuery, policy: contentPolicy, pricing: llmPricing });
  const evaluationRunner = new EvaluationRunnerService(
    opts.control,
    evaluators,
    new AgentFactsReader(agentRuns, reads.releases),
    modellessScoring,
    judge,
    evaluationBudget,
    clock,
    ids,
  );
  // Evaluations: datasets. Runs are frozen through the same facts reader the evaluators score with, their
  // stored steps, and the content policy at the export boundary; reviews are the recorded human judgments.
  const datasets = new DatasetService(
    opts.control,
    {
      reviews: { find: (projectId, annotationId) => ctx.annotations.find(projectId, annotationId) },
      facts: new AgentFactsReader(agentRuns, reads.releases),
      steps: agentRunsQuery,
      policy: contentPolicy,
    },
    clock,
  );
  const evaluationSampling = new SamplingJob(opts.control.evaluationSampling, agentRunsQuery, { rules: () => ctx.samplingPorts.rules, runner: () => ctx.samplingPorts.runner }, opts.config.evaluationSampling);
  jobs.register(SAMPLING_JOB_KIND, async ({ now, signal }) => void (await evaluationSampling.tick(now(), signal)), {
    everySeconds: opts.config.evaluationSampling.everySeconds,
  });
  // Release series and gates: they read stored results of an exact evaluator version (docs/evaluations-gates.md).
  const releaseSeries = new ReleaseSeriesService(opts.control.releaseGates, evaluators);
  const releaseGates = new ReleaseGateService(opts.control.releaseGates, evaluators, releaseSeries, clock, ids);
  // Experiments: read dataset versions and their frozen cases (caseFacts), score them through the one runner.
  const experiments = new ExperimentService<DatasetCase>(opts.control, evaluators, datasets, caseFacts, evaluationRunner, clock);
  const ctx: AppContext = {
    config: opts.config,
    clock,
    ids,
    control: opts.control,
    telemetry: opts.telemetry,
    telemetryReads: reads,
    telemetryRetention,
    keyHash,
    audit,
    apiKeys,
    projects,
    metrics: new MetricsService(reads.metrics, clock, contentPolicy),
    traces: new TracesService(reads.traces, clock, contentPolicy),
    logs: new LogsService(logsQuery, clock, contentPolicy),
    logTail,
    // Run costs read the project's price table when the run is read.
    agentRuns,
    // Discovery and attribution read the sightings the agent reads read.
    assets,
    signals,
    fleet: new FleetService(opts.control, agentRunsQuery, clock),
    // Model calls, in runs or not, priced as run steps.
    llmCalls: new LlmCallsService(reads.llmCalls, llmPricing, clock),
    metricsWriter: telemetry.metricsWriter,
    spansWriter: telemetry.spansWriter,
    logsWriter: telemetry.logsWriter,
    members,
    invitations: new InvitationService(opts.control, members, audit, clock, ids),
    sessions,
    oauth,
    consent: new ConsentService(oauth, agentConnections, projects, members),
    agentConnections,
    agentBudgets: new AgentBudgetService(opts.control, agentConnections, members, audit, clock),
    idempotency: new IdempotencyService(opts.control.idempotency, clock, keyHash),
    llmPricing,
    // A containment resolves its target from the sightings, an asset through its observation keys; an
    // asset-targeted containment marks the asset while active.
    quarantines,
    jobs,
    contentPolicy,
    contentErasure,
    // Labels raise and clear their signals through the signal service; propagation reads the recorded memory steps.
    memory: new MemoryLabelService(opts.control, reads.memory, signals, clock, ids),
    receipts,
    receiptChain,
    authorityEdges,
    signing,
    abom,
    deployments,
    chainProofs: new ChainProofService(opts.control, opts.chainSource ?? receiptChain, opts.signer ?? signing, clock, ids),
    evaluators,
    samplingRules,
    evaluationBudget,
    evaluationRunner,
    evaluations: new EvaluationService(opts.control, evaluationRunner, contentPolicy, clock),
    annotations: new AnnotationService(opts.control.annotations, agentRuns, clock, ids),
    // Calibration reads every person's judgments through the annotation service (created above, read when asked).
    calibrations: new CalibrationService(opts.control, { forRuns: (...a) => ctx.annotations.forRuns(...a) }, clock, ids),
    evaluationSampling,
    samplingPorts: { rules: samplingRules, runner: evaluationRunner },
    releaseSeries,
    releaseGates,
    datasets,
    experiments,
  };
  return ctx;
}

/**
 * The recurring governance jobs (docs/jobs.md, docs/governance.md): discovery of assets from every
 * sighted key (ingest discovers right away; this catches what a restart or a failure missed), the
 * review-window sweep, and the check that clears killed-credential signals of revoked keys. Each is
 * idempotent, as the runner's at-least-once delivery needs.
 */
function registerGovernanceJobs(jobs: JobService, control: ControlStore, assets: AssetService, signals: SignalService, quarantines: QuarantineService): void {
  jobs.register('assets.discover', async () => void (await assets.discoverAssets()), { everySeconds: 300 });
  jobs.register('signals.review_window', async ({ now }) => void (await signals.sweepReviewWindow(now())), { everySeconds: 3600 });
  jobs.register(
    'signals.killed_credentials',
    async () => {
      for (const p of await control.assets.liveProjects()) await quarantines.clearKilledCredentials(p.orgId, p.id);
    },
    { everySeconds: 60 },
  );
}
