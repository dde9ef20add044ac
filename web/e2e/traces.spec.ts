/** Traces sent by the OpenTelemetry trace SDK: the filtered list, the waterfall, a span's attributes and events. */
import { sendAgentRun } from '../../server/src/testing/otel-agent-run.js';
import { BASE, expect, guard, owner, person, project, signIn, test, unique, ingestKey } from './fixtures.js';

let p: string;
let traceId: string;

test.beforeAll(async () => {
  p = await project();
  await owner('PUT', `/projects/${p}/content-policy`, {
    rules: ['model_transcript', 'tool_arguments', 'replay_dom', 'person_properties', 'memory_item', 'group_properties'].flatMap((c) =>
      ['store', 'read', 'export', 'judge_transfer'].map((s) => ({ content_class: c, sink: s, decision: 'allow' })),
    ),
  });
  const key = await ingestKey(p);
  traceId = (await sendAgentRun({ base: BASE, format: 'protobuf', key: key.key, agentId: unique('agent'), serviceName: 'support-svc', content: { prompt: '"the secret plan"' } })).root.spanContext().traceId;
  await expect.poll(async () => (await owner<{ traces: unknown[] }>('GET', `/traces?project_id=${p}`)).traces.length, { timeout: 15_000 }).toBe(1);
});

test('filter the list, open the waterfall, read a failed span\'s attributes and events', async ({ page, context }) => {
  await signIn(context, await person('admin'));
  const clean = guard(page);
  await page.goto(`/p/${p}/traces`);
  await page.getByLabel('Span status').selectOption('error');
  await page.getByRole('button', { name: 'Search' }).click();
  await expect(page).toHaveURL(/status=error/);
  const row = page.getByRole('region', { name: 'Trace list' }).getByRole('row').filter({ hasText: 'invoke_agent support' });
  await expect(row).toContainText('support-svc');
  await expect(row).toContainText('6');
  await row.getByRole('link', { name: 'invoke_agent support' }).click();
  await expect(page).toHaveURL(`${BASE}/p/${p}/traces/${traceId}`);
  const waterfall = page.getByRole('table', { name: 'Waterfall' });
  await expect(waterfall.getByRole('row')).toHaveCount(7);
  await expect(waterfall.getByRole('row').filter({ hasText: 'execute_tool send_email' })).toContainText('smtp down');
  await page.getByRole('button', { name: 'Show span execute_tool send_email' }).click();
  await expect(page.getByRole('table', { name: 'Span attributes' })).toContainText('gen_ai.tool.name');
  await expect(page.getByRole('table', { name: 'Span attributes' })).toContainText('send_email');
  await expect(page.getByRole('table', { name: 'Attributes of event tool.retry' })).toContainText('attempt');
  clean.expectNone();
});

test('a member sees the chat span\'s prompt withheld', async ({ page, context }) => {
  await signIn(context, await person('member'));
  await page.goto(`/p/${p}/traces/${traceId}`);
  await page.getByRole('button', { name: 'Show span chat gpt-4o' }).click();
  const attrs = page.getByRole('table', { name: 'Span attributes' });
  await expect(attrs.getByRole('row').filter({ hasText: 'gen_ai.input.messages' })).toContainText('withheld');
  await expect(page.getByText('the secret plan')).toHaveCount(0);
});
