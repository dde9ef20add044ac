import { describe, expect, it } from 'vitest';
import { useCliTestEnv } from '../testing/cli-test-env.js';

const NOW = new Date('2024-06-01T12:00:00.000Z');
const LABEL = {
  id: 'l1',
  project_id: 'p1',
  memory_item_key: 'user/42 prefs',
  label: 'MEMORY_TRUST_LABEL_QUARANTINED',
  reason: 'injected',
  revision: 2,
  labeled_by: 'user:u1',
  labeled_at: '2024-06-01T12:00:00.000Z',
  review_signal_opened: true,
  review_signal_resolved: false,
};
const PROPAGATION = {
  memory_item_key: 'doc-7',
  project_id: 'p1',
  entries: [
    {
      session_key: 'conv-a',
      turn_id: 'turn-1',
      run_id: 'a'.repeat(32),
      trace_id: 'a'.repeat(32),
      span_id: 'b'.repeat(16),
      occurred_at: '2024-06-01T11:00:00.000000Z',
      canonical_operation: 'CANONICAL_OPERATION_UPSERT_MEMORY',
      store: 'vec',
      item_provenance: null,
      declared_trust_label: null,
      label_state: 'MEMORY_LABEL_STATE_LABELED',
      label_in_force: 'MEMORY_TRUST_LABEL_SUSPECT',
      label_revision: 1,
      label_id: 'l0',
      label_in_force_since: '2024-06-01T10:00:00.000Z',
    },
  ],
  distinct_session_count: 1,
  current_label: 'MEMORY_TRUST_LABEL_QUARANTINED',
  current_label_state: 'MEMORY_LABEL_STATE_LABELED',
  current_label_record: LABEL,
  truncated: true,
};

const { t, svc } = useCliTestEnv(NOW);
const sent = () => t.api.requests.map((r) => `${r.method} ${r.path}${r.search ? `?${r.search}` : ''}`);

describe('svc memory', () => {
  it('label PUTs {label, reason} to the URL-encoded item of the active project; a short label is sent in full; JSON is the answer', async () => {
    t.api.on('PUT', '/memory-items/user/42 prefs/label', { status: 200, body: LABEL });
    const r = await svc(['memory', 'label', 'user/42 prefs', '--label', 'quarantined', '--reason', 'injected', '--project', 'p1']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(LABEL);
    expect(sent()).toEqual(['PUT /api/v1/memory-items/user%2F42%20prefs/label?project_id=p1']);
    expect(t.api.requests[0].body).toEqual({ label: 'MEMORY_TRUST_LABEL_QUARANTINED', reason: 'injected' });
  });

  it('usage errors exit 2 and send nothing: unknown or unspecified label, no label, no reason, a blank reason, no project, a bad limit', async () => {
    const cases: string[][] = [
      ['memory', 'label', 'k', '--label', 'poisoned', '--reason', 'x', '--project', 'p1'],
      ['memory', 'label', 'k', '--label', 'MEMORY_TRUST_LABEL_UNSPECIFIED', '--reason', 'x', '--project', 'p1'],
      ['memory', 'label', 'k', '--reason', 'x', '--project', 'p1'],
      ['memory', 'label', 'k', '--label', 'trusted', '--project', 'p1'],
      ['memory', 'label', 'k', '--label', 'trusted', '--reason', ' ', '--project', 'p1'],
      ['memory', 'label', 'k', '--label', 'trusted', '--reason', 'x'],
      ['memory', 'labels', '--label', 'trusted,bogus', '--project', 'p1'],
      ['memory', 'propagation', 'k', '--limit', '501', '--project', 'p1'],
      ['memory', 'propagation', 'k', '--limit', '0', '--project', 'p1'],
    ];
    for (const args of cases) expect((await svc(args)).code, args.join(' ')).toBe(2);
    expect(t.api.requests).toEqual([]);
  });

  it('get, labels (filters, every page with --all) and propagation reach their routes', async () => {
    t.api.on('GET', '/memory-items/doc-7/label', { status: 200, body: LABEL });
    t.api.on('GET', '/memory-item-labels', { status: 200, body: { memory_item_labels: [LABEL], next_cursor: null } });
    t.api.on('GET', '/memory-items/doc-7/propagation', { status: 200, body: PROPAGATION });
    for (const args of [
      ['memory', 'get', 'doc-7', '--project', 'p1'],
      ['memory', 'labels', '--item', 'doc-7', '--label', 'quarantined,TRUSTED', '--label', 'quarantined', '--limit', '50', '--all', '--project', 'p1'],
      ['memory', 'propagation', 'doc-7', '--limit', '500', '--project', 'p1'],
    ]) {
      const r = await svc(args);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
    }
    expect(sent()).toEqual([
      'GET /api/v1/memory-items/doc-7/label?project_id=p1',
      'GET /api/v1/memory-item-labels?project_id=p1&memory_item_key=doc-7&label=MEMORY_TRUST_LABEL_QUARANTINED&label=MEMORY_TRUST_LABEL_TRUSTED&limit=50',
      'GET /api/v1/memory-items/doc-7/propagation?project_id=p1&limit=500',
    ]);
  });

  it('a table shows the propagation with the label then in force, the session count and the truncation', async () => {
    t.api.on('GET', '/memory-items/doc-7/propagation', { status: 200, body: PROPAGATION });
    const r = await svc(['memory', 'propagation', 'doc-7', '--project', 'p1', '--output', 'table']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('current label quarantined, 1 session(s), truncated');
    expect(r.stdout).toContain('upsert_memory');
    expect(r.stdout).toContain('suspect (r1)');
  });

  it('a server refusal keeps its code: 404 for an item nobody labelled exits non-zero with the error', async () => {
    t.api.on('GET', '/memory-items/none/label', { status: 404, body: { error: 'not_found', message: 'memory item label not found' } });
    const r = await svc(['memory', 'get', 'none', '--project', 'p1']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/not found/);
  });
});
