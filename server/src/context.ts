/** Everything a request may need, built once per process (or once per test file). */
import type { Config } from './config.js';
import { AgentBudgetService } from './domains/agent-connections/budgets-service.js';
import { AgentConnectionService } from './domains/agent-connections/service.js';
import { ApiKeyService } from './domains/api-keys/service.js';
import { AuditService } from './domains/audit/service.js';
import { IdempotencyService } from './domains/idempotency/service.js';
import { MetricsService } from './domains/metrics/service.js';
import { ConsentService } from './domains/oauth/consent-service.js';
import { OAuthServer } from './domains/oauth/server.js';
import { InvitationService } from './domains/people/invitations-service.js';
import { MemberService } from './domains/people/members-service.js';
import { ProjectService } from './domains/projects/service.js';
import { SessionService } from './domains/sessions/service.js';
import { randomIds, systemClock, type Clock, type IdGenerator } from './lib/clock.js';
import type { ControlStore } from './storage/control/stores.js';
import { DuckDbMetricsQuery } from './storage/telemetry/duckdb/metrics-query.js';
import { MetricsWriter } from './storage/telemetry/duckdb/metrics-writer.js';
import type { TelemetryDb } from './storage/telemetry/duckdb/open.js';
import { deleteProjectTelemetry } from './storage/telemetry/duckdb/project-data.js';

export interface AppContext {
  config: Config;
  clock: Clock;
  ids: IdGenerator;
  control: ControlStore;
  telemetry: TelemetryDb;
  audit: AuditService;
  apiKeys: ApiKeyService;
  projects: ProjectService;
  metrics: MetricsService;
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
  /** Group-commit writer of ingested metric rows (OTLP); stop() it before closing the telemetry store. */
  metricsWriter: MetricsWriter;
}

export function buildContext(opts: {
  config: Config;
  control: ControlStore;
  telemetry: TelemetryDb;
  clock?: Clock;
  ids?: IdGenerator;
}): AppContext {
  const clock = opts.clock ?? systemClock;
  const ids = opts.ids ?? randomIds;
  const audit = new AuditService(clock, ids);
  const projects = new ProjectService(opts.control, clock, ids);
  projects.onDelete((p) => deleteProjectTelemetry(opts.telemetry, p.id));
  const metricsWriter = new MetricsWriter(opts.telemetry);
  projects.onDelete(async (p) => metricsWriter.forgetSeries(p.id));
  const members = new MemberService(opts.control, audit, clock);
  const sessions = new SessionService(opts.control, members, audit, clock, ids);
  // Removing a member ends their browser sessions in that organization at once.
  members.onRemoved(async (tx, orgId, userId, at) => ({ sessions_revoked: await sessions.revokeMember(tx, orgId, userId, at) }));
  const oauth = new OAuthServer(opts.control, opts.config);
  const agentConnections = new AgentConnectionService(opts.control, oauth, members, audit, clock, ids);
  // ... and their agent approvals, with every token of them.
  members.onRemoved(async (tx, orgId, userId, at) => ({ agent_connections_revoked: await agentConnections.revokeForMember(tx, orgId, userId, at) }));
  // ... and the API keys they minted (directly or through a key of theirs): a key belongs to its person.
  const apiKeys = new ApiKeyService(opts.control, audit, clock, ids);
  members.onRemoved(async (tx, orgId, userId, at) => ({ api_keys_revoked: await apiKeys.revokeForMember(tx, orgId, userId, at) }));
  // Approvals limited to a deleted project end with it (approvals for the whole organization stay).
  projects.onDelete(async (p) => void (await agentConnections.revokeForProject(p.id, p.orgId)));
  return {
    config: opts.config,
    clock,
    ids,
    control: opts.control,
    telemetry: opts.telemetry,
    audit,
    apiKeys,
    projects,
    metrics: new MetricsService(new DuckDbMetricsQuery(opts.telemetry), clock),
    metricsWriter,
    members,
    invitations: new InvitationService(opts.control, members, audit, clock, ids),
    sessions,
    oauth,
    consent: new ConsentService(oauth, agentConnections, projects, members),
    agentConnections,
    agentBudgets: new AgentBudgetService(opts.control, agentConnections, members, audit, clock),
    idempotency: new IdempotencyService(opts.control.idempotency, clock),
  };
}
