/** The agent inventory: a discovered (shadow) agent, reviewed, classified and owned in the page; each write in its history. */
import { sendAgentRun } from '../../server/src/testing/otel-agent-run.js';
import { BASE, expect, guard, owner, person, project, signIn, test, unique, ingestKey } from './fixtures.js';

let p: string;
let agent: string;

test.beforeAll(async () => {
  p = await project();
  const key = await ingestKey(p);
  agent = unique('planner');
  await sendAgentRun({ base: BASE, format: 'json', key: key.key, agentId: agent });
  await expect.poll(async () => (await owner<{ assets: unknown[] }>('GET', `/assets?project_id=${p}`)).assets.length, { timeout: 15_000 }).toBe(1);
});

test('review, classify and own a shadow agent; the history names each write', async ({ page, context }) => {
  await signIn(context, await person('admin'));
  const clean = guard(page);
  await page.goto(`/p/${p}/agents?shadow=true`);
  const row = page.getByRole('region', { name: 'Agent inventory' }).getByRole('row').filter({ hasText: agent });
  await expect(row).toContainText('shadow');
  await expect(row).toContainText('unreviewed');
  await row.getByRole('link').first().click();
  await expect(page.getByRole('heading', { level: 1 })).toContainText(agent);
  const review = page.getByRole('form', { name: 'Review' });
  await review.getByLabel('Approval').selectOption({ label: 'approved' });
  await review.getByLabel('Risk tier').selectOption({ label: 'low' });
  await review.getByLabel('Review reason').fill('read its tools: harmless');
  await review.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('.facts')).toContainText('read its tools: harmless');
  const owners = page.getByRole('form', { name: 'Ownership' });
  await owners.getByLabel('Owning team').fill('support-eng');
  await owners.getByRole('button', { name: 'Save' }).click();
  await expect(page.locator('.facts')).toContainText('support-eng');
  const history = page.getByRole('table', { name: 'Versions of this agent' });
  await expect(history).toContainText('review');
  await expect(history).toContainText('ownership');
  await expect(history).toContainText('discovered');
  clean.expectNone();
  // A review without a reason is refused in the API's words.
  await review.getByRole('button', { name: 'Save' }).click();
  await expect(review.getByRole('alert')).toContainText('Not saved');
});

test('a member reads the agent but is offered no review', async ({ page, context }) => {
  await signIn(context, await person('member'));
  await page.goto(`/p/${p}/agents`);
  await page.getByRole('region', { name: 'Agent inventory' }).getByRole('link', { name: agent }).click();
  await expect(page.getByText('does not hold agents:write')).toBeVisible();
  await expect(page.getByRole('form', { name: 'Review' })).toHaveCount(0);
});
