/** Which project a telemetry request acts on (spec 1, "Authentication" 3; metrics "Project scope"). */
import type { ProjectService } from '../domains/projects/service.js';
import type { ProjectRecord } from '../domains/projects/store.js';
import { invalidRequest, permissionDenied } from './errors.js';
import type { Principal } from './principal.js';

/**
 * A project-scoped key may omit the selector and is confined to its project; an organization-level
 * credential must name one. A missing, deleted or foreign project is 404, the same answer.
 */
export async function resolveProject(principal: Principal, projects: ProjectService, selector: string | undefined): Promise<ProjectRecord> {
  const named = selector === '' ? undefined : selector;
  if (principal.projectId !== null) {
    if (named !== undefined && named !== principal.projectId)
      throw permissionDenied('project_id conflicts with the project this key is bound to');
    return projects.get(principal, principal.projectId);
  }
  if (named === undefined) throw invalidRequest('project_id is required for organization-level credentials');
  return projects.get(principal, named);
}

/** `resolveProject` bound to the project service, for a request that carries the selector as `project_id` in its query string. */
export function requestProject(projects: ProjectService) {
  return (req: { principal: Principal; query: { project_id?: string } }): Promise<ProjectRecord> =>
    resolveProject(req.principal, projects, req.query.project_id);
}
