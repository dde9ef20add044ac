/**
 * Memory labels through HTTP (docs/memory.md): the label write and reads, who may label, the
 * POISONED_MEMORY_ITEM signal and its outbox rows (spec 2 "Memory label", "Memory label and signal",
 * "Memory" endpoints, "Review signal" auto-clears), and bad input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { Principal } from '../../http/principal.js';
import { projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, secondOrganization, signIn } from '../../testing/people.js';

let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => t.close());

const Q = 'MEMORY_TRUST_LABEL_QUARANTINED';
const T = 'MEMORY_TRUST_LABEL_TRUSTED';
const S = 'MEMORY_TRUST_LABEL_SUSPECT';
const enc = encodeURIComponent;

async function project(scopes = ['agents:read', 'agents:write']) {
  const p = await projectWithKey(t, scopes);
  const call = (method: 'GET' | 'PUT' | 'POST', url: string, payload?: unknown, key = p.key) =>
    t.call({ method, url: `/api/v1${url}`, key, ...(payload !== undefined ? { payload: payload as object } : {}) });
  const put = (item: string, label: string, reason = 'because') => call('PUT', `/memory-items/${enc(item)}/label`, { label, reason });
  const ok = async (res: Promise<LightMyRequestResponse>, status = 200) => {
    const r = await res;
    expect(r.statusCode, r.body).toBe(status);
    return r.json();
  };
  const signals = async () => (await ok(call('GET', '/review-signals?kind=REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM'))).review_signals as Record<string, unknown>[];
  const outbox = async () => (await ok(call('GET', '/notification-outbox'))).notifications as Record<string, unknown>[];
  const labels = async (q = '') => (await ok(call('GET', `/memory-item-labels${q ? `?${q}` : ''}`))).memory_item_labels as Record<string, unknown>[];
  return { ...p, call, put, ok, signals, outbox, labels };
}

function expectError(res: LightMyRequestResponse, status: number, message?: RegExp) {
  expect(res.statusCode, res.body).toBe(status);
  const body = res.json();
  expect(typeof body.error).toBe('string');
  expect(typeof body.message).toBe('string');
  if (message) expect(body.message).toMatch(message);
}

describe('PUT /memory-items/{itemKey}/label', () => {
  it('"body {label, reason}"; "labeled_by, labeled_at, revision" come back; the labeller is the credential (an API key here)', async () => {
    const p = await project();
    const before = Date.now();
    const r = await p.ok(p.put('item-1', S, 'looks odd'));
    expect(r).toMatchObject({
      project_id: p.projectId,
      memory_item_key: 'item-1',
      label: S,
      reason: 'looks odd',
      revision: 1,
      labeled_by: `api_key:${p.keyId}`,
      review_signal_opened: false,
      review_signal_resolved: false,
    });
    expect(Date.parse(r.labeled_at)).toBeGreaterThanOrEqual(before - 1);
    expect(Object.keys(r).sort()).toEqual(
      ['id', 'label', 'labeled_at', 'labeled_by', 'memory_item_key', 'project_id', 'reason', 'review_signal_opened', 'review_signal_resolved', 'revision'].sort(),
    );
  });

  it('a real person (admin) labels through a browser session: labeled_by is the person; a member (no agents:write) is 403; an org-wide credential names the project', async () => {
    const person = await addPerson(t, 'admin');
    const b = await signIn(t, person);
    const p = await project();
    // A member's role holds agents:read, not agents:write.
    const member = await signIn(t, await addPerson(t, 'member'));
    expectError(await member.call({ method: 'PUT', url: `/api/v1/memory-items/x/label?project_id=${p.projectId}`, payload: { label: Q, reason: 'r' } }), 403, /agents:write/);
    const noProject = await b.call({ method: 'PUT', url: `/api/v1/memory-items/x/label`, payload: { label: Q, reason: 'r' } });
    expectError(noProject, 400, /project_id/);
    const res = await b.call({ method: 'PUT', url: `/api/v1/memory-items/x/label?project_id=${p.projectId}`, payload: { label: Q, reason: 'poisoned doc' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ labeled_by: `user:${person.userId}`, revision: 1, review_signal_opened: true });
    // A key the person minted labels as the person too.
    const minted = await b.call({ method: 'POST', url: '/api/v1/account/api-keys', payload: { name: 'mine', scopes: ['agents:write', 'agents:read'], project_id: p.projectId } });
    expect(minted.statusCode, minted.body).toBe(201);
    expect((await p.ok(p.call('PUT', '/memory-items/x/label', { label: S, reason: 'r' }, minted.json().key))).labeled_by).toBe(`user:${person.userId}`);
  });

  it('"Labels append revisions; history is never replaced": revisions 1, 2, 3, every one listed', async () => {
    const p = await project();
    await p.ok(p.put('h', S, 'one'));
    await p.ok(p.put('h', Q, 'two'));
    const third = await p.ok(p.put('h', T, 'three'));
    expect(third.revision).toBe(3);
    const all = await p.labels('memory_item_key=h');
    expect(all.map((l) => [l.revision, l.label, l.reason])).toEqual([
      [3, T, 'three'],
      [2, Q, 'two'],
      [1, S, 'one'],
    ]);
    const times = all.map((l) => l.labeled_at as string);
    expect(times[0] > times[1] && times[1] > times[2]).toBe(true);
  });

  it('"concurrent PUTs both land as distinct revisions": identical requests at once are all kept', async () => {
    const p = await project();
    const results = await Promise.all(Array.from({ length: 8 }, () => p.put('race', Q, 'same')));
    expect(results.map((r) => r.statusCode)).toEqual(Array(8).fill(200));
    expect(results.map((r) => r.json().revision).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(results.filter((r) => r.json().review_signal_opened)).toHaveLength(1);
    expect(await p.labels('memory_item_key=race')).toHaveLength(8);
    expect(await p.signals()).toHaveLength(1);
  });

  it('"An item may be labelled before it has been recorded anywhere"; "A label records a judgement only": nothing else changes', async () => {
    const p = await project();
    const r = await p.ok(p.put('never-seen', Q));
    expect(r.revision).toBe(1);
    expect((await p.ok(p.call('GET', '/memory-items/never-seen/label'))).id).toBe(r.id);
  });

  it('"reviewer and time are taken from the credential and cannot be sent": labeled_by, labeled_at and friends are 400, nothing written', async () => {
    const p = await project();
    for (const field of ['labeled_by', 'labeled_at', 'labeller', 'revision', 'review_signal_opened', 'actor', 'created_by']) {
      const res = await p.call('PUT', '/memory-items/k/label', { label: Q, reason: 'r', [field]: field === 'revision' ? 9 : 'x' });
      expectError(res, 400, new RegExp(field));
    }
    expectError(await p.call('GET', '/memory-items/k/label'), 404);
    expect(await p.signals()).toEqual([]);
  });

  it('"missing required reason or label" is 400; "unspecified enum values" and unknown labels are 400 naming the accepted values; blank or long reasons are 400', async () => {
    const p = await project();
    const cases: [unknown, RegExp][] = [
      [{ reason: 'r' }, /label/],
      [{ label: Q }, /reason/],
      [{ label: 'MEMORY_TRUST_LABEL_UNSPECIFIED', reason: 'r' }, /MEMORY_TRUST_LABEL_TRUSTED/],
      [{ label: 'trusted', reason: 'r' }, /MEMORY_TRUST_LABEL_TRUSTED/],
      [{ label: Q, reason: '' }, /reason/],
      [{ label: Q, reason: '   ' }, /blank/],
      [{ label: Q, reason: 'x'.repeat(1025) }, /reason/],
      [{ label: Q, reason: 'a\u0000b' }, /NUL/],
      [{ label: Q, reason: 'r', project_id: p.projectId }, /project_id/],
    ];
    for (const [body, msg] of cases) expectError(await p.call('PUT', '/memory-items/k/label', body), 400, msg);
    // Exactly 1024 characters is accepted.
    expect((await p.put('k', Q, 'x'.repeat(1024))).statusCode).toBe(200);
    expect(await p.labels()).toHaveLength(1);
  });

  it('item keys are URL-encoded path segments of 1 to 256 characters: slashes, spaces, unicode round-trip; longer is 400', async () => {
    const p = await project();
    const key = 'user/42 prefs?#%&ü🙂';
    const r = await p.ok(p.put(key, S));
    expect(r.memory_item_key).toBe(key);
    expect((await p.ok(p.call('GET', `/memory-items/${enc(key)}/label`))).id).toBe(r.id);
    expect((await p.labels(`memory_item_key=${enc(key)}`)).map((l) => l.id)).toEqual([r.id]);
    expect((await p.put('k'.repeat(256), S)).statusCode).toBe(200);
    expectError(await p.put('k'.repeat(257), S), 400);
    expectError(await p.put('a\u0000b', S), 400, /NUL/);
    expectError(await p.call('GET', `/memory-item-labels?memory_item_key=${'k'.repeat(257)}`), 400);
  });

  it('"scope agents:write" for the write, agents:read for the reads', async () => {
    const reader = await project(['agents:read']);
    expectError(await reader.put('k', Q), 403);
    expect((await reader.call('GET', '/memory-item-labels')).statusCode).toBe(200);
    const writer = await project(['agents:write']);
    expectError(await writer.call('GET', '/memory-item-labels'), 403);
    expectError(await writer.call('GET', '/memory-items/k/label'), 403);
    expectError(await writer.call('GET', '/memory-items/k/propagation'), 403);
    expect((await writer.put('k', Q)).statusCode).toBe(200);
  });

  it("another organization's project is 404 like a missing one; a project-scoped key naming another project is 403; labels are per project", async () => {
    const a = await project();
    const b = await project();
    await a.ok(a.put('shared', Q));
    const other = await secondOrganization(t);
    expectError(await t.call({ method: 'PUT', url: `/api/v1/memory-items/shared/label?project_id=${a.projectId}`, key: other.ownerKey, payload: { label: T, reason: 'r' } }), 404);
    expectError(await t.call({ method: 'GET', url: `/api/v1/memory-items/shared/label?project_id=${a.projectId}`, key: other.ownerKey }), 404);
    expectError(await t.call({ method: 'GET', url: `/api/v1/memory-item-labels?project_id=${a.projectId}`, key: other.ownerKey }), 404);
    expectError(await b.call('GET', `/memory-items/shared/label?project_id=${a.projectId}`), 403);
    expectError(await b.call('GET', '/memory-items/shared/label'), 404);
    expect(await b.labels()).toEqual([]);
    expect((await a.ok(a.call('GET', '/memory-items/shared/label'))).label).toBe(Q);
  });

  it('"machine credentials without a user or key identity, and the platform itself, are refused" (403, nothing written)', async () => {
    const p = await project();
    const projectRecord = await t.ctx.projects.get({ orgId: t.orgId, projectId: null } as Principal, p.projectId);
    const base: Principal = { kind: 'oauth', keyId: null, signInId: null, connectionId: 'conn-1', orgId: t.orgId, projectId: null, scopes: new Set(['agents:write']), userId: null, role: null };
    const platform: Principal = { ...base, kind: 'api_key', connectionId: null };
    for (const who of [base, platform]) {
      const err = await t.ctx.memory.label(who, projectRecord, 'm', { label: Q, reason: 'r' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ status: 403, code: 'permission_denied' });
      expect((err as Error).message).toMatch(/person or an API key/);
    }
    // The same agent connection acting for a person labels as that person.
    expect((await t.ctx.memory.label({ ...base, userId: 'u-9' }, projectRecord, 'm', { label: S, reason: 'r' })).labeledBy).toBe('user:u-9');
    expect((await p.labels()).map((l) => l.labeled_by)).toEqual(['user:u-9']);
    expect(await p.signals()).toEqual([]);
  });
});

describe('GET /memory-items/{itemKey}/label and GET /memory-item-labels', () => {
  it('"current (highest revision); 404 if nobody labelled it"', async () => {
    const p = await project();
    expectError(await p.call('GET', '/memory-items/nobody/label'), 404);
    await p.ok(p.put('cur', Q));
    const second = await p.ok(p.put('cur', S));
    expect(await p.ok(p.call('GET', '/memory-items/cur/label'))).toEqual(second);
  });

  it('"query memory_item_key, label; every revision newest first": label is closed, repeatable or comma-separated, OR within, AND across', async () => {
    const p = await project();
    await p.ok(p.put('a', S));
    await p.ok(p.put('b', Q));
    await p.ok(p.put('a', T));
    await p.ok(p.put('c', Q));
    const pick = (ls: Record<string, unknown>[]) => ls.map((l) => `${l.memory_item_key}:${l.revision}`);
    expect(pick(await p.labels())).toEqual(['c:1', 'a:2', 'b:1', 'a:1']);
    expect(pick(await p.labels(`label=${Q}`))).toEqual(['c:1', 'b:1']);
    expect(pick(await p.labels(`label=${Q},${T}`))).toEqual(['c:1', 'a:2', 'b:1']);
    expect(pick(await p.labels(`label=${Q}&label=${S}`))).toEqual(['c:1', 'b:1', 'a:1']);
    expect(pick(await p.labels(`label=${Q}&memory_item_key=b`))).toEqual(['b:1']);
    expect(pick(await p.labels(`label=${T}&memory_item_key=b`))).toEqual([]);
    for (const bad of ['label=quarantined', 'label=MEMORY_TRUST_LABEL_UNSPECIFIED', `label=${Q},nope`, 'memory_item_key=']) expectError(await p.call('GET', `/memory-item-labels?${bad}`), 400);
  });

  it('cursor paging like /review-signals: default 100, at most 200; the cursor walks every revision once; a cursor of another query is 400', async () => {
    const p = await project();
    // Each revision in its own millisecond: revisions of one millisecond are ordered by their (random) ids.
    for (let i = 0; i < 5; i++) {
      await p.ok(p.put(`item-${i % 2}`, S, `r${i}`));
      await new Promise((r) => setTimeout(r, 2));
    }
    const seen: string[] = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page = await p.ok(p.call('GET', `/memory-item-labels?limit=2${cursor ? `&cursor=${enc(cursor)}` : ''}`));
      expect(page.memory_item_labels.length).toBeLessThanOrEqual(2);
      seen.push(...page.memory_item_labels.map((l: { reason: string }) => l.reason));
      cursor = page.next_cursor;
    }
    expect(seen).toEqual(['r4', 'r3', 'r2', 'r1', 'r0']);
    const first = await p.ok(p.call('GET', '/memory-item-labels?limit=2'));
    expectError(await p.call('GET', `/memory-item-labels?limit=2&label=${S}&cursor=${enc(first.next_cursor)}`), 400, /cursor/);
    expect((await p.call('GET', '/memory-item-labels?limit=200')).statusCode).toBe(200);
    for (const q of ['limit=201', 'limit=0', 'limit=-1', 'limit=abc', 'limit=1&limit=2', 'cursor=a&cursor=b', 'cursor=zzz', 'bogus=1'])
      expectError(await p.call('GET', `/memory-item-labels?${q}`), 400);
  });
});

describe('memory label and signal (REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM)', () => {
  it('"quarantined opens exactly one poisoned_memory_item signal"; "subject_ref is the item key"; "a second quarantined refreshes it" without a second notification', async () => {
    const p = await project();
    const first = await p.ok(p.put('doc-1', Q, 'injected instructions'));
    expect(first.review_signal_opened).toBe(true);
    const [s] = await p.signals();
    expect(s).toMatchObject({
      kind: 'REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM',
      status: 'REVIEW_SIGNAL_STATUS_OPEN',
      severity: 'REVIEW_SIGNAL_SEVERITY_HIGH',
      subject_ref: 'doc-1',
      detail_code: 'labeled_quarantined',
      asset_id: null,
      evidence_ref: first.id,
      opened_at: first.labeled_at,
      last_seen_at: first.labeled_at,
    });
    const second = await p.ok(p.put('doc-1', Q, 'still bad'));
    expect(second).toMatchObject({ review_signal_opened: false, review_signal_resolved: false });
    const [again] = await p.signals();
    expect(again).toMatchObject({ id: s.id, opened_at: s.opened_at, last_seen_at: second.labeled_at });
    expect((await p.outbox()).map((o) => `${o.event}:${o.kind}:${o.subject_ref}`)).toEqual(['opened:REVIEW_SIGNAL_KIND_POISONED_MEMORY_ITEM:doc-1']);
  });

  it('"suspect leaves an open signal open"; "trusted resolves that signal" (notified once); a second trusted resolves nothing', async () => {
    const p = await project();
    await p.ok(p.put('doc', Q));
    expect(await p.ok(p.put('doc', S))).toMatchObject({ review_signal_opened: false, review_signal_resolved: false });
    expect((await p.signals())[0].status).toBe('REVIEW_SIGNAL_STATUS_OPEN');
    const trusted = await p.ok(p.put('doc', T, 'cleaned'));
    expect(trusted).toMatchObject({ review_signal_opened: false, review_signal_resolved: true });
    const [s] = await p.signals();
    expect(s).toMatchObject({ status: 'REVIEW_SIGNAL_STATUS_RESOLVED', resolution_code: 'labeled_trusted', resolved_by: `api_key:${p.keyId}`, resolved_at: trusted.labeled_at });
    expect((await p.ok(p.put('doc', T))).review_signal_resolved).toBe(false);
    const outbox = await p.outbox();
    expect(outbox.map((o) => o.event)).toEqual(['opened', 'resolved']);
    expect((outbox[1].signal as Record<string, unknown>).status).toBe('REVIEW_SIGNAL_STATUS_RESOLVED');
  });

  it('"A resolved signal is never reopened": quarantined after trusted opens a new signal (a new episode); the resolved one stays resolved', async () => {
    const p = await project();
    await p.ok(p.put('doc', Q));
    await p.ok(p.put('doc', T));
    const again = await p.ok(p.put('doc', Q, 'poisoned again'));
    expect(again.review_signal_opened).toBe(true);
    const list = await p.signals();
    expect(list.map((s) => s.status).sort()).toEqual(['REVIEW_SIGNAL_STATUS_OPEN', 'REVIEW_SIGNAL_STATUS_RESOLVED']);
    expect(new Set(list.map((s) => s.subject_ref))).toEqual(new Set(['doc']));
    expect((await p.outbox()).map((o) => o.event)).toEqual(['opened', 'resolved', 'opened']);
  });

  it('a trusted or suspect label on an item never quarantined opens and resolves nothing', async () => {
    const p = await project();
    expect(await p.ok(p.put('fine', T))).toMatchObject({ review_signal_opened: false, review_signal_resolved: false });
    expect(await p.ok(p.put('fine', S))).toMatchObject({ review_signal_opened: false, review_signal_resolved: false });
    expect(await p.signals()).toEqual([]);
    expect(await p.outbox()).toEqual([]);
  });

  it('a dismissed signal stays dismissed: another quarantined in the same episode does not reopen it; trusted then quarantined opens a new one', async () => {
    const p = await project();
    await p.ok(p.put('doc', Q));
    const [s] = await p.signals();
    await p.ok(p.call('POST', `/review-signals/${s.id}/dismiss`, { reason: 'false alarm' }));
    expect((await p.ok(p.put('doc', Q))).review_signal_opened).toBe(false);
    expect((await p.signals()).map((x) => x.status)).toEqual(['REVIEW_SIGNAL_STATUS_DISMISSED']);
    expect((await p.ok(p.put('doc', T))).review_signal_resolved).toBe(false);
    expect((await p.ok(p.put('doc', Q))).review_signal_opened).toBe(true);
  });

  it('signals of items are independent: one item per signal, per project', async () => {
    const p = await project();
    await p.ok(p.put('a', Q));
    await p.ok(p.put('b', Q));
    await p.ok(p.put('a', T));
    const byItem = Object.fromEntries((await p.signals()).map((s) => [s.subject_ref, s.status]));
    expect(byItem).toEqual({ a: 'REVIEW_SIGNAL_STATUS_RESOLVED', b: 'REVIEW_SIGNAL_STATUS_OPEN' });
    const other = await project();
    expect(await other.signals()).toEqual([]);
  });
});

describe('bad input', () => {
  it('as an attacker writes it: always a 4xx in the error shape, never a 5xx, and nothing changes', async () => {
    const p = await project();
    await p.ok(p.put('target', S, 'baseline'));
    let deep: unknown = 'x';
    for (let i = 0; i < 500; i++) deep = { a: deep };
    const bodies: (string | object)[] = [
      '{"label":',
      '[]',
      'null',
      '"MEMORY_TRUST_LABEL_QUARANTINED"',
      { label: deep, reason: 'r' },
      { label: Q, reason: deep },
      { label: Q, reason: 'r', extra: deep },
      { label: [Q, T], reason: 'r' },
      { label: { $ne: null }, reason: 'r' },
      { label: Q, reason: 7 },
      { label: Q, reason: 'x'.repeat(200_000) },
      { label: Q, reason: 'r', environment: 'prod' },
      '{"label":"MEMORY_TRUST_LABEL_QUARANTINED","reason":"r","__proto__":{"labeled_by":"x"}}',
      '{"label":"MEMORY_TRUST_LABEL_QUARANTINED","reason":"r","constructor":{"prototype":{"x":1}}}',
      '{"label":"MEMORY_TRUST_LABEL_QUARANTINED","label":"MEMORY_TRUST_LABEL_TRUSTED","reason":"r","labeled_by":"u"}',
    ];
    for (const body of bodies) {
      const res = await t.call({
        method: 'PUT',
        url: '/api/v1/memory-items/target/label',
        key: p.key,
        ...(typeof body === 'string' ? { payload: body, headers: { 'content-type': 'application/json' } } : { payload: body }),
      });
      expect(res.statusCode, JSON.stringify(body).slice(0, 80)).toBeGreaterThanOrEqual(400);
      expect(res.statusCode).toBeLessThan(500);
      expect(res.json()).toHaveProperty('error');
    }
    const textBody = await t.call({ method: 'PUT', url: '/api/v1/memory-items/target/label', key: p.key, payload: 'label=x', headers: { 'content-type': 'text/plain' } });
    expect(textBody.statusCode).toBeGreaterThanOrEqual(400);
    expect(textBody.statusCode).toBeLessThan(500);
    const urls = [
      '/memory-items//label',
      `/memory-items/${'x'.repeat(5000)}/label`,
      `/memory-items/${'%F0%9F%99%82'.repeat(300)}/label`,
      '/memory-items/%E0%A4%A/label',
      '/memory-items/target/label?environment=prod',
      '/memory-items/target/label?project_id=a&project_id=b',
      '/memory-items/target/propagation?limit=1&limit=2',
    ];
    for (const u of urls) {
      for (const method of ['GET', 'PUT'] as const) {
        if (method === 'PUT' && u.includes('propagation')) continue;
        const res = await p.call(method, u, method === 'PUT' ? { label: Q, reason: 'r' } : undefined);
        expect(res.statusCode, `${method} ${u.slice(0, 60)}`).toBeGreaterThanOrEqual(400);
        expect(res.statusCode).toBeLessThan(500);
        expect(res.json()).toHaveProperty('error');
      }
    }
    const labels = await p.labels();
    expect(labels.map((l) => [l.memory_item_key, l.revision, l.label])).toEqual([['target', 1, S]]);
    expect(await p.signals()).toEqual([]);
  });
});
