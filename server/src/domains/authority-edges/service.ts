/**
 * Authority edges (docs/receipts.md, "Authority edges"). An AUTHORIZED receipt entry that names a tool
 * and a purpose (or an edge, by id) exercises the edge of (principal, tool, purpose): the first sighting
 * records it, every later one counts. Revocation is a record, not a delete: a revoked edge stays listed
 * with `include_revoked=true`; exercising it again does not restore it and blocks nothing, but raises
 * REVIEW_SIGNAL_KIND_REVOKED_AUTHORITY_EXERCISED (one signal per edge, refreshed on repeat).
 */
import { invalidRequest, notFound } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore, ControlStores } from '../../storage/control/stores.js';
import { principalRef, type SignalService } from '../assets/signals.js';
import type { AuthorityEdgeRecord, EdgeFilter } from './store.js';

export const MAX_REVOKE_REASON = 1024;
export const EDGE_PAGE = { default: 100, max: 200 };
const KIND = 'REVIEW_SIGNAL_KIND_REVOKED_AUTHORITY_EXERCISED' as const;

export interface Exercise {
  orgId: string;
  projectId: string;
  /** An explicit edge (already checked to be of the project); otherwise matched by principal, tool and purpose. */
  edgeId: string | null;
  principal: string;
  tool: string | null;
  purpose: string | null;
  actionId: string;
  sourceKind: string;
  sourceId: string;
  at: string;
}

export class AuthorityEdgeService {
  constructor(
    private readonly control: ControlStore,
    private readonly signals: Pick<SignalService, 'raise'>,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** An edge of the project, read in the transaction (undefined when the project has no such edge). */
  async ofProject(tx: ControlStores, projectId: string, id: string): Promise<AuthorityEdgeRecord | undefined> {
    const e = await tx.authorityEdges.find(id);
    return e && e.projectId === projectId ? e : undefined;
  }

  /**
   * Records one sighting of the edge an authorization exercised (in the caller's transaction). Without an
   * explicit edge and without both tool and purpose there is no edge to speak of: nothing is recorded.
   */
  async exercise(tx: ControlStores, x: Exercise): Promise<AuthorityEdgeRecord | undefined> {
    let edge = x.edgeId !== null ? await tx.authorityEdges.find(x.edgeId) : undefined;
    if (!edge) {
      if (x.tool === null || x.purpose === null) return undefined;
      edge = await tx.authorityEdges.findMatch(x.projectId, x.principal, x.tool, x.purpose);
    }
    if (!edge) {
      const created: AuthorityEdgeRecord = {
        id: this.ids.uuid(),
        orgId: x.orgId,
        projectId: x.projectId,
        principal: x.principal,
        tool: x.tool!,
        purpose: x.purpose!,
        sourceKind: x.sourceKind,
        sourceId: x.sourceId,
        createdAt: x.at,
        sightingCount: 1,
        lastExercisedAt: x.at,
        revokedAt: null,
        revokedBy: null,
        revokeReason: null,
      };
      await tx.authorityEdges.insert(created);
      return created;
    }
    await tx.authorityEdges.exercise(edge.id, x.at);
    if (edge.revokedAt !== null)
      await this.signals.raise(tx, {
        orgId: edge.orgId,
        projectId: edge.projectId,
        kind: KIND,
        dedupKey: `${KIND}:${edge.id}`,
        subjectRef: edge.id,
        detailCode: 'revoked_edge_exercised',
        assetId: null,
        evidenceRef: x.actionId,
        seenAt: x.at,
      });
    return edge;
  }

  list(f: EdgeFilter, opts: { after?: { createdAt: string; id: string }; limit: number }) {
    return this.control.authorityEdges.list(f, opts);
  }

  /**
   * An edge the credential may see; another organization's or project's answers like a missing one, and
   * so does an edge of a deleted project.
   */
  async get(caller: Principal, id: string, projectId?: string): Promise<AuthorityEdgeRecord> {
    const e = await this.control.authorityEdges.find(id);
    const visible =
      e && e.orgId === caller.orgId && (caller.projectId === null || caller.projectId === e.projectId) && (projectId === undefined || projectId === e.projectId);
    if (!visible || !(await this.control.projects.find(e.orgId, e.projectId))) throw notFound('authority edge');
    return e;
  }

  /**
   * Records the revocation (who from the credential, when from the clock). Repeating answers the first
   * revocation with `already_revoked: true`, its reason and instant unchanged.
   */
  async revoke(caller: Principal, id: string, reason: string, projectId?: string): Promise<{ edge: AuthorityEdgeRecord; alreadyRevoked: boolean }> {
    if (reason.trim() === '') throw invalidRequest('reason is required');
    const e = await this.get(caller, id, projectId);
    if (e.revokedAt !== null) return { edge: e, alreadyRevoked: true };
    const won = await this.control.authorityEdges.revoke(e.id, principalRef(caller), this.clock.now().toISOString(), reason);
    return { edge: await this.get(caller, id, projectId), alreadyRevoked: !won };
  }
}
