import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { AppContext } from '../../context.js';
import { checkBodyProjectSelector } from '../../http/auth.js';
import { resolveProject } from '../../http/project-scope.js';
import { errors, ProjectQuery } from '../../http/schemas.js';
import { invalidRequest } from '../../http/errors.js';
import { TIME_DESCRIPTION } from '../../http/time.js';
import { BAND_SEMANTICS, MAX_HORIZON, MAX_SENSITIVITY } from './forecast-model.js';
import { DEFAULT_INTERVAL, FORECAST_INTERVALS, ForecastService } from './forecast-service.js';

const MetricName = Type.String({ minLength: 1, maxLength: 1024 });

export const ForecastBody = Type.Object(
  {
    metric_name: MetricName,
    interval: Type.Optional(Type.Union(Object.keys(FORECAST_INTERVALS).map((k) => Type.Literal(k)), { description: `default ${DEFAULT_INTERVAL}` })),
    horizon: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_HORIZON, description: 'points to forecast; default 24' })),
    sensitivity: Type.Optional(Type.Integer({ minimum: 0, maximum: MAX_SENSITIVITY, description: '0 = automatic band width, or 1 to 10' })),
    environment: Type.Optional(Type.String({ minLength: 1 })),
    project_id: Type.Optional(Type.String({ description: 'required for organization-level credentials' })),
    time_range: Type.Optional(
      Type.Object(
        { start: Type.Optional(Type.String({ description: TIME_DESCRIPTION })), end: Type.Optional(Type.String({ description: TIME_DESCRIPTION })) },
        { additionalProperties: false, description: 'default: the last seven days' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const ForecastResponse = Type.Object({
  metric_name: Type.String(),
  interval: Type.String(),
  horizon: Type.Integer(),
  history_points: Type.Integer(),
  required_history_points: Type.Integer(),
  missing_buckets: Type.Integer(),
  status: Type.Union([
    Type.Literal('FORECAST_FIT_STATUS_READY'),
    Type.Literal('FORECAST_FIT_STATUS_INSUFFICIENT_HISTORY'),
    Type.Literal('FORECAST_FIT_STATUS_IRREGULAR_HISTORY'),
    Type.Literal('FORECAST_FIT_STATUS_NONSEASONAL'),
  ]),
  status_reason: Type.String(),
  confidence: Type.Number({ minimum: 0, maximum: 1 }),
  band_semantics: Type.String({ description: `always "${BAND_SEMANTICS}": expected ± k·(spread of seasonal deviations)` }),
  forecast: Type.Array(Type.Object({ timestamp: Type.String({ format: 'date-time' }), expected: Type.Number(), lower: Type.Number(), upper: Type.Number() })),
});

export function forecastRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = new ForecastService(ctx.telemetryReads.forecastHistory, ctx.clock);
  app.post(
    '/metrics/forecast',
    {
      config: { scope: 'metrics:read', audit: 'read' },
      schema: {
        operationId: 'forecastMetric',
        tags: ['metrics'],
        summary: 'seasonal forecast with a deviation band',
        description: 'project_id goes in the body (as the contract says) or, like every other metrics route, in the query string; both must then agree',
        querystring: ProjectQuery,
        body: ForecastBody,
        response: { 200: ForecastResponse, ...errors(400, 401, 403, 404) },
      },
    },
    async (req) => {
      checkBodyProjectSelector(req.principal, req.body.project_id);
      const fromQuery = req.query.project_id || undefined;
      const fromBody = req.body.project_id || undefined;
      if (fromQuery !== undefined && fromBody !== undefined && fromQuery !== fromBody)
        throw invalidRequest('project_id in the query string and project_id in the body name different projects; give one');
      const project = await resolveProject(req.principal, ctx.projects, fromBody ?? fromQuery);
      return svc.forecast(project.id, req.body);
    },
  );
}
