/**
 * Log records sent by the OpenTelemetry JS logs SDK: found by the search with its filters, and the live
 * tail shows a record sent after the page opened, without a reload.
 */
import { SeverityNumber } from '@opentelemetry/api-logs';
import { sendLogs } from '../../server/src/testing/otel-agent-run.js';
import { BASE, expect, guard, owner, person, project, signIn, test, unique, ingestKey } from './fixtures.js';

let p: string;
let key: string;
const send = (body: string, severityNumber: SeverityNumber, service = 'payments') =>
  sendLogs({ base: BASE, format: 'protobuf', key, resource: { 'service.name': service } }, (logger) => {
    logger.emit({ body, severityNumber, severityText: SeverityNumber[severityNumber], attributes: { 'order.id': 'o-77' } });
  });

test.beforeAll(async () => {
  p = await project();
  key = (await ingestKey(p)).key;
  await send('card declined for order o-77', SeverityNumber.ERROR);
  await send('order o-77 created', SeverityNumber.INFO, 'shop');
  await expect.poll(async () => (await owner<{ logs: unknown[] }>('GET', `/logs?project_id=${p}`)).logs.length, { timeout: 15_000 }).toBe(2);
});

test('search with a severity and a text filter finds the record, in the URL', async ({ page, context }) => {
  await signIn(context, await person('member'));
  const clean = guard(page);
  await page.goto(`/p/${p}/logs`);
  const table = page.getByRole('region', { name: 'Log records' });
  await expect(table).toContainText('card declined for order o-77');
  await expect(table).toContainText('order o-77 created');
  await page.getByLabel('Minimum severity').selectOption('warn');
  await page.getByLabel('Text in the body').fill('declined');
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(page).toHaveURL(/severity=warn/);
  await expect(table).toContainText('card declined');
  await expect(table).not.toContainText('order o-77 created');
  await expect(table.getByRole('row').filter({ hasText: 'card declined' })).toContainText('payments');
  clean.expectNone();
});

test('the live tail shows a record sent after the page opened', async ({ page, context }) => {
  await signIn(context, await person('member'));
  const clean = guard(page);
  await page.goto(`/p/${p}/logs`);
  await page.getByRole('button', { name: 'Follow new records' }).click();
  await expect(page).toHaveURL(/tail=1/);
  await expect(page.getByTestId('tail-status')).toContainText('Following');
  await expect(page.getByText('No new record yet')).toBeVisible();
  const fresh = `refund issued ${unique('r')}`;
  await send(fresh, SeverityNumber.WARN);
  const rows = page.getByRole('region', { name: 'New log records' });
  await expect(rows).toContainText(fresh, { timeout: 15_000 });
  // The backlog is not replayed into the tail.
  await expect(rows).not.toContainText('card declined');
  await page.getByRole('button', { name: 'Stop following' }).click();
  await expect(page.getByRole('region', { name: 'Log records' })).toContainText(fresh);
  clean.expectNone();
});
