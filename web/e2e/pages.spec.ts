/**
 * Every page of the UI, in both themes: no console error, no failed request, and no serious or critical
 * accessibility violation (axe). Pages show real data sent by the OpenTelemetry SDK.
 */
import { AxeBuilder } from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { sendAgentRun } from '../../server/src/testing/otel-agent-run.js';
import { BASE, expect, guard, invite, owner, person, project, signIn, test, unique, ingestKey } from './fixtures.js';

let p: string;
let runId: string;
let containment: string;
let assetId: string;

test.beforeAll(async () => {
  p = await project();
  const key = await ingestKey(p);
  runId = (await sendAgentRun({ base: BASE, format: 'json', key: key.key, agentId: unique('agent') })).root.spanContext().traceId;
  await expect.poll(async () => (await owner<{ runs: unknown[] }>('GET', `/agent-runs?project_id=${p}`)).runs.length, { timeout: 15_000 }).toBe(1);
  await expect.poll(async () => (await owner<{ assets: unknown[] }>('GET', `/assets?project_id=${p}`)).assets.length, { timeout: 15_000 }).toBe(1);
  assetId = (await owner<{ assets: { id: string }[] }>('GET', `/assets?project_id=${p}`)).assets[0].id;
  containment = (await owner<{ id: string }>('POST', `/quarantines?project_id=${p}`, { observation_key: unique('bot'), reason: 'a look at every page' }, 201)).id;
});

async function axe(page: Page) {
  const { violations } = await new AxeBuilder({ page }).analyze();
  const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
  expect(bad.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
}

for (const theme of ['light', 'dark'] as const) {
  test.describe(`${theme} theme`, () => {
    test.beforeEach(async ({ page }) => {
      await page.addInitScript((t) => localStorage.setItem('svc.theme', t), theme);
    });

    test('signed-in pages', async ({ page, context }) => {
      await signIn(context, await person('admin'));
      const pages: [string, string | RegExp][] = [
        [`/p/${p}`, 'Overview'],
        [`/p/${p}/runs`, 'Agent runs'],
        [`/p/${p}/metrics`, 'Metrics'],
        [`/p/${p}/logs`, 'Logs'],
        [`/p/${p}/traces`, 'Traces'],
        [`/p/${p}/traces/${runId}?span=`, `Trace ${runId}`],
        [`/p/${p}/sessions/conv-42`, 'Session conv-42'],
        [`/p/${p}/agents`, 'Agents'],
        [`/p/${p}/agents/${assetId}`, /^agent-/],
        [`/p/${p}/signals`, 'Review signals'],
        [`/p/${p}/containments`, 'Containments'],
        [`/p/${p}/policy`, 'Content policy'],
        [`/p/${p}/containments/${containment}`, 'Containment pending'],
        [`/p/${p}/runs/${runId}?step=`, `Run ${runId}`],
        ['/settings/keys', 'API keys'],
        ['/settings/members', 'Members'],
        ['/settings/projects', 'Projects'],
        ['/settings/pricing', 'Model prices'],
        ['/settings/budgets', 'Evaluation budget'],
        ['/device', 'Connect a device'],
        [`/p/${p}/no-such-page`, 'Page not found'],
      ];
      for (const [url, heading] of pages) {
        const clean = guard(page);
        await page.goto(url);
        await expect(page.getByRole('heading', { level: 1 })).toHaveText(heading);
        await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
        await expect(page.getByRole('status').filter({ hasText: 'Loading' })).toHaveCount(0);
        await axe(page);
        clean.expectNone();
      }
    });

    test('signed-out pages', async ({ page }) => {
      const { token } = await invite('member');
      for (const [url, heading] of [['/login', 'Sign in to svc'], [`/invitations/${token}`, 'Accept your invitation']]) {
        const clean = guard(page);
        await page.goto(url);
        await expect(page.getByRole('heading', { level: 1 })).toHaveText(heading);
        await axe(page);
        clean.expectNone();
      }
    });
  });
}

test('the theme switch flips the theme and keeps it across pages', async ({ page, context }) => {
  await signIn(context, await person('member'));
  await page.addInitScript(() => localStorage.setItem('svc.theme', 'light'));
  await page.goto(`/p/${p}`);
  await page.getByRole('button', { name: 'Switch between light and dark theme' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.getByRole('link', { name: 'Agent runs' }).click();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
});

test('keyboard: skip link first, then the navigation, all reachable with Tab', async ({ page, context }) => {
  await signIn(context, await person('member'));
  await page.goto(`/p/${p}`);
  await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
  await page.keyboard.press('Tab');
  await expect(page.getByRole('link', { name: 'Skip to content' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page).toHaveURL(/#main$/);
});
