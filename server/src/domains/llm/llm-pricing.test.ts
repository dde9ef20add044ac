/** The LLM model price table over HTTP (`/api/v1/llm/pricing`) and its lookup port, on both control stores. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixedClock, projectWithKey, testApp, type TestApp } from '../../testing/app.js';
import { addPerson, signIn } from '../../testing/people.js';
import { LlmPricingService } from './service.js';

const URL = '/api/v1/llm/pricing';
const GPT = { model: 'gpt-4o', input_usd_per_million_tokens: 2.5, output_usd_per_million_tokens: 10 };

describe.each(['sqlite', 'postgres'] as const)('LLM pricing (%s)', (dialect) => {
  let t: TestApp;
  const clock = fixedClock('2026-06-01T00:00:00.000Z');
  beforeAll(async () => {
    t = await testApp({ dialect, clock });
  });
  afterAll(async () => t.close());

  const put = (key: string | undefined, payload: unknown, query = '') =>
    t.call({ method: 'PUT', url: `${URL}${query}`, key, payload: payload as object });
  const list = async (key: string, query = '') => {
    const res = await t.call({ method: 'GET', url: `${URL}${query}`, key });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { prices: Record<string, unknown>[]; next_cursor: string | null };
  };
  const withRead = (scopes: string[] = []) => projectWithKey(t, ['llm:read', 'llm:write', ...scopes]);

  it('PUT sets a price and answers 200 with the entry; updated_by comes from the credential', async () => {
    const a = await withRead();
    const res = await put(a.key, { ...GPT, provider: 'openai' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({
      project_id: a.projectId,
      model: 'gpt-4o',
      provider: 'openai',
      input_usd_per_million_tokens: 2.5,
      output_usd_per_million_tokens: 10,
      updated_at: '2026-06-01T00:00:00.000Z',
      updated_by: { user_id: null, api_key_id: a.keyId },
    });
    expect((await list(a.key)).prices).toEqual([res.json()]);
  });

  it('provider omitted is the any-provider entry (null)', async () => {
    const a = await withRead();
    expect((await put(a.key, GPT)).json().provider).toBeNull();
    expect((await put(a.key, { ...GPT, model: 'm2', provider: null })).json().provider).toBeNull();
  });

  it('an identical PUT is fine: it answers the stored entry and changes nothing, not even updated_at', async () => {
    const a = await withRead();
    const first = (await put(a.key, GPT)).json();
    clock.advance(60_000);
    const again = await put(a.key, GPT);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first);
    const changed = (await put(a.key, { ...GPT, output_usd_per_million_tokens: 12.000001 })).json();
    expect(changed).toMatchObject({ output_usd_per_million_tokens: 12.000001, updated_at: '2026-06-01T00:01:00.000Z' });
    expect((await list(a.key)).prices).toEqual([changed]);
  });

  it('prices keep 6 decimals exactly, from 0 to 10,000', async () => {
    const a = await withRead();
    for (const [i, usd] of [0, 0.000001, 0.15, 1234.567891, 10_000].entries()) {
      const res = await put(a.key, { model: `m${i}`, input_usd_per_million_tokens: usd, output_usd_per_million_tokens: usd });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().input_usd_per_million_tokens).toBe(usd);
    }
    expect((await list(a.key)).prices.map((p) => p.output_usd_per_million_tokens)).toEqual([0, 0.000001, 0.15, 1234.567891, 10_000]);
  });

  describe('validation: 400 invalid_request and nothing changes', () => {
    const cases: [string, unknown][] = [
      ['a negative price', { ...GPT, input_usd_per_million_tokens: -1 }],
      ['a price above 10,000', { ...GPT, output_usd_per_million_tokens: 10_000.000001 }],
      ['too many decimal places', { ...GPT, input_usd_per_million_tokens: 0.1234567 }],
      ['a price below a micro-dollar', { ...GPT, input_usd_per_million_tokens: 1e-7 }],
      ['a price sent as a string', { ...GPT, input_usd_per_million_tokens: '2.5' }],
      ['a null price', { ...GPT, output_usd_per_million_tokens: null }],
      ['a missing price', { model: 'gpt-4o', input_usd_per_million_tokens: 1 }],
      ['a missing model', { input_usd_per_million_tokens: 1, output_usd_per_million_tokens: 1 }],
      ['an empty model', { ...GPT, model: '' }],
      ['an empty provider', { ...GPT, provider: '' }],
      ['an unknown field', { ...GPT, currency: 'EUR' }],
      ['project_id in the body', { ...GPT, project_id: 'x' }],
      ['an actor field (updated_by)', { ...GPT, updated_by: { user_id: 'someone' } }],
      ['an actor field (updated_at)', { ...GPT, updated_at: '2020-01-01T00:00:00Z' }],
      ['an array', [GPT]],
    ];
    it.each(cases)('%s', async (_what, payload) => {
      const a = await withRead();
      await put(a.key, GPT);
      const before = await list(a.key);
      const res = await put(a.key, payload);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toBe('invalid_request');
      expect(await list(a.key)).toEqual(before);
    });

    it('the actor field is named in the message', async () => {
      const a = await withRead();
      expect((await put(a.key, { ...GPT, updated_by: 'me' })).json().message).toBe('updated_by is taken from the credential and cannot be sent');
    });

    it('a non-finite number (1e400 reads as Infinity) is refused', async () => {
      const a = await withRead();
      const raw = '{"model":"gpt-4o","input_usd_per_million_tokens":1e400,"output_usd_per_million_tokens":1}';
      const res = await t.call({ method: 'PUT', url: URL, key: a.key, headers: { 'content-type': 'application/json' }, payload: raw });
      expect(res.statusCode).toBe(400);
      expect((await list(a.key)).prices).toEqual([]);
    });

    it('a bad cursor, limit or unknown query field is refused', async () => {
      const a = await withRead();
      for (const q of ['?cursor=nope!', '?limit=0', '?limit=201', '?provider=x', `?cursor=${Buffer.from('[1,"x"]').toString('base64url')}`])
        expect((await t.call({ method: 'GET', url: `${URL}${q}`, key: a.key })).statusCode, q).toBe(400);
    });
  });

  it("another project's prices are invisible", async () => {
    const a = await withRead();
    const b = await withRead();
    await put(a.key, GPT);
    expect((await list(b.key)).prices).toEqual([]);
    // An organization-level credential sees each project's own table.
    expect((await list(t.ownerKey, `?project_id=${b.projectId}`)).prices).toEqual([]);
    expect((await list(t.ownerKey, `?project_id=${a.projectId}`)).prices).toHaveLength(1);
    expect(await t.ctx.llmPricing.priceOf(b.projectId, null, 'gpt-4o')).toBeUndefined();
  });

  it('an organization-level credential must name the project (400), and an unknown project is 404', async () => {
    expect((await t.call({ method: 'GET', url: URL })).statusCode).toBe(400);
    expect((await put(undefined, GPT)).statusCode).toBe(400);
    expect((await put(undefined, GPT, '?project_id=00000000-0000-0000-0000-000000000000')).statusCode).toBe(404);
    const ok = await put(undefined, GPT, `?project_id=${t.projectId}`);
    expect(ok.statusCode).toBe(200);
    expect(ok.json().project_id).toBe(t.projectId);
  });

  it('a project-scoped key naming another project is 403 and nothing changes', async () => {
    const a = await withRead();
    const b = await withRead();
    await put(b.key, GPT);
    const before = await list(b.key);
    const q = `?project_id=${b.projectId}`;
    for (const res of [
      await t.call({ method: 'GET', url: `${URL}${q}`, key: a.key }),
      await put(a.key, { ...GPT, input_usd_per_million_tokens: 0 }, q),
      await t.call({ method: 'DELETE', url: `${URL}${q}&model=gpt-4o`, key: a.key }),
    ]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toBe('permission_denied');
    }
    expect(await list(b.key)).toEqual(before);
    // Its own project, named or not, is fine.
    expect((await list(a.key, `?project_id=${a.projectId}`)).prices).toEqual([]);
  });

  it('scopes: reading needs llm:read, writing llm:write (403 naming the scope, nothing changes)', async () => {
    const writer = await withRead();
    const reader = await projectWithKey(t, ['llm:read']);
    const other = await projectWithKey(t, ['projects:read', 'llm:write']);
    const noRead = await t.call({ method: 'GET', url: URL, key: other.key });
    expect(noRead.statusCode).toBe(403);
    expect(noRead.json().message).toContain('llm:read');
    await put(reader.key, GPT).then((r) => {
      expect(r.statusCode).toBe(403);
      expect(r.json().message).toContain('llm:write');
    });
    expect((await t.call({ method: 'DELETE', url: `${URL}?model=gpt-4o`, key: reader.key })).statusCode).toBe(403);
    expect((await list(reader.key)).prices).toEqual([]);
    expect((await put(writer.key, GPT)).statusCode).toBe(200);
  });

  it('roles: a member reads prices but cannot set them; an admin can, and is named in updated_by', async () => {
    const member = await signIn(t, await addPerson(t, 'member'));
    const admin = await addPerson(t, 'admin');
    const adminBrowser = await signIn(t, admin);
    const q = `?project_id=${t.projectId}`;
    expect((await member.call({ method: 'GET', url: `${URL}${q}` })).statusCode).toBe(200);
    const refused = await member.call({ method: 'PUT', url: `${URL}${q}`, payload: { ...GPT, model: 'by-member' } });
    expect(refused.statusCode).toBe(403);
    const set = await adminBrowser.call({ method: 'PUT', url: `${URL}${q}`, payload: { ...GPT, model: 'by-admin' } });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().updated_by).toEqual({ user_id: admin.userId, api_key_id: null });
  });

  it('the lookup: a provider-specific price beats the any-provider one; a step without provider uses the any-provider one', async () => {
    const a = await withRead();
    await put(a.key, { model: 'claude', input_usd_per_million_tokens: 3, output_usd_per_million_tokens: 15 });
    await put(a.key, { model: 'claude', provider: 'aws.bedrock', input_usd_per_million_tokens: 3.3, output_usd_per_million_tokens: 16.5 });
    await put(a.key, { model: 'only-openai', provider: 'openai', input_usd_per_million_tokens: 0.000001, output_usd_per_million_tokens: 1 });
    const pricing = t.ctx.llmPricing;
    expect(await pricing.priceOf(a.projectId, 'aws.bedrock', 'claude')).toEqual({ inputNanosPerToken: 3300, outputNanosPerToken: 16500 });
    expect(await pricing.priceOf(a.projectId, 'anthropic', 'claude')).toEqual({ inputNanosPerToken: 3000, outputNanosPerToken: 15000 });
    expect(await pricing.priceOf(a.projectId, null, 'claude')).toEqual({ inputNanosPerToken: 3000, outputNanosPerToken: 15000 });
    expect(await pricing.priceOf(a.projectId, null, 'only-openai')).toBeUndefined();
    expect(await pricing.priceOf(a.projectId, 'openai', 'Claude')).toBeUndefined(); // exact model string
    expect(
      await pricing.pricesOf(a.projectId, [
        { provider: 'openai', model: 'only-openai' },
        { provider: 'aws.bedrock', model: 'claude' },
        { provider: '', model: 'claude' },
        { provider: 'x', model: 'unknown' },
      ]),
    ).toEqual([
      { inputNanosPerToken: 0.001, outputNanosPerToken: 1000 },
      { inputNanosPerToken: 3300, outputNanosPerToken: 16500 },
      { inputNanosPerToken: 3000, outputNanosPerToken: 15000 },
      undefined,
    ]);
    expect(await pricing.pricesOf(a.projectId, [])).toEqual([]);
  });

  it('DELETE removes exactly the named entry (204); an absent one is 404', async () => {
    const a = await withRead();
    await put(a.key, GPT);
    await put(a.key, { ...GPT, provider: 'openai' });
    const del = (q: string) => t.call({ method: 'DELETE', url: `${URL}?${q}`, key: a.key });
    expect((await del('model=gpt-4o&provider=azure')).statusCode).toBe(404);
    expect((await del('model=nothing')).json()).toEqual({ error: 'not_found', message: 'model price not found' });
    expect((await del('model=gpt-4o')).statusCode).toBe(204);
    expect((await list(a.key)).prices.map((p) => p.provider)).toEqual(['openai']);
    expect((await del('model=gpt-4o')).statusCode).toBe(404);
    expect((await del('model=gpt-4o&provider=openai')).statusCode).toBe(204);
    expect((await list(a.key)).prices).toEqual([]);
    expect((await t.call({ method: 'DELETE', url: URL, key: a.key })).statusCode).toBe(400); // model is required
  });

  it('list pages with limit and cursor, ordered by model then provider, and filters by model', async () => {
    const a = await withRead();
    for (const [model, provider] of [['b', null], ['a', 'z'], ['a', null], ['c', null], ['a', 'm']] as const)
      await put(a.key, { ...GPT, model, provider });
    const seen: string[] = [];
    let cursor: string | null = '';
    let pages = 0;
    while (cursor !== null) {
      const p = await list(a.key, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...p.prices.map((e) => `${e.model}/${e.provider}`));
      cursor = p.next_cursor;
      pages++;
    }
    expect(seen).toEqual(['a/null', 'a/m', 'a/z', 'b/null', 'c/null']);
    expect(pages).toBe(3);
    expect((await list(a.key, '?model=a')).prices.map((e) => e.provider)).toEqual([null, 'm', 'z']);
  });

  it('writes are audited with the project; refusals for permission too', async () => {
    const a = await withRead();
    const reader = await projectWithKey(t, ['llm:read']);
    await put(a.key, { ...GPT, model: 'audited' });
    await put(reader.key, GPT);
    // The audit hook writes after the answer is sent: wait for both records.
    type Event = { result: string; project_id: string };
    let events: Event[] = [];
    for (let i = 0; i < 50; i++) {
      events = (await t.call({ method: 'GET', url: '/api/v1/account/audit-events?resource=llm.pricing&limit=200' })).json().audit_events;
      if (events.some((e) => e.project_id === reader.projectId) && events.some((e) => e.project_id === a.projectId)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(events.find((e) => e.project_id === reader.projectId)).toMatchObject({ resource: 'llm.pricing', action: 'update', result: 'denied' });
    expect(events.find((e) => e.project_id === a.projectId)).toMatchObject({ resource: 'llm.pricing', action: 'update', result: 'success' });
  });

  it('a project holds a bounded number of entries: a new one beyond it is 409, replacing one is fine', async () => {
    const a = await withRead();
    const svc = new LlmPricingService(t.ctx.control, t.ctx.clock, 2);
    const principal = (await t.ctx.apiKeys.authenticate(a.key))!;
    const project = { id: a.projectId, orgId: t.orgId };
    const input = (model: string, usd = 1) => ({ model, input_usd_per_million_tokens: usd, output_usd_per_million_tokens: usd });
    await svc.put(principal, project, input('a'));
    await svc.put(principal, project, input('b'));
    await expect(svc.put(principal, project, input('c'))).rejects.toMatchObject({ status: 409 });
    await expect(svc.put(principal, project, input('b', 2))).resolves.toMatchObject({ inputMicrosPerMillion: 2_000_000 });
    expect(await t.ctx.control.llmPrices.count(a.projectId)).toBe(2);
  });

  it('deleting a project removes its prices', async () => {
    const a = await withRead();
    await put(a.key, GPT);
    expect(await t.ctx.control.llmPrices.count(a.projectId)).toBe(1);
    expect((await t.call({ method: 'DELETE', url: `/api/v1/projects/${a.projectId}` })).statusCode).toBe(204);
    expect(await t.ctx.control.llmPrices.count(a.projectId)).toBe(0);
  });
});
