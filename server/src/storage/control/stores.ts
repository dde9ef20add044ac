/** The control store's adapters, bound either to the database or to one transaction. */
import type { AgentApprovalStore, AgentBudgetStore } from '../../domains/agent-connections/store.js';
import type { ApiKeyStore } from '../../domains/api-keys/store.js';
import type { IdempotencyStore } from '../../domains/idempotency/store.js';
import type { LlmPriceStore } from '../../domains/llm/store.js';
import type { AssetStore, OutboxStore, SignalStore } from '../../domains/assets/store.js';
import { KyselyAssetStore } from './assets-store.js';
import { KyselyOutboxStore, KyselySignalStore } from './signals-store.js';
import type { JobStore } from '../../jobs/store.js';
import type { AuditStore } from '../../domains/audit/store.js';
import type { OrganizationStore } from '../../domains/organizations/store.js';
import type { InvitationStore, MembershipStore, UserStore } from '../../domains/people/store.js';
import type { ProjectStore } from '../../domains/projects/store.js';
import type { QuarantineStore } from '../../domains/quarantines/store.js';
import type { OAuthPayloadStore } from '../../domains/oauth/store.js';
import type { SessionStore } from '../../domains/sessions/store.js';
import { KyselyAgentApprovalStore } from './agent-approvals-store.js';
import { KyselyAgentBudgetStore } from './agent-budgets-store.js';
import { KyselyApiKeyStore } from './api-keys-store.js';
import { KyselyIdempotencyStore } from './idempotency-store.js';
import { KyselyJobStore } from './jobs-store.js';
import { KyselyLlmPriceStore } from './llm-prices-store.js';
import { KyselyAuditStore } from './audit-store.js';
import { KyselyOAuthPayloadStore } from './oauth-payloads-store.js';
import { KyselyInvitationStore } from './invitations-store.js';
import { KyselyMembershipStore } from './memberships-store.js';
import { KyselyOrganizationStore } from './organizations-store.js';
import type { ControlDb } from './open.js';
import { KyselyProjectStore } from './projects-store.js';
import { KyselyQuarantineStore } from './quarantines-store.js';
import { KyselySessionStore } from './sessions-store.js';
import { KyselyUserStore } from './users-store.js';
import type { ContentPolicyStore } from '../../domains/content-policy/store.js';
import { KyselyContentPolicyStore } from './content-policies-store.js';
import type { MemoryLabelStore } from '../../domains/memory/store.js';
import type { EvaluationResultStore } from '../../domains/evaluations/results/store.js';
import { KyselyEvaluationResultStore } from './evaluation-results-store.js';
import type { AnnotationStore } from '../../domains/evaluations/annotations/store.js';
import { KyselyAnnotationStore } from './annotations-store.js';
import { KyselyMemoryLabelStore } from './memory-labels-store.js';
import type { ReceiptStore } from '../../domains/receipts/store.js';
import type { AuthorityEdgeStore } from '../../domains/authority-edges/store.js';
import { KyselyReceiptStore } from './receipts-store.js';
import { KyselyAuthorityEdgeStore } from './authority-edges-store.js';
// 0013_signing: signing keys, bills of materials, deployments and configuration snapshots
import type { SigningKeyStore } from '../../domains/signing/store.js';
import type { ManifestStore } from '../../domains/abom/store.js';
import type { DeploymentStore } from '../../domains/deployments/store.js';
import { KyselySigningKeyStore } from './signing-keys-store.js';
import { KyselyManifestStore } from './abom-store.js';
import { KyselyDeploymentStore } from './deployments-store.js';
import type { ChainArtifactStore } from '../../domains/chain-proofs/store.js';
import { KyselyChainArtifactStore } from './chain-artifacts-store.js';
import type { ErasureStore } from '../../domains/content-erasure/store.js';
import { KyselyErasureStore } from './content-erasures-store.js';
// 0016_evaluators
import type { EvaluatorStore, SamplingRuleStore } from '../../domains/evaluations/evaluators/store.js';
import { KyselyEvaluatorStore, KyselySamplingRuleStore } from './evaluators-store.js';
// 0017_evaluation_budget: the evaluation budget and the sampling job's state
import type { EvaluationBudgetStore, SamplingStore } from '../../domains/evaluations/sampling/store.js';
import { KyselyEvaluationBudgetStore } from './evaluation-budget-store.js';
import { KyselySamplingStore } from './evaluation-sampling-store.js';
// 0020_release_gates: release series aggregates, release gates and their decisions
import type { ReleaseGateStore } from '../../domains/evaluations/releases/store.js';
import { KyselyReleaseGateStore } from './release-gates-store.js';
// 0021_calibrations: calibration records
import type { CalibrationStore } from '../../domains/evaluations/calibration/store.js';
import { KyselyCalibrationStore } from './calibrations-store.js';
// 0022_datasets
import type { DatasetStore } from '../../domains/evaluations/datasets/store.js';
import { KyselyDatasetStore } from './datasets-store.js';
// 0023_experiments: experiments over dataset versions and their trials
import type { ExperimentStore } from '../../domains/evaluations/experiments/store.js';
import { KyselyExperimentStore } from './experiments-store.js';
// 0024_telemetry_retention: retention windows per project and signal
import type { TelemetryRetentionStore } from '../../domains/telemetry-retention/store.js';
import { KyselyTelemetryRetentionStore } from './telemetry-retention-store.js';
// Cross-node change notices (server/src/cluster/, docs/several-nodes.md)
import type { Change, ChangeNotices } from '../../cluster/changes.js';
import { KyselyChangeNotices } from './change-notices.js';

export interface ControlStores {
  apiKeys: ApiKeyStore;
  projects: ProjectStore;
  audit: AuditStore;
  organizations: OrganizationStore;
  users: UserStore;
  memberships: MembershipStore;
  invitations: InvitationStore;
  sessions: SessionStore;
  oauthPayloads: OAuthPayloadStore;
  agentApprovals: AgentApprovalStore;
  agentBudgets: AgentBudgetStore;
  idempotency: IdempotencyStore;
  llmPrices: LlmPriceStore;
  quarantines: QuarantineStore;
  assets: AssetStore;
  reviewSignals: SignalStore;
  outbox: OutboxStore;
  /** The background job queue (server/src/jobs/). */
  jobs: JobStore;
  /** Content policies, retention windows and the refusal audit (domains/content-policy). */
  contentPolicies: ContentPolicyStore;
  /** Memory item labels and their revisions (docs/memory.md). */
  memoryLabels: MemoryLabelStore;
  /** Action receipts, their chain, and authority edges (domains/receipts, domains/authority-edges). */
  receipts: ReceiptStore;
  authorityEdges: AuthorityEdgeStore;
  // 0013_signing
  signingKeys: SigningKeyStore;
  manifests: ManifestStore;
  deployments: DeploymentStore;
  /** Signed receipt-chain checkpoints and tree heads, and the chain's Merkle leaf hashes. */
  chainArtifacts: ChainArtifactStore;
  /** Erasures of recorded content (domains/content-erasure). */
  erasures: ErasureStore;
  /** Evaluators and their immutable versions; sampling rules (domains/evaluations/evaluators). */
  evaluators: EvaluatorStore;
  samplingRules: SamplingRuleStore;
  /** Evaluation results, claims of evaluations under way, unscored subjects (domains/evaluations/results). */
  evaluationResults: EvaluationResultStore;
  /** Human judgments of agent runs (domains/evaluations/annotations; 0019). */
  annotations: AnnotationStore;
  // 0017_evaluation_budget
  /** The organization's evaluation budget and daily spend (docs/evaluations-sampling.md). */
  evaluationBudget: EvaluationBudgetStore;
  /** The sampling job's per-rule cursors and retries. */
  evaluationSampling: SamplingStore;
  // 0020_release_gates
  /** Release series aggregates of stored results, release gates and their decisions (docs/evaluations-gates.md). */
  releaseGates: ReleaseGateStore;
  // 0021_calibrations
  /** Calibration records of model judges against people's judgments (docs/evaluations-calibration.md). */
  calibrations: CalibrationStore;
  // 0022_datasets
  /** Datasets, their sealed versions, items and frozen cases (domains/evaluations/datasets). */
  datasets: DatasetStore;
  // 0023_experiments
  /** Experiments over dataset versions and their trials (domains/evaluations/experiments). */
  experiments: ExperimentStore;
  // 0024_telemetry_retention
  /** Telemetry retention windows per project and signal (domains/telemetry-retention, docs/retention.md). */
  telemetryRetention: TelemetryRetentionStore;
  /** Announces committed changes to every node (NOTIFY on PostgreSQL) and this process's subscribers (server/src/cluster/). */
  changes: ChangeNotices;
}

export interface ControlStore extends ControlStores {
  dialect: 'sqlite' | 'postgres';
  /** Runs `fn` with stores bound to one transaction; all or nothing. */
  transaction<T>(fn: (tx: ControlStores) => Promise<T>): Promise<T>;
  /** Calls `listener` with each change this process announced through `changes`, once it committed (server/src/cluster/). */
  onCommittedChange(listener: (change: Change) => void): () => void;
  ping(): Promise<void>;
  close(): Promise<void>;
}

function bind(db: ControlDb, dialect: 'sqlite' | 'postgres', committed: (change: Change) => void): ControlStores {
  return {
    apiKeys: new KyselyApiKeyStore(db),
    projects: new KyselyProjectStore(db),
    audit: new KyselyAuditStore(db),
    organizations: new KyselyOrganizationStore(db),
    users: new KyselyUserStore(db),
    memberships: new KyselyMembershipStore(db, dialect),
    invitations: new KyselyInvitationStore(db),
    sessions: new KyselySessionStore(db),
    oauthPayloads: new KyselyOAuthPayloadStore(db),
    agentApprovals: new KyselyAgentApprovalStore(db),
    agentBudgets: new KyselyAgentBudgetStore(db),
    idempotency: new KyselyIdempotencyStore(db),
    llmPrices: new KyselyLlmPriceStore(db),
    quarantines: new KyselyQuarantineStore(db),
    assets: new KyselyAssetStore(db),
    reviewSignals: new KyselySignalStore(db),
    outbox: new KyselyOutboxStore(db),
    jobs: new KyselyJobStore(db, dialect),
    contentPolicies: new KyselyContentPolicyStore(db, dialect),
    memoryLabels: new KyselyMemoryLabelStore(db),
    receipts: new KyselyReceiptStore(db, dialect),
    authorityEdges: new KyselyAuthorityEdgeStore(db),
    // 0013_signing
    signingKeys: new KyselySigningKeyStore(db),
    manifests: new KyselyManifestStore(db),
    deployments: new KyselyDeploymentStore(db),
    chainArtifacts: new KyselyChainArtifactStore(db),
    erasures: new KyselyErasureStore(db),
    evaluators: new KyselyEvaluatorStore(db),
    samplingRules: new KyselySamplingRuleStore(db),
    evaluationResults: new KyselyEvaluationResultStore(db),
    annotations: new KyselyAnnotationStore(db),
    // 0017_evaluation_budget
    evaluationBudget: new KyselyEvaluationBudgetStore(db),
    evaluationSampling: new KyselySamplingStore(db),
    // 0020_release_gates
    releaseGates: new KyselyReleaseGateStore(db, dialect),
    // 0021_calibrations
    calibrations: new KyselyCalibrationStore(db),
    // 0022_datasets
    datasets: new KyselyDatasetStore(db),
    // 0023_experiments
    experiments: new KyselyExperimentStore(db),
    // 0024_telemetry_retention
    telemetryRetention: new KyselyTelemetryRetentionStore(db, dialect),
    changes: new KyselyChangeNotices(db, dialect, committed),
  };
}

export function controlStore(db: ControlDb, dialect: 'sqlite' | 'postgres'): ControlStore {
  // Changes announced outside a transaction reach this process's listeners at once; inside one, after it commits.
  const listeners = new Set<(change: Change) => void>();
  const emit = (change: Change) => {
    for (const l of listeners) {
      try {
        l(change);
      } catch {
        /* a listener's failure is its own: the write it announces has committed */
      }
    }
  };
  return {
    ...bind(db, dialect, emit),
    dialect,
    transaction: async (fn) => {
      const announced: Change[] = [];
      const result = await db.transaction().execute((tx) => fn(bind(tx, dialect, (c) => void announced.push(c))));
      for (const c of announced) emit(c);
      return result;
    },
    onCommittedChange(listener) {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
    ping: async () => {
      await db.selectFrom('svc_meta').select('key').limit(1).execute();
    },
    close: () => db.destroy(),
  };
}
