/**
 * The change feed (docs/several-nodes.md): the wire form carries ids only; a change announced in a
 * transaction is heard when it commits and never when it rolls back, by this process (SQLite, PostgreSQL)
 * and by another node sharing the PostgreSQL schema (LISTEN/NOTIFY on its own connection); a node whose
 * listening connection drops drops its caches, caches nothing until it listens again, and resyncs again
 * then. The content policy cache keeps nothing a concurrent change made stale.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContentPolicyService } from '../domains/content-policy/service.js';
import type { ContentPolicyStore, PolicyRecord } from '../domains/content-policy/store.js';
import { gridOf } from '../domains/content-policy/model.js';
import type { ProjectService } from '../domains/projects/service.js';
import { waitFor } from '../jobs/testing.js';
import { systemClock } from '../lib/clock.js';
import { openControlStore, type ControlDb } from '../storage/control/open.js';
import { controlStore, type ControlStore } from '../storage/control/stores.js';
import { openTestControl, TEST_DATABASE_URL } from '../testing/app.js';
import { InProcessChangeFeed } from './change-feed.js';
import { CHANGE_TOPICS, decodeChange, encodeChange, type Change } from './changes.js';
import { PostgresChangeFeed } from './postgres-change-feed.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Everything a feed delivers, in order, and how many resyncs it asked for. */
function record(feed: InProcessChangeFeed) {
  const heard: Change[] = [];
  let resyncs = 0;
  for (const topic of CHANGE_TOPICS) feed.subscribe(topic, (c) => void heard.push(c));
  feed.onResync(() => void resyncs++);
  return {
    heard,
    get resyncs() {
      return resyncs;
    },
  };
}

describe('the wire form', () => {
  it('is the topic and its ids, nothing else; unknown topics, missing or oversized ids are dropped', () => {
    const c: Change = { topic: 'member.changed', orgId: 'o1', userId: 'u1' };
    expect(JSON.parse(encodeChange({ ...c, secret: 'svc_x' } as Change))).toEqual({ topic: 'member.changed', orgId: 'o1', userId: 'u1' });
    expect(decodeChange(encodeChange(c))).toEqual(c);
    expect(decodeChange('{"topic":"api_key.changed","keyId":"k","extra":"x"}')).toEqual({ topic: 'api_key.changed', keyId: 'k' });
    for (const bad of ['', 'nope', '[]', 'null', '{"topic":"api_key.created","keyId":"k"}', '{"topic":"api_key.changed"}', '{"topic":"api_key.changed","keyId":3}', `{"topic":"api_key.changed","keyId":"${'k'.repeat(129)}"}`, '{"topic":"toString","keyId":"k"}'])
      expect(decodeChange(bad)).toBeUndefined();
  });
});

describe('in process (SQLite: one process is the whole service)', () => {
  let store: ControlStore;
  let drop: () => Promise<void>;
  let feed: InProcessChangeFeed;
  beforeAll(async () => {
    ({ store, drop } = await openTestControl('sqlite'));
    feed = new InProcessChangeFeed(store);
  });
  afterAll(async () => {
    await feed.stop();
    await drop();
  });

  it('a change in a transaction is heard after the commit, never on rollback; outside one, at once', async () => {
    const r = record(feed);
    await store.transaction(async (tx) => {
      await tx.changes.publish({ topic: 'api_key.changed', keyId: 'k1' });
      expect(r.heard).toEqual([]);
    });
    expect(r.heard).toEqual([{ topic: 'api_key.changed', keyId: 'k1' }]);
    await expect(
      store.transaction(async (tx) => {
        await tx.changes.publish({ topic: 'api_key.changed', keyId: 'rolled-back' });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    await feed.publish({ topic: 'project.deleted', projectId: 'p1' });
    expect(r.heard).toEqual([
      { topic: 'api_key.changed', keyId: 'k1' },
      { topic: 'project.deleted', projectId: 'p1' },
    ]);
    expect(feed.live).toBe(true);
  });

  it('a failing handler neither stops the others nor fails the write it hears of', async () => {
    const seen: string[] = [];
    const off = feed.subscribe('session.changed', () => {
      throw new Error('boom');
    });
    feed.subscribe('session.changed', (c) => void seen.push(c.signInId));
    await store.transaction((tx) => tx.changes.publish({ topic: 'session.changed', signInId: 's1' }));
    expect(seen).toEqual(['s1']);
    off();
  });
});

describe('PostgreSQL: two nodes, each with its own pool and listening connection, on one schema', () => {
  let a: ControlStore;
  let b: ControlStore;
  let dbA: ControlDb;
  let schema: string;
  let drop: () => Promise<void>;
  let feedA: PostgresChangeFeed;
  let feedB: PostgresChangeFeed;
  beforeAll(async () => {
    const t = await openTestControl('postgres');
    a = t.store;
    dbA = t.db;
    drop = t.drop;
    schema = (await sql<{ schema: string }>`select current_schema() as schema`.execute(t.db)).rows[0].schema;
    b = controlStore((await openControlStore({ databaseUrl: TEST_DATABASE_URL, pgSchema: schema })).db, 'postgres');
    feedA = new PostgresChangeFeed(a, { connectionString: TEST_DATABASE_URL, schema, minBackoffMs: 20, heartbeatMs: 500 });
    feedB = new PostgresChangeFeed(b, { connectionString: TEST_DATABASE_URL, schema, minBackoffMs: 20, heartbeatMs: 500 });
    await Promise.all([feedA.start(), feedB.start()]);
  });
  afterAll(async () => {
    await Promise.all([feedA?.stop(), feedB?.stop()]);
    await b?.close();
    await drop?.();
  });

  it('a change committed on A is heard by B (and by A itself); nothing is heard before the commit, nor ever after a rollback', async () => {
    expect([feedA.live, feedB.live]).toEqual([true, true]);
    const onA = record(feedA);
    const onB = record(feedB);
    await a.transaction(async (tx) => {
      await tx.changes.publish({ topic: 'content_policy.changed', projectId: 'p-commit' });
      await sleep(150);
      expect([onA.heard, onB.heard]).toEqual([[], []]);
    });
    const committed = { topic: 'content_policy.changed', projectId: 'p-commit' };
    await waitFor(() => onB.heard.length === 1, 'B to hear the commit', 1000);
    expect(onB.heard).toEqual([committed]);
    // A hears it from its own store at once and again through its LISTEN: handlers only drop, twice is harmless.
    await waitFor(() => onA.heard.length === 2, 'A to hear it twice', 1000);
    expect(onA.heard).toEqual([committed, committed]);

    await expect(
      a.transaction(async (tx) => {
        await tx.changes.publish({ topic: 'content_policy.changed', projectId: 'p-rolled-back' });
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    // Notifications arrive in commit order: once a later one is heard, the rolled-back one never will be.
    await b.changes.publish({ topic: 'project.deleted', projectId: 'p-after' });
    await waitFor(() => onA.heard.some((c) => c.topic === 'project.deleted'), 'A to hear B', 1000);
    expect([...onA.heard, ...onB.heard].some((c) => 'projectId' in c && c.projectId === 'p-rolled-back')).toBe(false);
  });

  it('another schema of the same database is another service: its changes are not heard', async () => {
    const other = await openTestControl('postgres');
    try {
      const onB = record(feedB);
      await other.store.changes.publish({ topic: 'api_key.changed', keyId: 'elsewhere' });
      await a.changes.publish({ topic: 'api_key.changed', keyId: 'here' });
      await waitFor(() => onB.heard.length === 1, 'B to hear its own schema', 1000);
      await sleep(100);
      expect(onB.heard).toEqual([{ topic: 'api_key.changed', keyId: 'here' }]);
    } finally {
      await other.drop();
    }
  });

  it('the listening connection killed: B drops its caches at once, is not live, reconnects, drops them again, and hears changes again', async () => {
    const onB = record(feedB);
    const pid = feedB.backendPid!;
    expect(pid).toBeGreaterThan(0);
    await sql`select pg_terminate_backend(${pid})`.execute(dbA);
    await waitFor(() => onB.resyncs >= 1, 'B to notice the loss', 3000);
    await waitFor(() => feedB.live && onB.resyncs >= 2, 'B to listen again and resync', 5000);
    expect(feedB.losses).toBeGreaterThanOrEqual(1);
    expect(feedB.backendPid).not.toBe(pid);
    await a.changes.publish({ topic: 'session.changed', signInId: 's-after-reconnect' });
    await waitFor(() => onB.heard.some((c) => c.topic === 'session.changed' && c.signInId === 's-after-reconnect'), 'B to hear after reconnecting', 1000);
  });
});

describe('the content policy cache of a node', () => {
  const rules = [{ content_class: 'model_transcript', sink: 'read', decision: 'allow' }];
  function service(find: () => Promise<PolicyRecord | undefined>) {
    const store = { find } as unknown as ContentPolicyStore;
    return new ContentPolicyService(store, {} as ProjectService, systemClock, 30);
  }
  const record1 = { projectId: 'p', orgId: 'o', grid: gridOf(rules), version: 1, updatedBy: { userId: null, apiKeyId: null }, updatedAt: '' };

  it('keeps the grid while live, reads every time while not, and drops everything on invalidateAll', async () => {
    let reads = 0;
    const s = service(async () => (reads++, record1));
    let live = true;
    s.cacheOnlyWhile(() => live);
    await s.storeAccess('p');
    await s.storeAccess('p');
    expect(reads).toBe(1);
    live = false;
    await s.storeAccess('p');
    await s.storeAccess('p');
    expect(reads).toBe(3);
    live = true;
    await s.storeAccess('p');
    await s.storeAccess('p');
    expect(reads).toBe(4);
    s.invalidateAll();
    await s.storeAccess('p');
    expect(reads).toBe(5);
  });

  it('a read that began before an invalidation does not put what it read in the cache', async () => {
    let reads = 0;
    let release!: () => void;
    const s = service(async () => {
      reads++;
      if (reads === 1) await new Promise<void>((r) => (release = r));
      return record1;
    });
    const first = s.storeAccess('p');
    await waitFor(() => release !== undefined, 'the first read to start');
    s.invalidate('p'); // a change heard while the first read was under way
    release();
    await first;
    await s.storeAccess('p');
    expect(reads).toBe(2);
    await s.storeAccess('p');
    expect(reads).toBe(2);
  });
});
