/** The content-policy grid: an admin allows a cell and saves at the version read; a stale page gets the API's 409; a member reads only. */
import { expect, guard, owner, person, project, signIn, test } from './fixtures.js';

test('allow a cell, save at the version read; a change made meanwhile is refused (409) and nothing is overwritten', async ({ page, context }) => {
  const p = await project();
  await signIn(context, await person('admin'));
  const clean = guard(page);
  await page.goto(`/p/${p}/policy`);
  await expect(page.getByText('This project has no policy yet')).toBeVisible();
  await page.getByLabel('model transcript at store').selectOption('allow');
  await page.getByLabel('model transcript at read').selectOption('allow_metadata');
  await page.getByRole('button', { name: 'Save the policy' }).click();
  await expect(page.getByText('Version 1, changed')).toBeVisible();
  const stored = await owner<{ version: number; rules: { content_class: string; sink: string; decision: string }[] }>('GET', `/projects/${p}/content-policy`);
  expect(stored.version).toBe(1);
  expect(stored.rules.filter((r) => r.decision !== 'deny')).toEqual([
    { content_class: 'model_transcript', sink: 'store', decision: 'allow' },
    { content_class: 'model_transcript', sink: 'read', decision: 'allow_metadata' },
  ]);
  clean.expectNone();

  // Someone else changes it; this page still holds version 1.
  await owner('PUT', `/projects/${p}/content-policy`, { rules: [{ content_class: 'tool_arguments', sink: 'store', decision: 'allow' }] });
  await page.getByLabel('memory item at store').selectOption('allow');
  await page.getByRole('button', { name: 'Save the policy' }).click();
  await expect(page.getByRole('alert')).toContainText('Not saved');
  expect((await owner<{ version: number }>('GET', `/projects/${p}/content-policy`)).version).toBe(2);
});

test('a member reads the grid without controls', async ({ page, context }) => {
  const p = await project();
  await signIn(context, await person('member'));
  await page.goto(`/p/${p}/policy`);
  await expect(page.getByRole('table', { name: 'Content policy grid' })).toContainText('deny');
  await expect(page.getByText('does not hold governance:write')).toBeVisible();
});
