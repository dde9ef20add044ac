/**
 * Review signals (`/review-signals`: list, get, acknowledge, dismiss) and the notification outbox read.
 * Scope by project like the asset routes (an `environment` parameter and actor fields are refused);
 * reads need `agents:read`, acknowledge and dismiss `agents:write`.
 */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { readLimit } from '../../http/pagination.js';
import { resolveProject } from '../../http/project-scope.js';
import { errors } from '../../http/schemas.js';
import { closedFilter, cursorNumber, fingerprint, makeCursor, pageOf, readCursor } from '../agent-runs/request-rules.js';
import { refuseEnvironmentAndActors } from './routes.js';
import { DismissBody, ListOutboxQuery, ListOutboxResponse, ListSignalsQuery, ListSignalsResponse, ReviewSignal, SIGNAL_PAGE, SignalPathParams } from './schemas.js';
import { SIGNAL_KINDS, SIGNAL_SEVERITIES, SIGNAL_STATUSES } from './store.js';
import { outboxView, signalView } from './views.js';

const tags = ['assets'];
const read = { scope: 'agents:read' };
const write = { scope: 'agents:write' };

export function signalRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.signals;
  const hooks = { preValidation: refuseEnvironmentAndActors };

  app.get(
    '/review-signals',
    {
      config: read,
      ...hooks,
      schema: {
        operationId: 'listReviewSignals',
        tags,
        summary: 'list review signals, newest first by last_seen_at',
        description:
          '`status`, `kind`, `severity`: repeated or comma-separated, OR within, AND across; an unrecognized value is 400 (every kind of the enumeration is accepted, ' +
          'also kinds not raised yet). Default 100, at most 200 a page.',
        querystring: ListSignalsQuery,
        response: { 200: ListSignalsResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const q = req.query;
      const { id: projectId } = await resolveProject(req.principal, ctx.projects, q.project_id);
      const filter = {
        projectId,
        statuses: closedFilter('status', q.status, SIGNAL_STATUSES),
        kinds: closedFilter('kind', q.kind, SIGNAL_KINDS),
        severities: closedFilter('severity', q.severity, SIGNAL_SEVERITIES),
        assetId: q.asset_id,
      };
      const limit = readLimit(q.limit, SIGNAL_PAGE);
      const fp = fingerprint(['signals', filter]);
      const pos = readCursor(q.cursor, fp);
      const rows = await svc.listSignals(filter, { limit, after: pos && { lastSeenAt: String(pos.k), id: pos.id } });
      const { items, next_cursor } = pageOf(rows, limit, (s) => makeCursor(fp, s.lastSeenAt, s.id));
      return { review_signals: items.map(signalView), next_cursor };
    },
  );

  app.get(
    '/review-signals/:signalId',
    {
      config: read,
      ...hooks,
      schema: {
        operationId: 'getReviewSignal',
        tags,
        summary: 'get one review signal',
        params: SignalPathParams,
        response: { 200: ReviewSignal, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => signalView(await svc.getSignal(req.principal, req.params.signalId)),
  );

  app.post(
    '/review-signals/:signalId/acknowledge',
    {
      config: write,
      ...hooks,
      schema: {
        operationId: 'acknowledgeReviewSignal',
        tags,
        summary: 'acknowledge an open review signal (someone is on it)',
        description: 'OPEN -> ACKNOWLEDGED; who and when come from the credential. Repeating it answers the signal unchanged. It still refreshes and still auto-clears.',
        params: SignalPathParams,
        response: { 200: ReviewSignal, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => signalView(await svc.acknowledge(req.principal, req.params.signalId)),
  );

  app.post(
    '/review-signals/:signalId/dismiss',
    {
      config: write,
      ...hooks,
      schema: {
        operationId: 'dismissReviewSignal',
        tags,
        summary: 'dismiss a review signal with a reason',
        description: 'OPEN or ACKNOWLEDGED -> DISMISSED, closed for good (a later sighting does not reopen it); notified like a resolution. Who and when come from the credential.',
        params: SignalPathParams,
        body: DismissBody,
        response: { 200: ReviewSignal, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => signalView(await svc.dismiss(req.principal, req.params.signalId, req.body.reason)),
  );

  app.get(
    '/notification-outbox',
    {
      config: read,
      ...hooks,
      schema: {
        operationId: 'listNotificationOutbox',
        tags,
        summary: 'the notifications written for review signals (opened, resolved, dismissed), oldest first',
        description: 'Written in the transaction of each change; delivery to channels is not built yet, so every entry stays readable here.',
        querystring: ListOutboxQuery,
        response: { 200: ListOutboxResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const { id: projectId } = await resolveProject(req.principal, ctx.projects, req.query.project_id);
      const limit = readLimit(req.query.limit, SIGNAL_PAGE);
      const fp = fingerprint(['outbox', projectId]);
      const pos = readCursor(req.query.cursor, fp);
      const rows = await svc.outbox(projectId, { limit, after: pos && { seq: cursorNumber(pos.k), id: pos.id } });
      const { items, next_cursor } = pageOf(rows, limit, (o) => makeCursor(fp, o.seq, o.id));
      return { notifications: items.map(outboxView), next_cursor };
    },
  );
}
