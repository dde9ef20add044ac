/** Human judgments in the control store (one code path for SQLite and PostgreSQL; docs/evaluations-human.md). */
import type { AnnotationFilter, AnnotationRecord, AnnotationStore } from '../../domains/evaluations/annotations/store.js';
import type { ControlDb } from './open.js';
import type { EvaluationAnnotationsTable } from './schema.js';
import { isUniqueViolation } from './unique.js';

const toRecord = (r: EvaluationAnnotationsTable): AnnotationRecord => ({
  id: r.id,
  orgId: r.org_id,
  projectId: r.project_id,
  runId: r.run_id,
  metricName: r.metric_name,
  numericValue: r.numeric_value === null ? null : Number(r.numeric_value),
  label: r.label,
  comment: r.comment,
  authorId: r.author_id,
  createdAt: r.created_at,
});

export class KyselyAnnotationStore implements AnnotationStore {
  constructor(private readonly db: ControlDb) {}

  async replace(r: AnnotationRecord): Promise<{ replacedId: string | null }> {
    const attempt = () =>
      this.db.transaction().execute(async (tx) => {
        const old = await tx
          .deleteFrom('evaluation_annotations')
          .where('project_id', '=', r.projectId)
          .where('run_id', '=', r.runId)
          .where('metric_name', '=', r.metricName)
          .where('author_id', '=', r.authorId)
          .returning('id')
          .executeTakeFirst();
        await tx
          .insertInto('evaluation_annotations')
          .values({
            id: r.id,
            org_id: r.orgId,
            project_id: r.projectId,
            run_id: r.runId,
            metric_name: r.metricName,
            numeric_value: r.numericValue,
            label: r.label,
            comment: r.comment,
            author_id: r.authorId,
            created_at: r.createdAt,
          })
          .execute();
        return { replacedId: old?.id ?? null };
      });
    // Judgments of one person raced (PostgreSQL): another committed first; this one replaces it on retry.
    for (let tries = 1; ; tries++) {
      try {
        return await attempt();
      } catch (e) {
        if (!isUniqueViolation(e) || tries >= 20) throw e;
      }
    }
  }

  async get(projectId: string, id: string): Promise<AnnotationRecord | undefined> {
    const r = await this.db.selectFrom('evaluation_annotations').selectAll().where('project_id', '=', projectId).where('id', '=', id).executeTakeFirst();
    return r && toRecord(r);
  }

  async list(f: AnnotationFilter, o: { after?: { createdAt: string; id: string }; limit: number }): Promise<AnnotationRecord[]> {
    let q = this.db.selectFrom('evaluation_annotations').selectAll().where('project_id', '=', f.projectId);
    if (f.runIds !== undefined) q = q.where('run_id', 'in', f.runIds.length ? f.runIds : ['']);
    if (f.metricName !== undefined) q = q.where('metric_name', '=', f.metricName);
    if (f.authorId !== undefined) q = q.where('author_id', '=', f.authorId);
    const after = o.after;
    if (after) q = q.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]));
    const rows = await q.orderBy('created_at').orderBy('id').limit(o.limit).execute();
    return rows.map(toRecord);
  }
}
