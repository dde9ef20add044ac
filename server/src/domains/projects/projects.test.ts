/** Projects over HTTP (spec 1, "Project"; POST /projects, PATCH /projects/{id}), on both control stores. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe.each(['sqlite', 'postgres'] as const)('projects (%s)', (dialect) => {
  let t: TestApp;
  beforeAll(async () => {
    t = await testApp({ dialect });
  });
  afterAll(async () => t.close());

  const create = (payload: unknown) => t.call({ method: 'POST', url: '/api/v1/projects', payload: payload as object });

  it('create answers 201 with {id, name, sampling_rate, created_at}; ids are UUIDs', async () => {
    const res = await create({ name: 'web' });
    expect(res.statusCode).toBe(201);
    const p = res.json();
    expect(Object.keys(p).sort()).toEqual(['created_at', 'id', 'name', 'sampling_rate']);
    expect(p.id).toMatch(UUID);
  });

  it('sampling_rate: create default 1.0', async () => {
    expect((await create({ name: 'd' })).json().sampling_rate).toBe(1);
  });

  it('sampling_rate: an omitted value is distinct from an explicit 0', async () => {
    const zero = (await create({ name: 'z', sampling_rate: 0 })).json();
    expect(zero.sampling_rate).toBe(0);
    const got = (await t.call({ method: 'GET', url: `/api/v1/projects/${zero.id}` })).json();
    expect(got.sampling_rate).toBe(0);
  });

  it('sampling_rate: out-of-range values are refused and nothing is created', async () => {
    const before = (await t.call({ method: 'GET', url: '/api/v1/projects?limit=200' })).json().projects.length;
    for (const sampling_rate of [-0.1, 1.01, '0.5', null]) {
      const res = await create({ name: 'bad', sampling_rate });
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toBe('invalid_request');
    }
    expect((await t.call({ method: 'GET', url: '/api/v1/projects?limit=200' })).json().projects.length).toBe(before);
  });

  it('PATCH changes sampling_rate, including to an explicit 0', async () => {
    const p = (await create({ name: 'patch' })).json();
    const res = await t.call({ method: 'PATCH', url: `/api/v1/projects/${p.id}`, payload: { sampling_rate: 0 } });
    expect(res.json()).toMatchObject({ sampling_rate: 0, name: 'patch' });
  });

  it('general rule 2: a PATCH whose body changes nothing is refused', async () => {
    const p = (await create({ name: 'noop', sampling_rate: 0.5 })).json();
    for (const payload of [{}, { sampling_rate: 0.5 }, { name: 'noop' }, { unknown: 1 }]) {
      const res = await t.call({ method: 'PATCH', url: `/api/v1/projects/${p.id}`, payload });
      expect(res.statusCode).toBe(400);
    }
    const empty = await t.call({ method: 'PATCH', url: `/api/v1/projects/${p.id}`, headers: { 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(400);
  });

  it('a project-scoped key sees only its own project; another project is 404 like a missing one', async () => {
    const a = await projectWithKey(t, ['projects:read', 'projects:write']);
    const b = await projectWithKey(t, ['projects:read']);
    const list = (await t.call({ method: 'GET', url: '/api/v1/projects', key: a.key })).json();
    expect(list.projects.map((p: { id: string }) => p.id)).toEqual([a.projectId]);
    const foreign = await t.call({ method: 'GET', url: `/api/v1/projects/${b.projectId}`, key: a.key });
    const missing = await t.call({ method: 'GET', url: '/api/v1/projects/00000000-0000-0000-0000-000000000000', key: a.key });
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json()).toEqual(missing.json());
    const patch = await t.call({ method: 'PATCH', url: `/api/v1/projects/${b.projectId}`, key: a.key, payload: { name: 'x' } });
    expect(patch.statusCode).toBe(404);
  });

  it("deleting a project removes its telemetry and leaves other projects' data", async () => {
    const a = await projectWithKey(t, ['projects:read']);
    const b = await projectWithKey(t, ['projects:read']);
    for (const id of [a.projectId, b.projectId])
      await t.duck.writer.run(`INSERT INTO metric_points (project_id, name, series_id, ts, value) VALUES ('${id}', 'm', 1, 1000, 1.5)`);
    await t.call({ method: 'DELETE', url: `/api/v1/projects/${a.projectId}` });
    const count = async (id: string) =>
      Number((await t.duck.writer.runAndReadAll(`SELECT count(*) FROM metric_points WHERE project_id = '${id}'`)).getRows()[0][0]);
    expect(await count(a.projectId)).toBe(0);
    expect(await count(b.projectId)).toBe(1);
  });

  it('a project-scoped key cannot create or delete projects', async () => {
    const a = await projectWithKey(t, ['projects:read', 'projects:write']);
    expect((await t.call({ method: 'POST', url: '/api/v1/projects', key: a.key, payload: { name: 'x' } })).statusCode).toBe(403);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/projects/${a.projectId}`, key: a.key })).statusCode).toBe(403);
  });

  it('deleting a project makes it and its keys unreachable', async () => {
    const a = await projectWithKey(t, ['projects:read']);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/projects/${a.projectId}` })).statusCode).toBe(204);
    expect((await t.call({ method: 'GET', url: `/api/v1/projects/${a.projectId}` })).statusCode).toBe(404);
    expect((await t.call({ method: 'GET', url: '/api/v1/projects', key: a.key })).statusCode).toBe(401);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/projects/${a.projectId}` })).statusCode).toBe(404);
  });

  it('projects need projects:read / projects:write', async () => {
    const a = await projectWithKey(t, ['metrics:read']);
    expect((await t.call({ method: 'GET', url: '/api/v1/projects', key: a.key })).statusCode).toBe(403);
    expect((await t.call({ method: 'PATCH', url: `/api/v1/projects/${a.projectId}`, key: a.key, payload: { name: 'q' } })).statusCode).toBe(403);
  });
});
