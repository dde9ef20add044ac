/**
 * The review-signal inbox: an agent nobody registered (its runs sent by the OpenTelemetry SDK) opens a
 * shadow-asset signal; an admin acknowledges it, then dismisses it with a reason; a member only reads.
 */
import { sendAgentRun } from '../../server/src/testing/otel-agent-run.js';
import { BASE, expect, guard, owner, person, project, signIn, test, unique, ingestKey } from './fixtures.js';

let p: string;
let agent: string;

test.beforeAll(async () => {
  p = await project();
  const key = await ingestKey(p);
  agent = unique('shadowy');
  await sendAgentRun({ base: BASE, format: 'json', key: key.key, agentId: agent });
  await expect
    .poll(async () => (await owner<{ review_signals: { subject_ref: string }[] }>('GET', `/review-signals?project_id=${p}`)).review_signals.map((s) => s.subject_ref), { timeout: 15_000 })
    .toContain(agent);
});

test('acknowledge, then dismiss with a reason; the dismissed signal leaves the default view and keeps its reason', async ({ page, context }) => {
  await signIn(context, await person('admin'));
  const clean = guard(page);
  await page.goto(`/p/${p}/signals`);
  const row = page.getByRole('region', { name: 'Signals', exact: true }).getByRole('row').filter({ hasText: agent });
  await expect(row).toContainText('shadow asset');
  await expect(row).toContainText('open');
  await row.getByRole('button', { name: `Acknowledge ${agent}` }).click();
  await expect(row).toContainText('acknowledged');
  await row.getByRole('button', { name: `Dismiss… ${agent}` }).click();
  await page.getByLabel('Reason for dismissing').fill('our staging bot, registered next week');
  await page.getByRole('button', { name: 'Dismiss', exact: true }).click();
  await expect(page.getByRole('region', { name: 'Signals', exact: true }).getByRole('row').filter({ hasText: agent })).toHaveCount(0);
  await page.goto(`/p/${p}/signals?status=REVIEW_SIGNAL_STATUS_DISMISSED`);
  await expect(page.getByRole('region', { name: 'Signals', exact: true }).getByRole('row').filter({ hasText: agent })).toContainText('our staging bot, registered next week');
  clean.expectNone();
});

test('a member reads the inbox but is offered no action', async ({ page, context }) => {
  await signIn(context, await person('member'));
  await page.goto(`/p/${p}/signals?status=any`);
  await expect(page.getByRole('region', { name: 'Signals', exact: true })).toContainText(agent);
  await expect(page.getByRole('button', { name: /Acknowledge/ })).toHaveCount(0);
});
