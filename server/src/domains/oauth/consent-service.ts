/**
 * The consent step of the authorization server, driven through our REST API by a signed-in
 * person (a browser UI, or a test): describe a pending authorization, approve it, deny it; and
 * approve or deny a pending device code by the code the person reads off the device.
 *
 * Approving creates a new oidc-provider Grant for (person, client) holding the requested scopes
 * narrowed to what the person's role holds (and, optionally, to a subset the person picks), then
 * records one agent approval for that grant. Library APIs used: Provider#interactionDetails and
 * #interactionResult (they read and check the library's signed interaction cookie), Client.find,
 * Grant (addOIDCScope, save), DeviceCode.findByUserCode and DeviceCode#save with accountId,
 * grantId, scope and authTime set, as the library's own device confirmation does.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type Provider from 'oidc-provider';
import { ApiError, conflict, invalidRequest, notFound, permissionDenied } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { AgentConnectionService } from '../agent-connections/service.js';
import { clientLabels, requireBrowserSession } from '../agent-connections/service.js';
import { isScope } from '../api-keys/scopes.js';
import type { MemberService } from '../people/members-service.js';
import { ROLE_SCOPES } from '../people/roles.js';
import type { ProjectService } from '../projects/service.js';
import { PROJECT_PARAM } from './provider.js';
import type { OAuthServer } from './server.js';

/** Protocol scopes that ride along with what was granted when the client asked for them. */
const PROTOCOL_SCOPES = ['openid', 'offline_access'];

export interface ApproveInput {
  /** A subset of the requested scopes; omitted: all requested scopes the role holds. */
  scopes?: string[];
  /** Limits the approval to one project when the request did not name one already. */
  project_id?: string;
}

interface Pending {
  clientId: string;
  requested: string[];
  projectId: string | null;
  via: 'authorization_code' | 'device_code';
}

type Raw = { req: IncomingMessage; res: ServerResponse };

/** Same normalization as the library's own code-entry page: upper case, no separators. */
const normalizeUserCode = (s: string) => s.replace(/[a-z]/g, (c) => c.toUpperCase()).replace(/\W/g, '');

function splitScope(v: unknown): string[] {
  return typeof v === 'string' ? [...new Set(v.split(' ').filter(Boolean))] : [];
}

export class ConsentService {
  constructor(
    private readonly oauth: OAuthServer,
    private readonly connections: AgentConnectionService,
    private readonly projects: ProjectService,
    private readonly members: MemberService,
  ) {}

  /** The pending authorization of this browser (its interaction cookie must name `uid`). */
  private async interaction(provider: Provider, uid: string, raw: Raw) {
    let i;
    try {
      i = await provider.interactionDetails(raw.req, raw.res);
    } catch {
      throw notFound('pending authorization');
    }
    if (i.uid !== uid) throw notFound('pending authorization');
    return i;
  }

  private pendingOf(params: Record<string, unknown>, via: Pending['via']): Pending {
    const projectId = typeof params[PROJECT_PARAM] === 'string' && params[PROJECT_PARAM] !== '' ? (params[PROJECT_PARAM] as string) : null;
    return { clientId: String(params.client_id), requested: splitScope(params.scope), projectId, via };
  }

  /** What the person would grant: requested scopes of ours that their role holds, optionally narrowed further. */
  private async decide(caller: Principal, p: Pending, input: ApproveInput) {
    requireBrowserSession(caller);
    const role = await this.members.actingRole(caller);
    const held = new Set(ROLE_SCOPES[role]);
    const ours = p.requested.filter(isScope);
    if (ours.length === 0) throw invalidRequest('the client asked for none of this service\'s scopes');
    if (input.scopes !== undefined) {
      const extra = input.scopes.filter((s) => !(ours as string[]).includes(s));
      if (extra.length) throw invalidRequest(`scopes must be a subset of the requested ones; not requested: ${extra.join(', ')}`);
    }
    const granted = (input.scopes ?? ours).filter((s) => held.has(s));
    if (granted.length === 0) throw permissionDenied('your role holds none of the requested scopes');
    if (p.projectId !== null && input.project_id !== undefined && input.project_id !== p.projectId)
      throw invalidRequest('the request is limited to another project');
    const projectId = p.projectId ?? input.project_id ?? null;
    if (projectId !== null) await this.projects.get(caller, projectId); // 404 for an unknown or other organization's project
    return { granted, projectId };
  }

  private async grantFor(provider: Provider, caller: Principal, p: Pending, input: ApproveInput) {
    const client = await provider.Client.find(p.clientId);
    if (!client) throw notFound('client');
    const { granted, projectId } = await this.decide(caller, p, input);
    const grant = new provider.Grant({ accountId: caller.userId!, clientId: client.clientId });
    const kept = [...granted, ...PROTOCOL_SCOPES.filter((s) => p.requested.includes(s))];
    grant.addOIDCScope(kept.join(' '));
    // Scopes asked for but not granted are recorded as rejected, so the library does not ask for consent again.
    const rejected = p.requested.filter((s) => !kept.includes(s));
    if (rejected.length) grant.rejectOIDCScope(rejected.join(' '));
    const grantId = await grant.save();
    const approval = await this.connections.create({ caller, grantId, clientId: client.clientId, labels: clientLabels(client), projectId, scopes: granted, via: p.via });
    return { grantId, approval };
  }

  async describe(caller: Principal, uid: string, raw: Raw) {
    requireBrowserSession(caller);
    const provider = await this.oauth.provider();
    const i = await this.interaction(provider, uid, raw);
    const p = this.pendingOf(i.params, i.deviceCode ? 'device_code' : 'authorization_code');
    const client = await provider.Client.find(p.clientId);
    if (!client) throw notFound('client');
    const labels = clientLabels(client);
    const role = await this.members.actingRole(caller);
    const held = new Set(ROLE_SCOPES[role]);
    const ours = p.requested.filter(isScope);
    return {
      uid: i.uid,
      client: { client_id: client.clientId, client_name: labels.clientName, client_host: labels.clientHost, verified: false },
      requested_scopes: p.requested,
      grantable_scopes: ours.filter((s) => held.has(s)),
      project_id: p.projectId,
      person: { user_id: caller.userId!, workspace_id: caller.orgId, role },
      expires_at: new Date(i.exp * 1000).toISOString(),
    };
  }

  async approve(caller: Principal, uid: string, input: ApproveInput, raw: Raw) {
    requireBrowserSession(caller);
    const provider = await this.oauth.provider();
    const i = await this.interaction(provider, uid, raw);
    const p = this.pendingOf(i.params, i.deviceCode ? 'device_code' : 'authorization_code');
    const { grantId, approval } = await this.grantFor(provider, caller, p, input);
    const redirectTo = await provider.interactionResult(raw.req, raw.res, { login: { accountId: caller.userId! }, consent: { grantId } }, { mergeWithLastSubmission: false });
    return { redirect_to: redirectTo, connection_id: approval.id, scopes: approval.scopes };
  }

  async deny(caller: Principal, uid: string, raw: Raw) {
    requireBrowserSession(caller);
    const provider = await this.oauth.provider();
    await this.interaction(provider, uid, raw);
    const redirectTo = await provider.interactionResult(
      raw.req,
      raw.res,
      { error: 'access_denied', error_description: 'the person denied the request' },
      { mergeWithLastSubmission: false },
    );
    return { redirect_to: redirectTo };
  }

  /** A pending device code, or the refusal a person gets for it. */
  private async deviceCode(provider: Provider, userCode: string) {
    const code = await provider.DeviceCode.findByUserCode(normalizeUserCode(userCode), { ignoreExpiration: true });
    if (!code) throw notFound('device code');
    if (code.isExpired) throw new ApiError(410, 'expired', 'the device code has expired; start again on the device');
    if (code.error || code.accountId || code.inFlight) throw conflict('the device code was already used');
    return code;
  }

  async describeDevice(caller: Principal, userCode: string) {
    requireBrowserSession(caller);
    const provider = await this.oauth.provider();
    const code = await this.deviceCode(provider, userCode);
    const p = this.pendingOf(code.params ?? {}, 'device_code');
    const client = await provider.Client.find(p.clientId);
    if (!client) throw notFound('client');
    const labels = clientLabels(client);
    const role = await this.members.actingRole(caller);
    const held = new Set(ROLE_SCOPES[role]);
    return {
      client: { client_id: client.clientId, client_name: labels.clientName, client_host: labels.clientHost, verified: false },
      requested_scopes: p.requested,
      grantable_scopes: p.requested.filter(isScope).filter((s) => held.has(s)),
      project_id: p.projectId,
      person: { user_id: caller.userId!, workspace_id: caller.orgId, role },
      expires_at: new Date(code.exp! * 1000).toISOString(),
    };
  }

  async approveDevice(caller: Principal, userCode: string, input: ApproveInput) {
    requireBrowserSession(caller);
    const provider = await this.oauth.provider();
    const code = await this.deviceCode(provider, userCode);
    const p = this.pendingOf(code.params ?? {}, 'device_code');
    const { grantId, approval } = await this.grantFor(provider, caller, p, input);
    const tokenScope = [...approval.scopes, ...PROTOCOL_SCOPES.filter((s) => p.requested.includes(s))].join(' ');
    Object.assign(code, { accountId: caller.userId!, grantId, scope: tokenScope, authTime: Math.floor(Date.now() / 1000) });
    await code.save();
    return { connection_id: approval.id, scopes: approval.scopes };
  }

  async denyDevice(caller: Principal, userCode: string) {
    requireBrowserSession(caller);
    const provider = await this.oauth.provider();
    const code = await this.deviceCode(provider, userCode);
    Object.assign(code, { error: 'access_denied', errorDescription: 'the person denied the request' });
    await code.save();
  }
}
