/**
 * An agent run sent by the real OpenTelemetry JS SDK (OTLP/protobuf over HTTP), read in the browser: the run
 * list, the run's steps with tokens and cost, a step's recorded content for a reader allowed to see it, and
 * "withheld" for a reader whose scopes do not allow it (a member lacks agents:content:read).
 */
import { CHAT_USAGE, sendAgentRun } from '../../server/src/testing/otel-agent-run.js';
import { BASE, expect, guard, owner, person, project, signIn, test, unique, ingestKey } from './fixtures.js';

const CLASSES = ['model_transcript', 'tool_arguments', 'replay_dom', 'person_properties', 'memory_item', 'group_properties'];
const SINKS = ['store', 'read', 'export', 'judge_transfer'];
const PROMPT = JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: 'Where is my parcel 7731?' }] }]);

let p: string;
let runId: string;

test.beforeAll(async () => {
  p = await project();
  await owner('PUT', `/projects/${p}/content-policy`, { rules: CLASSES.flatMap((c) => SINKS.map((s) => ({ content_class: c, sink: s, decision: 'allow' }))) });
  // $2.50 and $10 per million tokens: 1200 in + 350 out = $0.0065.
  await owner('PUT', `/llm/pricing?project_id=${p}`, { model: CHAT_USAGE.model, input_usd_per_million_tokens: 2.5, output_usd_per_million_tokens: 10 });
  const key = await ingestKey(p);
  const spans = await sendAgentRun({ base: BASE, format: 'protobuf', key: key.key, agentId: unique('agent'), content: { prompt: PROMPT, completion: '"It ships tomorrow."' } });
  runId = spans.root.spanContext().traceId;
  await expect.poll(async () => (await owner<{ runs: unknown[] }>('GET', `/agent-runs?project_id=${p}`)).runs.length, { timeout: 15_000 }).toBe(1);
});

test('the run list shows the run; its page shows steps, tokens, cost and the recorded prompt', async ({ page, context }) => {
  await signIn(context, await person('admin'));
  const clean = guard(page);
  await page.goto(`/p/${p}/runs`);
  const row = page.getByRole('row').filter({ hasText: 'support' });
  await expect(row).toContainText('completed');
  await expect(row).toContainText('$0.00650');
  await row.getByRole('link', { name: runId.slice(0, 12) }).click();
  await expect(page).toHaveURL(`${BASE}/p/${p}/runs/${runId}`);
  await expect(page.getByTestId('run-cost')).toHaveText('$0.00650');
  const steps = page.getByRole('table', { name: 'Steps of this run' });
  for (const name of ['invoke_agent support', 'chat gpt-4o', 'execute_tool search', 'execute_tool send_email', 'retrieval kb', 'upsert_memory']) await expect(steps).toContainText(name);
  // The tree: the root, then its children by start: the SDK started (and ended) the chat before the others,
  // which start within microseconds of each other (their order among themselves is by step id when equal).
  const names = await steps.getByRole('row').evaluateAll((rows) => rows.slice(1).map((r) => r.querySelector('td button')?.textContent));
  expect(names.slice(0, 2)).toEqual(['invoke_agent support', 'chat gpt-4o']);
  expect(names.slice(2).sort()).toEqual(['execute_tool search', 'execute_tool send_email', 'retrieval kb', 'upsert_memory']);
  const chat = steps.getByRole('row').filter({ hasText: 'chat gpt-4o' });
  await expect(chat).toContainText('1,200');
  await expect(chat).toContainText('350');
  await chat.getByRole('button', { name: 'Show step chat gpt-4o' }).click();
  await expect(page).toHaveURL(/step=[0-9a-f]{16}$/);
  await expect(page.getByText('Where is my parcel 7731?')).toBeVisible();
  await expect(page.getByText('It ships tomorrow.')).toBeVisible();
  clean.expectNone();
});

test('a reader without agents:content:read sees the content withheld, never the words and never blank', async ({ page, context }) => {
  await signIn(context, await person('member'));
  const clean = guard(page);
  await page.goto(`/p/${p}/runs/${runId}`);
  await page.getByRole('button', { name: 'Show step chat gpt-4o' }).click();
  const withheld = page.getByTestId('withheld-content');
  await expect(withheld).toHaveCount(2);
  await expect(withheld.first()).toContainText('withheld');
  await expect(page.getByText('gen_ai.input.messages')).toBeVisible();
  await expect(page.getByText('Where is my parcel 7731?')).toHaveCount(0);
  clean.expectNone();
});

test('an unknown run answers the API\'s 404 message on the page', async ({ page, context }) => {
  await signIn(context, await person('admin'));
  await page.goto(`/p/${p}/runs/${'0'.repeat(31)}1`);
  await expect(page.getByRole('alert')).toContainText('This run could not be read');
});

test('the run\'s session: its totals and its turns with their runs', async ({ page, context }) => {
  await signIn(context, await person('admin'));
  const clean = guard(page);
  await page.goto(`/p/${p}/runs/${runId}`);
  await page.getByRole('link', { name: 'conv-42' }).click();
  await expect(page).toHaveURL(`${BASE}/p/${p}/sessions/conv-42`);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('conv-42');
  await expect(page.getByTestId('session-cost')).toHaveText('$0.00650');
  const turn = page.getByRole('region', { name: 'Turn turn-1' });
  await expect(turn).toContainText('support');
  await turn.getByRole('link', { name: `${runId.slice(0, 12)}…` }).click();
  await expect(page).toHaveURL(`${BASE}/p/${p}/runs/${runId}`);
  clean.expectNone();
});
