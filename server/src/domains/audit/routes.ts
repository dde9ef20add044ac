import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { decodeCursor, NextCursorField, page, PageQuery, readLimit } from '../../http/pagination.js';
import { listParam } from '../../http/query.js';
import { invalidRequest } from '../../http/errors.js';
import { errors } from '../../http/schemas.js';
import { auditView } from './service.js';
import { AUDIT_EVENT_TYPES, AUDIT_RESULTS } from './store.js';

const Filter = (description: string) => Type.Optional(Type.Array(Type.String(), { description }));

const ListAuditQuery = Type.Object(
  {
    ...PageQuery,
    target_api_key_id: Type.Optional(Type.String({ description: 'the key that was changed (not the key that made the change)' })),
    event_type: Filter(`repeatable or comma-separated: ${AUDIT_EVENT_TYPES.join(', ')}`),
    resource: Filter('repeatable or comma-separated'),
    action: Filter('repeatable or comma-separated'),
    result: Filter(`repeatable or comma-separated: ${AUDIT_RESULTS.join(', ')}`),
  },
  { additionalProperties: false },
);

const AuditEntry = Type.Object({
  id: Type.String(),
  occurred_at: Type.String({ format: 'date-time' }),
  result: Type.String(),
  resource: Type.String(),
  action: Type.String(),
  tool_name: Type.Union([Type.String(), Type.Null()]),
  affected_object: Type.Union([Type.String(), Type.Null()]),
  event_type: Type.Union([Type.String(), Type.Null()]),
  target_api_key_id: Type.Union([Type.String(), Type.Null()]),
  project_id: Type.Union([Type.String(), Type.Null()]),
  actor: Type.Object({
    kind: Type.Union([Type.Literal('api_key'), Type.Literal('session'), Type.Literal('oauth'), Type.Literal('system')]),
    id: Type.Union([Type.String(), Type.Null()], { description: 'the key (api_key), the sign-in (session) or the agent connection (oauth) that acted' }),
    api_key_id: Type.Union([Type.String(), Type.Null()]),
    sign_in_id: Type.Union([Type.String(), Type.Null()]),
    connection_id: Type.Union([Type.String(), Type.Null()], { description: 'the agent approval whose OAuth token acted' }),
    user_id: Type.Union([Type.String(), Type.Null()], { description: 'the person behind the actor, when there is one' }),
  }),
  metadata: Type.Record(Type.String(), Type.Unknown()),
}, { $id: 'AuditEvent' });

function closed(name: string, values: string[] | undefined, allowed: readonly string[]) {
  const bad = values?.find((v) => !allowed.includes(v));
  if (bad !== undefined) throw invalidRequest(`unknown ${name} "${bad}"; one of: ${allowed.join(', ')}`);
  return values;
}

export function auditRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/account/audit-events',
    {
      config: { scope: 'audit:read' },
      schema: {
        operationId: 'listAuditEvents', summary: 'list the audit trail of the organization, newest first',
        tags: ['audit'],
        querystring: ListAuditQuery,
        response: { 200: Type.Object({ audit_events: Type.Array(AuditEntry), next_cursor: NextCursorField }), ...errors(400, 401, 403) },
      },
    },
    async (req) => {
      const q = req.query;
      const limit = readLimit(q.limit, { default: 100, max: 200 });
      const after = decodeCursor(q.cursor);
      if (after && typeof after.k !== 'number') throw invalidRequest('cursor is malformed or expired');
      const rows = await ctx.audit.list(ctx.control, req.principal, {
        targetApiKeyId: q.target_api_key_id,
        eventTypes: closed('event_type', listParam(q.event_type), AUDIT_EVENT_TYPES),
        results: closed('result', listParam(q.result), AUDIT_RESULTS),
        resources: listParam(q.resource),
        actions: listParam(q.action),
        beforeSeq: after?.k as number | undefined,
        limit,
      });
      const { items, next_cursor } = page(rows, limit, (r) => ({ k: r.seq, id: r.id }));
      return { audit_events: items.map(auditView), next_cursor };
    },
  );
}
