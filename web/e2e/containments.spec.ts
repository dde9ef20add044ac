/**
 * Two people contain an agent in two browsers: a member requests, the page does not let them approve their
 * own request, an admin approves in another browser; the agent's key (which sent its runs through the
 * OpenTelemetry SDK) is refused from then on, and the page shows the key reached and its enforcement.
 */
import { sendAgentRun } from '../../server/src/testing/otel-agent-run.js';
import { BASE, expect, guard, owner, person, project, signIn, test, unique, ingestKey } from './fixtures.js';

test('a member requests, an admin approves in another browser, the agent\'s key is refused', async ({ browser }) => {
  const p = await project();
  const agentKey = await ingestKey(p);
  const agent = unique('refund-bot');
  await sendAgentRun({ base: BASE, format: 'protobuf', key: agentKey.key, agentId: agent });

  const bobContext = await browser.newContext({ baseURL: BASE });
  const aliceContext = await browser.newContext({ baseURL: BASE });
  try {
    await signIn(bobContext, await person('member', 'Bob'));
    await signIn(aliceContext, await person('admin', 'Alice'));
    const bob = await bobContext.newPage();
    const bobClean = guard(bob);
    await bob.goto(`/p/${p}/containments?observation_key=${agent}`);
    await expect(bob.getByLabel('Target', { exact: true })).toHaveValue(agent);
    await bob.getByLabel('Reason').fill('issuing refunds nobody asked for');
    await bob.getByRole('button', { name: 'Request containment' }).click();
    await expect(bob).toHaveURL(new RegExp(`/p/${p}/containments/[0-9a-f-]{36}$`));
    await expect(bob.getByRole('heading', { level: 1 })).toContainText('pending');
    await expect(bob.getByTestId('two-person')).toBeVisible();
    await expect(bob.getByRole('button', { name: 'Approve and enforce' })).toHaveCount(0);
    bobClean.expectNone();

    const alice = await aliceContext.newPage();
    const aliceClean = guard(alice);
    await alice.goto(bob.url());
    await expect(alice.getByText('issuing refunds nobody asked for')).toBeVisible();
    await alice.getByRole('button', { name: 'Approve and enforce' }).click();
    await expect(alice.getByRole('heading', { level: 1 })).toContainText('active');
    const reached = alice.getByRole('table', { name: 'Keys reached by this containment' });
    await expect(reached).toContainText(agentKey.id);
    await expect(reached).toContainText('verified');
    aliceClean.expectNone();

    // The agent's next export is refused as a revoked key's would be (401), and its key still reads nothing new.
    const exported = await fetch(`${BASE}/v1/traces`, { method: 'POST', headers: { 'x-svc-api-key': agentKey.key, 'content-type': 'application/json' }, body: '{"resourceSpans":[]}' });
    expect(exported.status).toBe(401);

    // Bob sees it active, and the list shows it.
    await bob.goto(`/p/${p}/containments?status=active`);
    await expect(bob.getByRole('region', { name: 'Containment requests' })).toContainText('issuing refunds nobody asked for');
  } finally {
    await bobContext.close();
    await aliceContext.close();
  }
});

test('an admin rejects someone else\'s request with a reason; a request with no target is refused in the API\'s words', async ({ page, context }) => {
  const p = await project();
  const requested = await owner<{ id: string }>('POST', `/quarantines?project_id=${p}`, { observation_key: unique('bot'), reason: 'looks odd' }, 201);
  await signIn(context, await person('admin'));
  await page.goto(`/p/${p}/containments/${requested.id}`);
  await page.getByLabel('Reason to reject').fill('false alarm');
  await page.getByRole('button', { name: 'Reject' }).click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText('withdrawn');
  await expect(page.getByText('false alarm')).toBeVisible();

  await page.goto(`/p/${p}/containments`);
  await page.getByLabel('Target', { exact: true }).fill('   ');
  await page.getByLabel('Reason').fill('x');
  await page.getByRole('button', { name: 'Request containment' }).click();
  await expect(page.getByRole('alert')).toContainText('Not requested');
});
