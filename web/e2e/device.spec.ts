/**
 * `svc login` (the real CLI over real HTTP) approved in the page: the address it prints opens the UI's
 * device page with its code; the signed-in person approves; the CLI ends signed in as them.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { BASE, expect, guard, person, signIn, test } from './fixtures.js';

const SVC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'cli', 'bin', 'svc.js');

function svc(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [SVC, ...args], { env: { PATH: process.env.PATH!, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  const done = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, done, out: () => stdout, err: () => stderr };
}

test('approve svc login\'s device code in the page and see the CLI signed in', async ({ page, context }) => {
  const who = await person('member', 'Linus');
  await signIn(context, who);
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-ui-device-'));
  const env = { XDG_CONFIG_HOME: path.join(home, 'xdg'), HOME: path.join(home, 'home'), SVC_API_URL: BASE };
  const login = svc(['login', '--no-browser'], env);
  try {
    await expect.poll(() => login.err(), { timeout: 20_000 }).toContain('"user_code"');
    const shown = JSON.parse(login.err().split('\n').find((l) => l.includes('"user_code"'))!) as { user_code: string; verification_uri_complete: string };
    expect(shown.verification_uri_complete).toContain(`${BASE}/oauth/device`);

    const clean = guard(page);
    // The address the CLI prints, as a person follows it.
    await page.goto(shown.verification_uri_complete);
    await expect(page).toHaveURL(new RegExp(`/device\\?user_code=${shown.user_code}$`));
    await expect(page.getByRole('heading', { name: 'Connect a device' })).toBeVisible();
    await expect(page.getByText('svc CLI')).toBeVisible();
    await expect(page.getByText('projects:read')).toBeVisible();
    await page.getByRole('button', { name: 'Approve' }).click();
    await expect(page.getByRole('status').filter({ hasText: 'Approved' })).toBeVisible();
    clean.expectNone();

    expect(await login.done, login.err()).toBe(0);
    const signedIn = JSON.parse(login.out());
    expect(signedIn).toMatchObject({ api_url: BASE, user: { email: who.email, name: 'Linus' }, organization: { role: 'member' } });
  } finally {
    login.child.kill();
    fs.rmSync(home, { recursive: true, force: true });
  }
});

test('a code typed by hand that is unknown shows the API\'s answer beside the code', async ({ page, context }) => {
  await signIn(context, await person('member'));
  await page.goto('/device');
  await page.getByLabel('Code shown by your device').fill('WXYZ-WXYZ');
  await page.getByRole('button', { name: 'Look up' }).click();
  await expect(page).toHaveURL(/\/device\?user_code=WXYZ-WXYZ$/);
  await expect(page.getByRole('alert')).toContainText('This code');
});
