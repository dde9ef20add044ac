/** The LLM price store's contract, on both engines: embedded SQLite and the PostgreSQL server. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LlmPriceRecord } from '../../domains/llm/store.js';
import { openTestControl } from '../../testing/app.js';
import type { ControlStore } from './stores.js';

const price = (over: Partial<LlmPriceRecord>): LlmPriceRecord => ({
  orgId: 'o1',
  projectId: 'p1',
  model: 'gpt-4o',
  provider: null,
  inputMicrosPerMillion: 2_500_000,
  outputMicrosPerMillion: 10_000_000,
  updatedAt: '2026-01-01T00:00:00.000Z',
  updatedByUserId: 'u1',
  updatedByApiKeyId: null,
  ...over,
});

describe.each(['sqlite', 'postgres'] as const)('LLM price store on %s', (dialect) => {
  let store: ControlStore;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    const t = await openTestControl(dialect);
    store = t.store;
    drop = t.drop;
  });
  afterAll(async () => drop());

  it('put inserts, then replaces the entry with the same (project, model, provider)', async () => {
    await store.llmPrices.put(price({}));
    expect(await store.llmPrices.find('p1', 'gpt-4o', null)).toEqual(price({}));
    const changed = price({ inputMicrosPerMillion: 1, updatedAt: '2026-01-02T00:00:00.000Z', updatedByUserId: null, updatedByApiKeyId: 'k1' });
    await store.llmPrices.put(changed);
    expect(await store.llmPrices.find('p1', 'gpt-4o', null)).toEqual(changed);
    expect(await store.llmPrices.count('p1')).toBe(1);
  });

  it('the any-provider entry and a provider entry of the same model are distinct', async () => {
    await store.llmPrices.put(price({ projectId: 'p2', provider: null, inputMicrosPerMillion: 1 }));
    await store.llmPrices.put(price({ projectId: 'p2', provider: 'openai', inputMicrosPerMillion: 2 }));
    expect((await store.llmPrices.find('p2', 'gpt-4o', null))?.inputMicrosPerMillion).toBe(1);
    expect((await store.llmPrices.find('p2', 'gpt-4o', 'openai'))?.inputMicrosPerMillion).toBe(2);
    expect(await store.llmPrices.find('p2', 'gpt-4o', 'azure')).toBeUndefined();
  });

  it('prices up to $10,000 per million tokens round-trip exactly (whole micro-dollars, beyond 32 bits)', async () => {
    await store.llmPrices.put(price({ projectId: 'p3', inputMicrosPerMillion: 10_000_000_000, outputMicrosPerMillion: 9_999_999_999 }));
    expect(await store.llmPrices.find('p3', 'gpt-4o', null)).toMatchObject({ inputMicrosPerMillion: 10_000_000_000, outputMicrosPerMillion: 9_999_999_999 });
  });

  it('findModels answers every entry of the named models in the project only', async () => {
    await store.llmPrices.put(price({ projectId: 'p4', model: 'a' }));
    await store.llmPrices.put(price({ projectId: 'p4', model: 'a', provider: 'x' }));
    await store.llmPrices.put(price({ projectId: 'p4', model: 'b' }));
    await store.llmPrices.put(price({ projectId: 'p4', model: 'c' }));
    await store.llmPrices.put(price({ projectId: 'p5', model: 'a' }));
    const rows = await store.llmPrices.findModels('p4', ['a', 'b', 'a', 'zz']);
    expect(rows.map((r) => `${r.projectId}/${r.model}/${r.provider}`).sort()).toEqual(['p4/a/null', 'p4/a/x', 'p4/b/null']);
    expect(await store.llmPrices.findModels('p4', [])).toEqual([]);
  });

  it('list is ordered by model then provider (any-provider first), filters by model, and continues after a position', async () => {
    for (const [model, provider] of [['m2', null], ['m1', 'z'], ['m1', null], ['m1', 'a']] as const)
      await store.llmPrices.put(price({ projectId: 'p6', model, provider }));
    const key = (r: LlmPriceRecord) => `${r.model}/${r.provider}`;
    const first = await store.llmPrices.list('p6', { limit: 2 });
    expect(first.map(key)).toEqual(['m1/null', 'm1/a', 'm1/z']); // limit + 1 rows
    const rest = await store.llmPrices.list('p6', { limit: 2, after: { model: 'm1', provider: 'a' } });
    expect(rest.map(key)).toEqual(['m1/z', 'm2/null']);
    const afterAny = await store.llmPrices.list('p6', { limit: 10, after: { model: 'm1', provider: null } });
    expect(afterAny.map(key)).toEqual(['m1/a', 'm1/z', 'm2/null']);
    expect((await store.llmPrices.list('p6', { limit: 10, model: 'm2' })).map(key)).toEqual(['m2/null']);
  });

  it('delete removes exactly one entry and says whether there was one', async () => {
    await store.llmPrices.put(price({ projectId: 'p7', provider: null }));
    await store.llmPrices.put(price({ projectId: 'p7', provider: 'openai' }));
    expect(await store.llmPrices.delete('p7', 'gpt-4o', null)).toBe(true);
    expect(await store.llmPrices.delete('p7', 'gpt-4o', null)).toBe(false);
    expect(await store.llmPrices.find('p7', 'gpt-4o', 'openai')).toBeDefined();
  });

  it("deleteProject removes every price of the project and no other project's", async () => {
    await store.llmPrices.put(price({ projectId: 'p8', model: 'a' }));
    await store.llmPrices.put(price({ projectId: 'p8', model: 'b', provider: 'x' }));
    await store.llmPrices.put(price({ projectId: 'p9', model: 'a' }));
    expect(await store.llmPrices.deleteProject('p8')).toBe(2);
    expect(await store.llmPrices.count('p8')).toBe(0);
    expect(await store.llmPrices.count('p9')).toBe(1);
  });

  it('takes part in transactions', async () => {
    await expect(
      store.transaction(async (tx) => {
        await tx.llmPrices.put(price({ projectId: 'p10' }));
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect(await store.llmPrices.count('p10')).toBe(0);
  });
});
