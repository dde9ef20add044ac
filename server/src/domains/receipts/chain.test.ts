/**
 * The receipt chain on both engines (embedded SQLite and the PostgreSQL server): concurrent appends never
 * fork or skip, verify recomputes every link and digest, a changed stored byte is found at its position,
 * and entries stored before the chain (containment approvals) are linked and folded by migration 0012.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../http/principal.js';
import { randomIds, systemClock } from '../../lib/clock.js';
import { upgradeStoredEntries } from '../../storage/control/migrations/0012_receipts.js';
import type { ControlDb } from '../../storage/control/open.js';
import type { ControlStore } from '../../storage/control/stores.js';
import { openTestControl } from '../../testing/app.js';
import { SignalService } from '../assets/signals.js';
import { AuthorityEdgeService } from '../authority-edges/service.js';
import type { ProjectRecord } from '../projects/store.js';
import { ReceiptChain } from './chain.js';
import { ReceiptService } from './service.js';

const agent = (orgId: string): Principal => ({ kind: 'api_key', keyId: 'k1', signInId: null, connectionId: null, orgId, projectId: null, scopes: new Set(['ingest:write']), userId: null, role: null });
const project = (id: string) => ({ id, orgId: 'o1' }) as ProjectRecord;
const entry = (action: string, state = 'RECEIPT_STATE_INTENDED') => ({ action_id: action, state, occurred_at: '2026-09-01T10:00:00.5+02:00', effect_class: 'EFFECT_CLASS_INTERNAL' as const });

describe.each(['sqlite', 'postgres'] as const)('receipt chain on %s', (dialect) => {
  let control: ControlStore;
  let db: ControlDb;
  let drop: () => Promise<void>;
  let svc: ReceiptService;
  let chain: ReceiptChain;

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    control = t.store;
    db = t.db;
    drop = t.drop;
    const edges = new AuthorityEdgeService(control, new SignalService(control, systemClock, randomIds), systemClock, randomIds);
    svc = new ReceiptService(control, edges, systemClock, randomIds);
    chain = new ReceiptChain(control);
  });
  afterAll(async () => drop());

  it('"appends serialized per project": 20 concurrent batches of 3 entries give 60 links at 0..59, none forked or skipped, and the chain verifies', async () => {
    const p = project(`race-${dialect}`);
    await Promise.all(Array.from({ length: 20 }, (_, i) => svc.ingestReported(agent('o1'), p, { entries: [entry(`a${i}`), entry(`a${i}`, 'RECEIPT_STATE_EXECUTED'), entry('shared')] })));
    expect(await chain.size(p.id, 'actions')).toBe(60);
    const links = await chain.entries(p.id, 'actions', 0, 60);
    expect(links.map((l) => l.seq)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    for (const [i, l] of links.entries()) expect(l.prevEntrySha256).toBe(i === 0 ? '' : links[i - 1].entrySha256);
    const shared = await control.receipts.entriesOf(p.id, ['shared']);
    expect(shared.map((e) => e.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(await chain.verify(p.id, 'actions')).toEqual({
      valid: true,
      entry_count: 60,
      mediated_entry_count: 0,
      reported_entry_count: 60,
      first_invalid_seq: null,
      last_entry_sha256: links[59].entrySha256,
      detail: '',
    });
  });

  it('"a never-opened chain" has no size and no verification', async () => {
    expect(await chain.size('nobody', 'actions')).toBeNull();
    expect(await chain.verify('nobody', 'actions')).toBeNull();
  });

  it('the canonical form is RFC 8785 with the previous digest inside, times in UTC with nine digits; entry_sha256 is SHA-256 hex of it', async () => {
    const p = project(`bytes-${dialect}`);
    await svc.ingestReported(agent('o1'), p, { entries: [entry('x'), entry('x', 'RECEIPT_STATE_EXECUTED')] });
    const [a, b] = await chain.entries(p.id, 'actions', 0, 2);
    const parsed = JSON.parse(b.canonical);
    expect(parsed.prev_entry_sha256).toBe(a.entrySha256);
    expect(parsed.occurred_at).toBe('2026-09-01T08:00:00.500000000Z');
    const { canonicalize } = await import('json-canonicalize');
    expect(canonicalize(parsed)).toBe(b.canonical);
    const { createHash } = await import('node:crypto');
    expect(createHash('sha256').update(b.canonical, 'utf8').digest('hex')).toBe(b.entrySha256);
  });

  const tampered = async (name: string, change: (p: string) => Promise<unknown>) => {
    const p = project(`${name}-${dialect}`);
    await svc.ingestReported(agent('o1'), p, { entries: Array.from({ length: 8 }, (_, i) => entry(`t${i}`)) });
    expect((await chain.verify(p.id, 'actions'))?.valid).toBe(true);
    await change(p.id);
    return chain.verify(p.id, 'actions');
  };
  const at = (projectId: string, seq: number) => db.updateTable('receipt_entries').where('project_id', '=', projectId).where('chain_seq', '=', seq);

  it('a tampered row: one changed byte of the canonical form makes the chain invalid at that position', async () => {
    const v = await tampered('canon', async (id) => {
      const row = (await db.selectFrom('receipt_entries').select('canonical').where('project_id', '=', id).where('chain_seq', '=', 5).executeTakeFirstOrThrow()).canonical;
      await at(id, 5).set({ canonical: row.replace('INTERNAL', 'EXTERNAL') }).execute();
    });
    expect(v).toMatchObject({ valid: false, first_invalid_seq: 5, detail: 'content_mismatch', entry_count: 8 });
  });

  it('a tampered row: a changed column (state) no longer matches its canonical bytes', async () => {
    const v = await tampered('column', (id) => at(id, 2).set({ state: 'RECEIPT_STATE_EXECUTED' }).execute());
    expect(v).toMatchObject({ valid: false, first_invalid_seq: 2, detail: 'content_mismatch' });
  });

  it('a tampered row: a rewritten digest is a digest mismatch; a rewritten link a broken link', async () => {
    expect(await tampered('digest', (id) => at(id, 3).set({ entry_sha256: '0'.repeat(64) }).execute())).toMatchObject({ first_invalid_seq: 3, detail: 'digest_mismatch' });
    expect(await tampered('link', (id) => at(id, 4).set({ prev_entry_sha256: '0'.repeat(64) }).execute())).toMatchObject({ first_invalid_seq: 4, detail: 'broken_link' });
  });

  it('a removed entry is a sequence gap; one removed from the end disagrees with the head', async () => {
    const del = (id: string, seq: number) => db.deleteFrom('receipt_entries').where('project_id', '=', id).where('chain_seq', '=', seq).execute();
    expect(await tampered('gap', (id) => del(id, 6))).toMatchObject({ valid: false, first_invalid_seq: 6, detail: 'sequence_gap', entry_count: 7 });
    expect(await tampered('tail', (id) => del(id, 7))).toMatchObject({ valid: false, first_invalid_seq: 7, detail: 'head_mismatch', entry_count: 7 });
  });

  it('migration 0012: entries stored before the chain (legacy AUTHORIZED spelling, millisecond times, no link) are linked in recorded order and folded', async () => {
    const pid = `legacy-${dialect}`;
    const row = (seq: number, state: string, recorded: string) => ({
      id: `${pid}-${seq}`,
      org_id: 'o1',
      project_id: pid,
      action_id: 'q1',
      seq,
      state,
      authority: 'RECEIPT_AUTHORITY_MEDIATED',
      requester_principal: 'user:alice',
      approver_principal: seq === 1 ? 'user:bob' : null,
      effect_class: 'EFFECT_CLASS_INTERNAL',
      destructive: 0,
      policy_id: 'agents:containment_approval',
      policy_version: 'v1',
      occurred_at: recorded,
      recorded_at: recorded,
      subject_kind: 'api_key_id',
      subject_id: 'k9',
    });
    await db.insertInto('receipt_entries').values([row(1, 'AUTHORIZED', '2026-08-01T00:00:00.000Z'), row(2, 'RECEIPT_STATE_QUARANTINED', '2026-08-01T00:00:00.000Z')] as never).execute();
    await upgradeStoredEntries(db);
    expect(await chain.verify(pid, 'actions')).toMatchObject({ valid: true, entry_count: 2, mediated_entry_count: 2, reported_entry_count: 0 });
    expect(await control.receipts.findReceipt(pid, 'q1')).toMatchObject({
      finalState: 'RECEIPT_STATE_QUARANTINED',
      approverPrincipal: 'user:bob',
      approvedAt: '2026-08-01T00:00:00.000000000Z',
      policyId: 'agents:containment_approval',
      normalizerVersion: 1,
    });
    // Appends continue the linked chain.
    await control.transaction((tx) =>
      svc.appendMediated(tx, {
        orgId: 'o1',
        projectId: pid,
        actionId: 'q2',
        policy: { id: 'content:subject_erasure', version: 'v1' },
        source: 'erasure',
        entries: [{ state: 'RECEIPT_STATE_EXECUTED', requesterPrincipal: 'user:alice', effectClass: 'EFFECT_CLASS_INTERNAL', destructive: true, occurredAt: new Date().toISOString() }],
      }),
    );
    expect(await chain.verify(pid, 'actions')).toMatchObject({ valid: true, entry_count: 3, mediated_entry_count: 3 });
  });
});
