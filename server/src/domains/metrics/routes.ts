/** Metrics reads and delete (spec 1, "Metrics endpoints"); `POST /metrics/forecast` lives elsewhere. */
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { AppContext } from '../../context.js';
import { resolveProject } from '../../http/project-scope.js';
import { errors, ProjectQuery } from '../../http/schemas.js';
import {
  AggregateMetricBody,
  AggregateMetricResponse,
  DeleteMetricResponse,
  HistogramMetricBody,
  HistogramMetricResponse,
  ListMetricLabelsQuery,
  ListMetricLabelsResponse,
  ListMetricNamesQuery,
  ListMetricNamesResponse,
  MetricNameParams,
} from './schemas.js';

const tags = ['metrics'];
// POST aggregate and histogram only read: the audit trail records their refusals, not each query.
const read = { scope: 'metrics:read', audit: 'read' as const, sharedRead: true };

export function metricsRoutes(base: FastifyInstance, ctx: AppContext) {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const svc = ctx.metrics;

  app.get(
    '/metrics/names',
    { config: read, schema: { operationId: 'listMetricNames', summary: 'list the metric names of the project', tags, querystring: ListMetricNamesQuery, response: { 200: ListMetricNamesResponse, ...errors(400, 401, 403, 404) } } },
    async (req) => {
      const project = await resolveProject(req.principal, ctx.projects, req.query.project_id);
      return svc.names(project.id, req.query);
    },
  );

  // The metric name is one path segment, URL-encoded: `a%2Fb` is the metric "a/b" (the router decodes it).
  app.get(
    '/metrics/:metric_name/labels',
    {
      config: read,
      schema: { operationId: 'listMetricLabels', summary: 'list the label keys and values of a metric', tags, params: MetricNameParams, querystring: ListMetricLabelsQuery, response: { 200: ListMetricLabelsResponse, ...errors(400, 401, 403, 404) } },
    },
    async (req) => {
      const project = await resolveProject(req.principal, ctx.projects, req.query.project_id);
      return svc.labels(req.principal, project.id, req.params.metric_name, req.query);
    },
  );

  app.post(
    '/metrics/aggregate',
    {
      config: read,
      schema: { operationId: 'aggregateMetrics', summary: 'aggregate metric points per group and time bucket', tags, querystring: ProjectQuery, body: AggregateMetricBody, response: { 200: AggregateMetricResponse, ...errors(400, 401, 403, 404, 429) } },
    },
    async (req) => {
      const project = await resolveProject(req.principal, ctx.projects, req.query.project_id);
      return svc.aggregate(req.principal, project.id, req.body);
    },
  );

  app.post(
    '/metrics/histogram',
    {
      config: read,
      schema: { operationId: 'getMetricHistogram', summary: 'the histogram of a histogram metric', tags, querystring: ProjectQuery, body: HistogramMetricBody, response: { 200: HistogramMetricResponse, ...errors(400, 401, 403, 404) } },
    },
    async (req) => {
      const project = await resolveProject(req.principal, ctx.projects, req.query.project_id);
      return svc.histogram(project.id, req.body);
    },
  );

  app.delete(
    '/metrics/:metric_name',
    {
      config: { scope: 'metrics:delete' },
      schema: { operationId: 'deleteMetric', summary: 'delete the points of a metric', tags, params: MetricNameParams, querystring: ProjectQuery, response: { 200: DeleteMetricResponse, ...errors(400, 401, 403, 404) } },
    },
    async (req) => {
      const project = await resolveProject(req.principal, ctx.projects, req.query.project_id);
      return svc.delete(project.id, req.params.metric_name);
    },
  );
}
