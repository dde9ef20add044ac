/** Settings pages: invite a person from the page (they accept in their own browser), change their role, remove them; create a project and set its sampling rate. */
import { BASE, PASSWORD, expect, guard, person, signIn, test, unique } from './fixtures.js';

test('invite from the page; the invitee accepts in another browser; role changed, then removed', async ({ page, context, browser }) => {
  await signIn(context, await person('admin', 'Admin'));
  const clean = guard(page);
  await page.goto('/settings/members');
  const email = `${unique('new')}@example.com`;
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Invite' }).click();
  const link = (await page.getByTestId('invitation-link').textContent())!;
  expect(link).toMatch(new RegExp(`^${BASE}/invitations/`));
  await expect(page.getByRole('region', { name: 'Invitations' }).getByRole('row').filter({ hasText: email })).toContainText('pending');

  const theirs = await browser.newContext({ baseURL: BASE });
  try {
    const invitee = await theirs.newPage();
    await invitee.goto(link);
    await invitee.getByLabel('Your name').fill('Newcomer');
    await invitee.getByLabel('Choose a password').fill(PASSWORD);
    await invitee.getByRole('button', { name: 'Accept and sign in' }).click();
    await expect(invitee.getByRole('heading', { name: 'Overview' })).toBeVisible();
  } finally {
    await theirs.close();
  }

  await page.reload();
  const row = page.getByRole('region', { name: 'People' }).getByRole('row').filter({ hasText: email });
  await expect(row).toContainText('Newcomer');
  await row.getByLabel(`Role of ${email}`).selectOption('admin');
  await expect(row.getByLabel(`Role of ${email}`)).toHaveValue('admin');
  page.once('dialog', (d) => void d.accept());
  await row.getByRole('button', { name: `Remove ${email}` }).click();
  await expect(page.getByRole('region', { name: 'People' }).getByRole('row').filter({ hasText: email })).toHaveCount(0);
  clean.expectNone();
});

test('create a project and change its sampling rate; an out-of-range rate is refused in the API\'s words', async ({ page, context }) => {
  await signIn(context, await person('admin'));
  const clean = guard(page);
  await page.goto('/settings/projects');
  const name = unique('checkout');
  await page.getByLabel('Name').fill(name);
  await page.getByRole('button', { name: 'Create project' }).click();
  const row = page.getByRole('region', { name: 'Project list' }).getByRole('row').filter({ hasText: name });
  await expect(row).toBeVisible();
  await row.getByLabel(`Sampling rate of ${name}`).fill('0.25');
  const saved = page.waitForResponse((r) => r.request().method() === 'PATCH' && r.url().includes('/api/v1/projects/'));
  await row.getByRole('button', { name: `Save the rate of ${name}` }).click();
  expect((await saved).status()).toBe(200);
  await page.reload();
  await expect(page.getByRole('region', { name: 'Project list' }).getByRole('row').filter({ hasText: name }).getByLabel(`Sampling rate of ${name}`)).toHaveValue('0.25');
  clean.expectNone();
  const again = page.getByRole('region', { name: 'Project list' }).getByRole('row').filter({ hasText: name });
  await again.getByLabel(`Sampling rate of ${name}`).fill('7');
  await again.getByRole('button', { name: `Save the rate of ${name}` }).click();
  await expect(again.getByRole('alert')).toContainText('sampling_rate');
});
