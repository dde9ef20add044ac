/**
 * Agent approvals (spec 1, "Connected-agent approvals and budgets"; the Agent approval fields).
 *
 * An approval is made each time a signed-in person consents to an OAuth client (authorization
 * code or device flow): it names the workspace (the organization the person was signed in to),
 * the person, the client's self-declared labels, the granted permissions and, optionally, the one
 * project it is limited to. It owns exactly one oidc-provider grant; every token of the agent
 * belongs to that grant. Revoking deletes the grant with all its tokens and codes, so access and
 * refresh tokens stop at once; a revoked approval is never restored (reconnecting makes a new one).
 */
import { notFound, permissionDenied } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore, ControlStores } from '../../storage/control/stores.js';
import type { AuditService } from '../audit/service.js';
import type { OAuthServer } from '../oauth/server.js';
import type { MemberService } from '../people/members-service.js';
import { ROLE_SCOPES } from '../people/roles.js';
import type { AgentApprovalRecord } from './store.js';

/** last_used_at is written at most this often per approval, so reads do not become writes. */
const LAST_USED_GRANULARITY_MS = 60_000;

export function connectionView(a: AgentApprovalRecord) {
  return {
    id: a.id,
    client_id: a.clientId,
    client_name: a.clientName,
    client_host: a.clientHost,
    workspace_id: a.orgId,
    project_id: a.projectId,
    user_id: a.userId,
    scopes: a.scopes,
    status: a.status,
    created_at: a.createdAt,
    last_used_at: a.lastUsedAt,
    revoked_at: a.revokedAt,
  };
}

/** What a client says about itself at registration (RFC 7591). None of it is verified. */
export interface ClientLabels {
  clientName: string;
  clientHost: string | null;
}

function hostOf(uri: unknown): string | null {
  if (typeof uri !== 'string') return null;
  try {
    return new URL(uri).hostname || null;
  } catch {
    return null;
  }
}

/**
 * Client label: `client_name`, else `software_id`, else the client id. Host label: the host of
 * `client_uri`, else of the first redirect URI, else none (a device-flow client has neither).
 */
export function clientLabels(client: { clientId: string; metadata(): Record<string, unknown> }): ClientLabels {
  const m = client.metadata();
  const name = [m.client_name, m.software_id].find((v): v is string => typeof v === 'string' && v.trim() !== '');
  const redirect = Array.isArray(m.redirect_uris) ? m.redirect_uris[0] : undefined;
  return { clientName: name?.trim() ?? client.clientId, clientHost: hostOf(m.client_uri) ?? hostOf(redirect) };
}

/** The agent-connection endpoints serve a signed-in person at a browser only (see docs/reference.md). */
export function requireBrowserSession(caller: Principal): void {
  if (caller.kind !== 'session')
    throw permissionDenied('agent connections are managed by a signed-in person in a browser session; API keys and agent (OAuth) credentials are refused');
}

export class AgentConnectionService {
  constructor(
    private readonly store: ControlStore,
    private readonly oauth: OAuthServer,
    private readonly members: MemberService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {
    // An agent that revokes its own refresh token at /oauth/token/revocation ends its approval too.
    oauth.onGrantRevoked(async (grantId) => {
      const a = await this.store.agentApprovals.findByGrantId(grantId);
      if (!a) return;
      await this.store.agentApprovals.markRevoked(a.id, this.clock.now().toISOString());
      await this.store.changes.publish({ topic: 'agent_connection.revoked', connectionId: a.id });
    });
  }

  /**
   * Resolves `Authorization: Bearer <access token>` on every request: the token must be live in
   * the store, its approval active, and the person still a member of the approval's workspace.
   * The scopes are the approval's, narrowed to what the person's role holds right now.
   */
  async authenticate(token: string): Promise<Principal | undefined> {
    const at = await this.oauth.accessToken(token);
    if (!at) return undefined;
    const a = await this.store.agentApprovals.findByGrantId(at.grantId);
    if (!a || a.status !== 'active' || a.userId !== at.userId) return undefined;
    const role = await this.members.roleOf(this.store, a.orgId, a.userId);
    if (!role) return undefined;
    const held = new Set(ROLE_SCOPES[role]);
    const granted = new Set(a.scopes);
    const now = this.clock.now();
    if (!a.lastUsedAt || now.getTime() - Date.parse(a.lastUsedAt) >= LAST_USED_GRANULARITY_MS)
      await this.store.agentApprovals.touch(a.id, now.toISOString());
    return {
      kind: 'oauth',
      keyId: null,
      signInId: null,
      connectionId: a.id,
      orgId: a.orgId,
      projectId: a.projectId,
      scopes: new Set(at.scopes.filter((s) => granted.has(s) && held.has(s))),
      userId: a.userId,
      role,
    };
  }

  /**
   * Why an agent's token stopped resolving, for the re-check of a running stream: its approval is
   * still active and the person still a member, so the short-lived token merely expired (or was
   * replaced by a refresh), or the approval ended.
   */
  async connectionStillActive(orgId: string, connectionId: string): Promise<boolean> {
    const a = await this.store.agentApprovals.findById(orgId, connectionId);
    if (!a || a.status !== 'active') return false;
    return (await this.members.roleOf(this.store, a.orgId, a.userId)) !== undefined;
  }

  /** Records a new approval for a grant the consent step just made. */
  async create(input: {
    caller: Principal;
    grantId: string;
    clientId: string;
    labels: ClientLabels;
    projectId: string | null;
    scopes: string[];
    via: 'authorization_code' | 'device_code';
  }): Promise<AgentApprovalRecord> {
    const { caller } = input;
    const rec: AgentApprovalRecord = {
      id: this.ids.uuid(),
      orgId: caller.orgId,
      userId: caller.userId!,
      projectId: input.projectId,
      clientId: input.clientId,
      clientName: input.labels.clientName,
      clientHost: input.labels.clientHost,
      scopes: input.scopes,
      status: 'active',
      grantId: input.grantId,
      createdAt: this.clock.now().toISOString(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.store.transaction(async (tx) => {
      await tx.agentApprovals.insert(rec);
      await this.audit.record(tx, caller, caller.orgId, {
        projectId: rec.projectId,
        eventType: null,
        resource: 'agent_connection',
        action: 'create',
        result: 'success',
        toolName: null,
        targetId: rec.id,
        targetApiKeyId: null,
        metadata: { scopes: rec.scopes, client_id: rec.clientId, via: input.via },
      });
    });
    return rec;
  }

  async list(caller: Principal, q: { limit: number; offset: number; orgWide: boolean }) {
    requireBrowserSession(caller);
    if (q.orgWide && !caller.scopes.has('members:write')) throw permissionDenied('org_wide=true needs scope members:write');
    return this.store.agentApprovals.list({ orgId: caller.orgId, userId: q.orgWide ? undefined : caller.userId!, limit: q.limit, offset: q.offset });
  }

  /** Another person's approval is missing (404) unless the caller asks org-wide with members:write. */
  async revoke(caller: Principal, id: string, orgWide: boolean): Promise<AgentApprovalRecord> {
    requireBrowserSession(caller);
    if (orgWide && !caller.scopes.has('members:write')) throw permissionDenied('org_wide=true needs scope members:write');
    const a = await this.store.agentApprovals.findById(caller.orgId, id);
    if (!a || (!orgWide && a.userId !== caller.userId)) throw notFound('agent connection');
    if (a.status === 'revoked') return a;
    const at = this.clock.now().toISOString();
    await this.store.transaction(async (tx) => {
      await this.end(tx, a, at);
      await this.audit.record(tx, caller, caller.orgId, {
        projectId: a.projectId,
        eventType: null,
        resource: 'agent_connection',
        action: 'revoke',
        result: 'success',
        toolName: null,
        targetId: a.id,
        targetApiKeyId: null,
        metadata: { scopes: a.scopes, user_id: a.userId, via: 'api' },
      });
    });
    return { ...a, status: 'revoked', revokedAt: at };
  }

  /** The approval as its own reader may see it (budgets): same organization, and same project for a project-bound caller. */
  async visible(caller: Principal, id: string): Promise<AgentApprovalRecord> {
    const a = await this.store.agentApprovals.findById(caller.orgId, id);
    if (!a || (caller.projectId !== null && a.projectId !== caller.projectId)) throw notFound('agent connection');
    return a;
  }

  /** Deleting a project revokes the approvals limited to it (see docs/reference.md: approvals and projects). */
  async revokeForProject(projectId: string, orgId: string): Promise<number> {
    const at = this.clock.now().toISOString();
    return this.store.transaction(async (tx) => {
      const revoked = await tx.agentApprovals.revokeByProject(projectId, at);
      for (const a of revoked) {
        await this.oauth.destroyGrant(tx, a.grantId);
        await tx.changes.publish({ topic: 'agent_connection.revoked', connectionId: a.id });
      }
      if (revoked.length > 0)
        await this.audit.record(tx, 'system', orgId, {
          projectId,
          eventType: null,
          resource: 'agent_connection',
          action: 'revoke',
          result: 'success',
          toolName: null,
          targetId: null,
          targetApiKeyId: null,
          metadata: { connection_ids: revoked.map((a) => a.id), reason: 'project_deleted', via: 'project_delete' },
        });
      return revoked.length;
    });
  }

  /** A removed member's approvals in that organization end with the membership (in its transaction). */
  async revokeForMember(tx: ControlStores, orgId: string, userId: string, at: string): Promise<number> {
    const revoked = await tx.agentApprovals.revokeForMember(orgId, userId, at);
    for (const a of revoked) {
      await this.oauth.destroyGrant(tx, a.grantId);
      await tx.changes.publish({ topic: 'agent_connection.revoked', connectionId: a.id });
    }
    return revoked.length;
  }

  private async end(tx: ControlStores, a: AgentApprovalRecord, at: string): Promise<void> {
    await tx.agentApprovals.markRevoked(a.id, at);
    await this.oauth.destroyGrant(tx, a.grantId);
    await tx.changes.publish({ topic: 'agent_connection.revoked', connectionId: a.id });
  }
}

