/**
 * The README's screenshots, taken from a run sent by the OpenTelemetry SDK: the project overview and a run
 * with a step open. Written to .playwright-results/screenshots (SVC_SCREENSHOT_DIR=docs/images refreshes
 * the committed ones). The pages must show the data, so this is a test too.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHAT_USAGE, sendAgentRun } from '../../server/src/testing/otel-agent-run.js';
import { BASE, expect, owner, person, project, signIn, test, unique, ingestKey } from './fixtures.js';

const OUT = process.env.SVC_SCREENSHOT_DIR ?? path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '.playwright-results', 'screenshots');

test('screenshots of the overview and of a run', async ({ page, context }) => {
  const p = await project('support-bot');
  await owner('PUT', `/projects/${p}/content-policy`, {
    rules: ['model_transcript', 'tool_arguments', 'replay_dom', 'person_properties', 'memory_item', 'group_properties'].flatMap((c) =>
      ['store', 'read', 'export', 'judge_transfer'].map((s) => ({ content_class: c, sink: s, decision: 'allow' })),
    ),
  });
  await owner('PUT', `/llm/pricing?project_id=${p}`, { model: CHAT_USAGE.model, input_usd_per_million_tokens: 2.5, output_usd_per_million_tokens: 10 });
  const key = await ingestKey(p);
  let runId = '';
  for (let i = 0; i < 3; i++) {
    const spans = await sendAgentRun({
      base: BASE,
      format: 'protobuf',
      key: key.key,
      agentId: `support-${i % 2}`,
      conversationId: `conv-${i}`,
      retrievalSpanError: i === 1,
      content: { prompt: JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Where is my parcel 7731?' }] }]), completion: JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'It ships tomorrow.' }] }]) },
    });
    runId = spans.root.spanContext().traceId;
  }
  await expect.poll(async () => (await owner<{ runs: unknown[] }>('GET', `/agent-runs?project_id=${p}`)).runs.length, { timeout: 15_000 }).toBe(3);
  await page.setViewportSize({ width: 1280, height: 800 });
  await signIn(context, await person('admin', 'Ada'));
  await page.addInitScript(() => localStorage.setItem('svc.theme', 'light'));
  await page.goto(`/p/${p}`);
  await expect(page.getByTestId('runs-24h')).toHaveText('3');
  await page.screenshot({ path: path.join(OUT, 'overview.png') });
  const chat = (await owner<{ steps: { step_id: string; name: string }[] }>('GET', `/agent-runs/${runId}/graph?project_id=${p}`)).steps.find((s) => s.name.startsWith('chat'))!;
  await page.addInitScript(() => localStorage.setItem('svc.theme', 'dark'));
  await page.goto(`/p/${p}/runs/${runId}?step=${chat.step_id}`);
  await expect(page.getByText('It ships tomorrow.')).toBeVisible();
  await page.screenshot({ path: path.join(OUT, 'run.png'), fullPage: true });
});
