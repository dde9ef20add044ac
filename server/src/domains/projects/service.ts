/** The rules of projects (spec 1, "Project"; `POST /projects`, `PATCH /projects/{id}`). */
import { invalidRequest, notFound, permissionDenied } from '../../http/errors.js';
import type { Principal } from '../../http/principal.js';
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import type { ProjectRecord } from './store.js';

export const DEFAULT_SAMPLING_RATE = 1.0;

export function projectView(p: ProjectRecord) {
  return { id: p.id, name: p.name, sampling_rate: p.samplingRate, created_at: p.createdAt };
}

/** Called when a project is deleted, so other domains drop what they hold for it. */
export type ProjectDeletionHook = (project: ProjectRecord) => Promise<void>;

function checkRate(rate: number | undefined): void {
  if (rate !== undefined && !(rate >= 0 && rate <= 1)) throw invalidRequest('sampling_rate must be between 0 and 1');
}

function checkName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const trimmed = name.trim();
  if (trimmed === '') throw invalidRequest('name must not be empty');
  return trimmed;
}

export class ProjectService {
  private readonly deletionHooks: ProjectDeletionHook[] = [];

  constructor(
    private readonly store: ControlStore,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  onDelete(hook: ProjectDeletionHook): void {
    this.deletionHooks.push(hook);
  }

  /** The project a request acts on: a project-scoped key sees only its own; another's is missing (404). */
  async get(caller: Principal, id: string): Promise<ProjectRecord> {
    if (caller.projectId !== null && caller.projectId !== id) throw notFound('project');
    const p = await this.store.projects.find(caller.orgId, id);
    if (!p) throw notFound('project');
    return p;
  }

  async list(caller: Principal, opts: { after?: { createdAt: string; id: string }; limit: number }) {
    return this.store.projects.list(caller.orgId, { ...opts, onlyId: caller.projectId ?? undefined });
  }

  async create(caller: Principal, input: { name: string; sampling_rate?: number }, id = this.ids.uuid()): Promise<ProjectRecord> {
    if (caller.projectId !== null) throw permissionDenied('a project-scoped key cannot create projects');
    checkRate(input.sampling_rate);
    const p: ProjectRecord = {
      id,
      orgId: caller.orgId,
      name: checkName(input.name)!,
      // An omitted rate is the default; an explicit 0 is kept as 0 (ingestion disabled).
      samplingRate: input.sampling_rate ?? DEFAULT_SAMPLING_RATE,
      createdAt: this.clock.now().toISOString(),
      deletedAt: null,
    };
    await this.store.projects.insert(p);
    return p;
  }

  async update(caller: Principal, id: string, input: { name?: string; sampling_rate?: number }): Promise<ProjectRecord> {
    const p = await this.get(caller, id);
    checkRate(input.sampling_rate);
    const name = checkName(input.name);
    const patch: { name?: string; samplingRate?: number } = {};
    if (name !== undefined && name !== p.name) patch.name = name;
    if (input.sampling_rate !== undefined && input.sampling_rate !== p.samplingRate) patch.samplingRate = input.sampling_rate;
    if (Object.keys(patch).length === 0) throw invalidRequest('the request changes nothing');
    await this.store.projects.update(id, patch);
    return { ...p, ...patch };
  }

  /** Deleting makes the project's data unreachable at once: every read resolves projects through `get`. */
  async delete(caller: Principal, id: string): Promise<void> {
    if (caller.projectId !== null) throw permissionDenied('a project-scoped key cannot delete projects');
    const p = await this.get(caller, id);
    const at = this.clock.now().toISOString();
    await this.store.transaction(async (tx) => {
      await tx.projects.markDeleted(id, at);
      // Keys bound to a deleted project can reach nothing; revoke them so they stop authenticating.
      await tx.apiKeys.revokeByProject(id, at);
      // Every node ends the project's live tails and drops what it caches of it (docs/several-nodes.md).
      await tx.changes.publish({ topic: 'project.deleted', projectId: id });
    });
    for (const hook of this.deletionHooks) await hook(p);
  }
}
