/**
 * Agent budgets (spec 1, "Connected-agent approvals and budgets"). A budget bounds what one
 * connection (agent approval) may do per UTC day: `requests_per_day` counts every authenticated
 * request of its OAuth tokens, `write_actions_per_day` the writes among them (POST, PUT, PATCH,
 * DELETE). null is unlimited. Usage is counted per connection and UTC day in the control store,
 * with or without a budget, so a budget set mid-day applies to the whole day. A request over a
 * limit answers 429 `budget_exceeded` with `Retry-After` (seconds to the next UTC day), is not
 * counted, and is recorded in the audit trail with result `throttled` (by http/audit-hook.ts).
 */
import { ApiError, invalidRequest, permissionDenied } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import type { AuditService } from '../audit/service.js';
import type { MemberService } from '../people/members-service.js';
import type { AgentConnectionService } from './service.js';
import type { AgentBudgetRecord } from './store.js';

export const CREDENTIAL_KIND = 'oauth_connection' as const;
const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
const DAY_MS = 86_400_000;

export const utcDay = (d: Date) => d.toISOString().slice(0, 10);

/** Whole seconds until the next UTC midnight (at least 1). */
export function secondsToNextUtcDay(d: Date): number {
  const next = Math.floor(d.getTime() / DAY_MS + 1) * DAY_MS;
  return Math.max(1, Math.ceil((next - d.getTime()) / 1000));
}

export interface PutBudgetInput {
  credential_kind: string;
  credential_id: string;
  requests_per_day: number | null;
  write_actions_per_day: number | null;
}

export class AgentBudgetService {
  constructor(
    private readonly store: ControlStore,
    private readonly connections: AgentConnectionService,
    private readonly members: MemberService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  /** Counts one request of an OAuth principal, or refuses it with 429 when its budget is spent. */
  async admit(caller: Principal, method: string): Promise<void> {
    if (caller.kind !== 'oauth' || caller.connectionId === null) return;
    const now = this.clock.now();
    const budget = await this.store.agentBudgets.find(caller.connectionId);
    const limits = { requests: budget?.requestsPerDay ?? null, writeActions: budget?.writeActionsPerDay ?? null };
    const write = WRITE_METHODS.has(method);
    if (await this.store.agentBudgets.admit(caller.connectionId, utcDay(now), write, limits)) return;
    const used = await this.store.agentBudgets.usage(caller.connectionId, utcDay(now));
    const exceeded = limits.requests !== null && used.requests >= limits.requests ? 'requests_per_day' : 'write_actions_per_day';
    // The request-level audit hook records this 429 with result `throttled`, naming the connection as actor.
    const retryAfter = secondsToNextUtcDay(now);
    throw new ApiError(
      429,
      'budget_exceeded',
      `this agent connection has spent its ${exceeded} budget for today (UTC); retry after ${retryAfter} seconds`,
      { limit: exceeded, retry_after_seconds: retryAfter },
      { 'retry-after': String(retryAfter) },
    );
  }

  async get(caller: Principal, kind: string, id: string) {
    checkKind(kind);
    // The scope first: a credential that may read no budget at all learns nothing, not even whether the id exists.
    if (!caller.scopes.has('activity:read') && !caller.scopes.has('audit:read'))
      throw permissionDenied('reading an agent budget needs scope activity:read (your own connections) or audit:read');
    const a = await this.connections.visible(caller, id);
    const own = caller.connectionId === a.id || (caller.userId !== null && caller.userId === a.userId);
    if (own ? !caller.scopes.has('activity:read') && !caller.scopes.has('audit:read') : !caller.scopes.has('audit:read'))
      throw permissionDenied(own ? "reading your own connection's budget needs scope activity:read" : "reading another person's connection budget needs scope audit:read");
    return this.view(a.id, await this.store.agentBudgets.find(a.id));
  }

  async put(caller: Principal, input: PutBudgetInput) {
    checkKind(input.credential_kind);
    for (const s of ['api_key:write', 'members:write']) if (!caller.scopes.has(s)) throw permissionDenied(`setting an agent budget needs scope ${s}`);
    const role = await this.members.actingRole(caller);
    if (role !== 'owner' && role !== 'admin') throw permissionDenied('setting an agent budget needs the owner or admin role');
    const a = await this.connections.visible(caller, input.credential_id);
    const previous = await this.store.agentBudgets.find(a.id);
    const rec: AgentBudgetRecord = {
      connectionId: a.id,
      orgId: a.orgId,
      requestsPerDay: input.requests_per_day,
      writeActionsPerDay: input.write_actions_per_day,
      updatedAt: this.clock.now().toISOString(),
      updatedByUserId: caller.userId,
    };
    await this.store.transaction(async (tx) => {
      await tx.agentBudgets.put(rec);
      await this.audit.record(tx, caller, caller.orgId, {
        projectId: a.projectId,
        eventType: null,
        resource: 'agent_budget',
        action: 'update',
        result: 'success',
        toolName: null,
        targetId: a.id,
        targetApiKeyId: null,
        metadata: {
          requests_per_day: rec.requestsPerDay,
          write_actions_per_day: rec.writeActionsPerDay,
          previous: previous ? { requests_per_day: previous.requestsPerDay, write_actions_per_day: previous.writeActionsPerDay } : null,
          via: 'api',
        },
      });
    });
    return this.view(a.id, rec);
  }

  private async view(connectionId: string, b: AgentBudgetRecord | undefined) {
    const day = utcDay(this.clock.now());
    const used = await this.store.agentBudgets.usage(connectionId, day);
    return {
      credential_kind: CREDENTIAL_KIND,
      credential_id: connectionId,
      requests_per_day: b?.requestsPerDay ?? null,
      write_actions_per_day: b?.writeActionsPerDay ?? null,
      updated_at: b?.updatedAt ?? null,
      usage: { day, requests: used.requests, write_actions: used.writeActions },
    };
  }
}

function checkKind(kind: string): void {
  if (kind !== CREDENTIAL_KIND) throw invalidRequest(`credential_kind must be ${CREDENTIAL_KIND}`);
}
