/**
 * The browser tests of the web UI: Playwright driving Debian's Chromium (`apt-get install -y chromium`;
 * Playwright's own browser download cannot reach its host here), against the real service started once by
 * global-setup.ts (the built `npm start` file, embedded storage, a fresh data dir). Each test makes its own
 * people and projects, so tests share the server and run in parallel.
 * Run: `npx playwright test -c web/e2e/playwright.config.ts` (part of `npm test`).
 */
import { defineConfig } from '@playwright/test';

const chromium = process.env.SVC_CHROMIUM ?? '/usr/bin/chromium';

export default defineConfig({
  testDir: '.',
  testMatch: '*.spec.ts',
  globalSetup: './global-setup.ts',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: true,
  workers: 2,
  retries: 0,
  reporter: [['list']],
  outputDir: '../../.playwright-results',
  use: {
    browserName: 'chromium',
    headless: true,
    launchOptions: {
      executablePath: chromium,
      args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--no-first-run', '--disable-extensions'],
    },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
  },
});
