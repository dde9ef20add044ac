import type { FastifyInstance } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';

export function healthRoutes(app: FastifyInstance, ctx: AppContext) {
  app.get(
    '/healthz',
    { config: { auth: 'none' }, schema: { operationId: 'getHealth', tags: ['health'], summary: 'process is up', response: { 200: Type.Object({ status: Type.Literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  );
  app.get(
    '/readyz',
    {
      config: { auth: 'none' },
      schema: {
        operationId: 'getReadiness',
        tags: ['health'],
        summary: 'stores are reachable',
        response: {
          200: Type.Object({ status: Type.Literal('ready'), control: Type.String(), telemetry: Type.String() }),
          503: Type.Object({ error: Type.String(), message: Type.String() }),
        },
      },
    },
    async (_req, reply) => {
      const check = async (f: () => Promise<void>) => f().then(() => 'ok', () => 'unreachable');
      const [control, telemetry] = await Promise.all([check(() => ctx.control.ping()), check(() => ctx.telemetry.ping())]);
      if (control !== 'ok' || telemetry !== 'ok') {
        reply.header('retry-after', '1');
        return reply.code(503).send({ error: 'unavailable', message: `control store ${control}, telemetry store ${telemetry}` });
      }
      return { status: 'ready' as const, control: ctx.control.dialect, telemetry: 'duckdb' };
    },
  );
}
