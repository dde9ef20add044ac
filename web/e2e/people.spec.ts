/** Signing in, out, and accepting an invitation, as a person does it in the browser. */
import { PASSWORD, expect, guard, invite, person, test } from './fixtures.js';

test('accept an invitation: set a name and a password, land signed in on the project overview', async ({ page }) => {
  const { email, token } = await invite('member');
  await page.goto(`/invitations/${token}`);
  await page.getByLabel('Your name').fill('Ada Lovelace');
  await page.getByLabel('Choose a password').fill('short');
  await page.getByRole('button', { name: 'Accept and sign in' }).click();
  // The API's own refusal, next to the form.
  await expect(page.getByRole('alert')).toContainText('The invitation was not accepted');
  await page.getByLabel('Choose a password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Accept and sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Overview' })).toBeVisible();
  await expect(page).toHaveURL(/\/p\/[0-9a-f-]{36}$/);
  await expect(page.getByTitle(email)).toHaveText('Ada Lovelace');
  // The link is single use.
  await page.context().clearCookies();
  await page.goto(`/invitations/${token}`);
  await page.getByLabel('Your name').fill('Ada again');
  await page.getByLabel('Choose a password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Accept and sign in' }).click();
  await expect(page.getByRole('alert')).toContainText('The invitation was not accepted');
});

test('sign in comes back to the page asked for; a wrong password shows the API\'s message; sign out ends the session', async ({ page }) => {
  const who = await person('member');
  await page.goto('/settings/keys');
  await expect(page).toHaveURL(/\/login\?next=%2Fsettings%2Fkeys$/);
  await page.getByLabel('Email').fill(who.email);
  await page.getByLabel('Password').fill('not the password at all');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toContainText('Not signed in');
  await page.getByLabel('Password').fill(PASSWORD);
  const clean = guard(page);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'API keys' })).toBeVisible();
  await expect(page.getByText('does not hold api_key:write')).toBeVisible();
  clean.expectNone();
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page).toHaveURL(/\/login$/);
  const me = await page.request.get('/api/v1/users/me');
  expect(me.status()).toBe(401);
});
