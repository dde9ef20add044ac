/**
 * The request-level audit trail: every write, and every refusal for missing permission or budget, by an
 * authenticated caller is recorded after the answer, with the spec's Audit record fields. Routes whose
 * domain writes a richer record in the same transaction as the change say `audit: 'domain'` (only
 * their refusals are recorded here); telemetry ingestion says `audit: 'none'`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AuditService } from '../domains/audit/service.js';
import type { AuditResult } from '../domains/audit/store.js';
import type { ControlStore } from '../storage/control/stores.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** 'read' marks a POST that only reads (aggregate, forecast): like GET, only its refusals are recorded. */
    audit?: 'domain' | 'none' | 'read';
  }
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);
const VERBS: Record<string, string> = { POST: 'create', PUT: 'update', PATCH: 'update', DELETE: 'delete', GET: 'read', HEAD: 'read' };

/** `/api/v1/account/api-keys/:id/revoke` -> resource `account.api-keys`, action `revoke`; the verb comes from the method otherwise. */
export function describeRoute(method: string, url: string): { resource: string; action: string } {
  const parts = url.replace(/^\/api\/v1\//, '').replace(/^\//, '').split('/');
  const statics = parts.filter((p) => p !== '' && !p.startsWith(':'));
  const last = parts[parts.length - 1];
  // A static segment after a parameter is an action on that object (revoke, approve, accept).
  const verbSegment = parts.length >= 2 && parts[parts.length - 2].startsWith(':') && !last.startsWith(':');
  const action = verbSegment ? last : (VERBS[method] ?? method.toLowerCase());
  const resource = (verbSegment ? statics.slice(0, -1) : statics).join('.') || 'root';
  return { resource, action };
}

function resultOf(method: string, status: number, mode: 'domain' | 'none' | 'read' | undefined): AuditResult | undefined {
  if (mode === 'none') return undefined;
  if (status === 403) return 'denied';
  if (status === 429) return 'throttled';
  if (SAFE.has(method) || mode === 'domain' || mode === 'read') return undefined;
  if (status >= 200 && status < 300) return 'success';
  if (status >= 500) return 'error';
  return undefined; // a refused write (400, 404, 409) changed nothing
}

function affectedObject(req: FastifyRequest): string | null {
  const params = (req.params ?? {}) as Record<string, string>;
  const first = Object.values(params)[0];
  return typeof first === 'string' ? first : null;
}

export function registerRequestAudit(app: FastifyInstance, audit: AuditService, control: ControlStore) {
  app.addHook('onResponse', async (req, reply) => {
    const principal = req.principal;
    if (req.is404 || !principal || req.idempotentReplay) return;
    const result = resultOf(req.method, reply.statusCode, req.routeOptions.config.audit);
    if (!result) return;
    const { resource, action } = describeRoute(req.method, req.routeOptions.url ?? req.url);
    const query = (req.query ?? {}) as Record<string, unknown>;
    try {
      await audit.record(control, principal, principal.orgId, {
        projectId: principal.projectId ?? (typeof query.project_id === 'string' ? query.project_id : null),
        resource,
        action,
        result,
        targetId: affectedObject(req),
        metadata: { method: req.method, route: req.routeOptions.url, status: reply.statusCode },
      });
    } catch (err) {
      // The answer is already sent; a lost audit line must be visible to operators.
      req.log.error({ err }, 'audit record could not be written');
    }
  });
}
