/**
 * Which project an evaluation request acts on (docs/evaluations.md "Projects"): every route takes
 * `?project_id=`; a project-scoped key may omit it and is pinned to its project, and naming another
 * project answers 404, the same answer as a missing evaluator (an organization credential naming a
 * project it cannot see gets 404 too). The budget is organization-wide and reads no project.
 */
import type { FastifyRequest } from 'fastify';
import { invalidRequest, notFound } from '../../http/errors.js';
import { resolveProject } from '../../http/project-scope.js';
import type { ProjectService } from '../projects/service.js';
import type { ProjectRecord } from '../projects/store.js';
import { ACTOR_FIELDS } from '../assets/routes.js';

export function evaluationProject(projects: ProjectService): (req: FastifyRequest) => Promise<ProjectRecord> {
  return async (req) => {
    const raw = (req.query as { project_id?: unknown } | undefined)?.project_id;
    if (Array.isArray(raw)) throw invalidRequest('project_id is given more than once; name one project');
    const named = typeof raw === 'string' && raw !== '' ? raw : undefined;
    if (req.principal.projectId !== null && named !== undefined && named !== req.principal.projectId) throw notFound('project');
    return resolveProject(req.principal, projects, named);
  };
}

/** Refuses actor fields in a body (who acts comes from the credential), naming the field; runs before validation. */
export async function refuseActors(req: FastifyRequest): Promise<void> {
  const b = req.body;
  if (b && typeof b === 'object' && !Array.isArray(b)) {
    const named = [...ACTOR_FIELDS, 'author', 'author_id', 'evaluated_by'].find((f) => Object.hasOwn(b, f));
    if (named) throw invalidRequest(`${named} is taken from the credential and cannot be sent`);
  }
}
