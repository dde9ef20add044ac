/** Prices and the evaluation budget: a run's cost is unavailable until its model is priced in the page, then shown; the budget page says when none is set. */
import { CHAT_USAGE, sendAgentRun } from '../../server/src/testing/otel-agent-run.js';
import { BASE, expect, guard, ingestKey, person, project, signIn, test, unique } from './fixtures.js';

test('an unpriced run says why it has no cost; pricing its model in the page prices the run already stored', async ({ page, context }) => {
  const p = await project();
  const runId = (await sendAgentRun({ base: BASE, format: 'json', key: (await ingestKey(p)).key, agentId: unique('agent') })).root.spanContext().traceId;
  await signIn(context, await person('admin'));
  const clean = guard(page);
  await expect.poll(async () => (await page.request.get(`/api/v1/agent-runs/${runId}?project_id=${p}`)).status(), { timeout: 15_000 }).toBe(200);
  await page.goto(`/p/${p}/runs/${runId}`);
  await expect(page.getByTestId('run-cost')).toContainText('unavailable: a model has no price');
  await page.goto(`/settings/pricing?project=${p}`);
  await page.getByRole('textbox', { name: /^Model/ }).fill(CHAT_USAGE.model);
  await page.getByLabel('Input $ per million tokens').fill('2.5');
  await page.getByLabel('Output $ per million tokens').fill('10');
  await page.getByRole('button', { name: 'Save price' }).click();
  await expect(page.getByRole('region', { name: 'Price list' })).toContainText(CHAT_USAGE.model);
  await page.goto(`/p/${p}/runs/${runId}`);
  await expect(page.getByTestId('run-cost')).toHaveText('$0.00650');
  clean.expectNone();
});

test('the evaluation budget: read, set in dollars, shown against today\'s spend', async ({ page, context }) => {
  await signIn(context, await person('admin'));
  const clean = guard(page);
  await page.goto('/settings/budgets');
  await page.getByLabel(/^Model-judge spend per day/).fill('2.5');
  await page.getByRole('button', { name: 'Save budget' }).click();
  await expect(page.locator('.facts')).toContainText('of $2.50 spent on model judges');
  await expect(page.getByText('No budget is set')).toHaveCount(0);
  clean.expectNone();
});
