/**
 * Content policies for tests. A project without a policy stores and serves no recorded content
 * (docs/content-policy.md): tests that send or read content give their project an allowing policy.
 */
import { BOUNDARIES, CONTENT_CLASSES, type Boundary, type ContentClass, type Decision } from '../domains/content-policy/model.js';
import type { TestApp } from './app.js';

/** Every rule of a grid where each cell is `decision` (or `cell(class, boundary)`). */
export function gridRules(cell: Decision | ((c: ContentClass, b: Boundary) => Decision)) {
  return CONTENT_CLASSES.flatMap((c) => BOUNDARIES.map((b) => ({ content_class: c, sink: b, decision: typeof cell === 'string' ? cell : cell(c, b) })));
}

/** Replaces the project's policy (with the owner key unless `key` is given); throws unless 200. */
export async function setContentPolicy(t: TestApp, projectId: string, rules: ReturnType<typeof gridRules>, key?: string) {
  const r = await t.call({ method: 'PUT', url: `/api/v1/projects/${projectId}/content-policy`, payload: { rules }, ...(key ? { key } : {}) });
  if (r.statusCode !== 200) throw new Error(`content policy write failed: ${r.statusCode} ${r.body}`);
  return r.json();
}

/** Every class allowed at every boundary: content is stored and served as before policies existed. */
export const allowAllContent = (t: TestApp, projectId: string) => setContentPolicy(t, projectId, gridRules('allow'));
