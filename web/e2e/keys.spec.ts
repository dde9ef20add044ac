/** Minting an API key in the page: the secret is shown once, works, is never shown again; revoking it ends it. */
import { BASE, expect, guard, person, signIn, test, unique } from './fixtures.js';

test('mint a key and see the secret once; it works; revoke it and it is refused', async ({ page, context }) => {
  await signIn(context, await person('admin'));
  const clean = guard(page);
  await page.goto('/settings/keys');
  const name = unique('ci-reader');
  await page.getByLabel('Name').fill(name);
  await page.getByLabel('metrics:read').check();
  await page.getByRole('button', { name: 'Create key' }).click();
  const secret = (await page.getByTestId('minted-key').textContent())!;
  expect(secret).toMatch(/^svc_/);
  await expect(page.getByText('it is shown this once')).toBeVisible();
  const row = page.getByRole('row').filter({ hasText: name });
  await expect(row).toContainText('metrics:read');
  await expect(row).toContainText('active');

  const use = () => fetch(`${BASE}/api/v1/metrics/names`, { headers: { 'x-svc-api-key': secret } });
  expect((await use()).status).toBe(200);

  await page.reload();
  await expect(page.getByRole('row').filter({ hasText: name })).toBeVisible();
  expect(await page.content()).not.toContain(secret);
  await expect(page.getByTestId('minted-key')).toHaveCount(0);

  page.once('dialog', (d) => void d.accept());
  await page.getByRole('row').filter({ hasText: name }).getByRole('button', { name: `Revoke ${name}` }).click();
  await expect(page.getByRole('row').filter({ hasText: name })).toContainText('revoked');
  expect((await use()).status).toBe(401);
  clean.expectNone();
});

test('a key without a scope is refused with the API\'s message beside the form, and nothing is minted', async ({ page, context }) => {
  await signIn(context, await person('admin'));
  await page.goto('/settings/keys');
  const name = unique('no-scopes');
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Create key' }).click();
  await expect(page.getByRole('alert')).toContainText('Not created');
  await expect(page.getByTestId('minted-key')).toHaveCount(0);
  await expect(page.getByRole('row').filter({ hasText: name })).toHaveCount(0);
});
