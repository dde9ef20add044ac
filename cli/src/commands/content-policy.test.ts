import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useCliTestEnv } from '../testing/cli-test-env.js';
import { BOUNDARIES, CLASSES } from './content-policy.js';

const NOW = new Date('2024-06-01T12:00:00.000Z');
const denied = CLASSES.flatMap((c) => BOUNDARIES.map((b) => ({ content_class: c, sink: b, decision: 'deny' })));
const P0 = { project_id: 'p1', version: 0, rules: denied };
const P1 = { ...P0, version: 1, updated_by: { api_key_id: 'k1' }, updated_at: '2024-06-01T12:00:00.000Z' };

const { t, svc } = useCliTestEnv(NOW);

describe('svc content-policy', () => {
  it('get reads the active project\'s grid; JSON is the answer', async () => {
    t.api.on('GET', '/projects/p1/content-policy', { status: 200, body: P0 });
    const r = await svc(['content-policy', 'get', '--project', 'p1']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(P0);
  });

  it('set sends the body of --body or --file (a list of rules is wrapped), with --expected-version', async () => {
    t.api.on('PUT', '/projects/p1/content-policy', { status: 200, body: P1 });
    const rules = [{ content_class: 'model_transcript', sink: 'read', decision: 'allow' }];
    expect((await svc(['content-policy', 'set', '--project', 'p1', '--body', JSON.stringify({ rules })])).code).toBe(0);
    const file = join(t.tmp.dir, 'policy.json');
    writeFileSync(file, JSON.stringify(rules));
    expect((await svc(['content-policy', 'set', '--project', 'p1', '--file', file, '--expected-version', '3'])).code).toBe(0);
    expect(t.api.requests.map((x) => x.body)).toEqual([{ rules }, { rules, expected_version: 3 }]);
  });

  it('allow reads the grid and writes it back at the version read, with the cells given set', async () => {
    t.api.on('GET', '/projects/p1/content-policy', { status: 200, body: P1 });
    t.api.on('PUT', '/projects/p1/content-policy', { status: 200, body: P1 });
    const r = await svc(['content-policy', 'allow', '--project', 'p1', '--class', 'all', '--boundary', 'store,read']);
    expect(r.code, r.stderr).toBe(0);
    const sent = t.api.requests[1].body as { expected_version: number; rules: { content_class: string; sink: string; decision: string }[] };
    expect(sent.expected_version).toBe(1);
    expect(sent.rules).toHaveLength(24);
    expect(sent.rules.filter((x) => x.decision === 'allow').map((x) => x.sink).sort()).toEqual([...Array(6).fill('read'), ...Array(6).fill('store')]);
  });

  it('list, retention get/set and refusals reach their routes with their filters', async () => {
    t.api.on('GET', '/content-policies', { status: 200, body: { content_policies: [P1], next_cursor: null } });
    t.api.on('GET', '/projects/p1/content-policy/retention', { status: 200, body: { project_id: 'p1', windows: [] } });
    t.api.on('PUT', '/projects/p1/content-policy/retention', { status: 200, body: { project_id: 'p1', windows: [] } });
    t.api.on('GET', '/projects/p1/content-policy/refusals', { status: 200, body: { refusals: [], next_cursor: null } });
    for (const args of [
      ['content-policy', 'list'],
      ['content-policy', 'retention', 'get', '--project', 'p1'],
      ['content-policy', 'retention', 'set', '--project', 'p1', '--body', '[{"content_class":"replay_dom","retention_days":30}]'],
      ['content-policy', 'refusals', '--project', 'p1', '--boundary', 'store', '--from', '1h'],
    ])
      expect((await svc(args)).code, args.join(' ')).toBe(0);
    expect(t.api.requests.map((r) => `${r.method} ${r.path}${r.search ? `?${r.search}` : ''}`)).toEqual([
      'GET /api/v1/content-policies',
      'GET /api/v1/projects/p1/content-policy/retention',
      'PUT /api/v1/projects/p1/content-policy/retention',
      'GET /api/v1/projects/p1/content-policy/refusals?boundary=store&from=1h',
    ]);
    expect(t.api.requests[2].body).toEqual({ windows: [{ content_class: 'replay_dom', retention_days: 30 }] });
  });

  it('usage errors exit 2 and send nothing: no body, two bodies, bad JSON, unknown class or boundary or decision, no project', async () => {
    for (const args of [
      ['content-policy', 'set', '--project', 'p1'],
      ['content-policy', 'set', '--project', 'p1', '--body', '{}', '--file', 'x'],
      ['content-policy', 'set', '--project', 'p1', '--body', '{nope'],
      ['content-policy', 'allow', '--project', 'p1', '--class', 'videos', '--boundary', 'read'],
      ['content-policy', 'allow', '--project', 'p1', '--class', 'all', '--boundary', 'sink'],
      ['content-policy', 'allow', '--project', 'p1', '--class', 'all', '--boundary', 'read', '--decision', 'maybe'],
      ['content-policy', 'allow', '--project', 'p1', '--boundary', 'read'],
      ['content-policy', 'get'],
    ])
      expect((await svc(args)).code, args.join(' ')).toBe(2);
    expect(t.api.requests).toEqual([]);
  });

  it('a 409 from the server (the grid changed in between) exits with the API error', async () => {
    t.api.on('GET', '/projects/p1/content-policy', { status: 200, body: P1 });
    t.api.on('PUT', '/projects/p1/content-policy', { status: 409, body: { error: 'conflict', message: 'expected_version 1 does not match' } });
    const r = await svc(['content-policy', 'allow', '--project', 'p1', '--class', 'model_transcript', '--boundary', 'read']);
    expect(r.code).not.toBe(0);
    expect(JSON.parse(r.stderr)).toMatchObject({ error: 'conflict', status: 409 });
  });
  it('erase needs --yes (nothing is sent without it), then posts the subject, classes and request id; erasures lists with --kind', async () => {
    const E = { id: 'e1', kind: 'subject', subject_kind: 'trace_id', subject_id: 't1', content_classes: ['tool_arguments'], status: 'completed', counts: { attributes: 2 }, created_at: '2024-06-01T12:00:00.000Z' };
    const args = ['content-policy', 'erase', '--project', 'p1', '--subject-kind', 'trace_id', '--subject-id', 't1', '--reason', 'gdpr', '--class', 'tool_arguments', '--request-id', 'r1'];
    expect((await svc(args)).code).toBe(2);
    expect(t.api.requests).toEqual([]);
    t.api.on('POST', '/projects/p1/content-erasures', { status: 201, body: E });
    const r = await svc([...args, '--yes']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(E);
    expect(t.api.requests[0].body).toEqual({ subject_kind: 'trace_id', subject_id: 't1', reason: 'gdpr', content_classes: ['tool_arguments'], request_id: 'r1' });
    t.api.on('GET', '/projects/p1/content-erasures', { status: 200, body: { erasures: [E], next_cursor: null } });
    const l = await svc(['content-policy', 'erasures', '--project', 'p1', '--kind', 'subject']);
    expect(JSON.parse(l.stdout)).toEqual({ erasures: [E], next_cursor: null });
    expect(t.api.requests[1].query).toMatchObject({ kind: ['subject'] });
  });
});
