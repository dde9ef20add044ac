/**
 * Writes fixtures/<setup>.json for every framework setup (setups.ts): the setup runs for real against the
 * fake model server, exports over OTLP/HTTP protobuf to a test app listening on loopback, and the traces
 * are read back through `GET /api/v1/traces/{id}` with a key holding traces:read and agents:content:read.
 * Each span: name, kind, instrumentation scope, parent as an index, status, every attribute as the API
 * answers it, events. Span ids and times are left out; span attribute values that vary per run (ids the
 * framework generates) are kept as emitted; resource attribute values read from the machine are masked.
 *
 *   npx tsx server/src/ingest/otlp/frameworks/capture.ts            # every setup, each in its own process
 *   npx tsx server/src/ingest/otlp/frameworks/capture.ts ai-sdk     # one setup, in this process
 */
import { allowAllContent } from '../../../testing/content-policy.js';
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { projectWithKey, testApp } from '../../../testing/app.js';
import { FAKE_REQUEST_MODEL, FAKE_RESPONSE_MODEL } from '../../../testing/fake-openai.js';
import { fixtureSpans, readTrace, runSetup, HARNESS_SCOPE } from './harness.js';
import { SETUPS, setupNamed } from './setups.js';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '../../../../..');

function installedVersion(pkg: string): string {
  return (JSON.parse(readFileSync(join(repoRoot, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string }).version;
}

/** Resource attributes with the values a resource detector takes from the machine (host.*, process.* but the runtime) replaced by `<machine>`. */
function machineNeutral(attrs: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(attrs).map(([k, v]) => [k, /^(host|process)\./.test(k) && !k.startsWith('process.runtime.') ? '<machine>' : v]));
}

async function captureOne(name: string): Promise<void> {
  const setup = setupNamed(name);
  const t = await testApp();
  try {
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const { key, projectId } = await projectWithKey(t, ['ingest:write', 'traces:read', 'agents:content:read'], `capture-${name}`);
    await allowAllContent(t, projectId);
    const run = await runSetup(setup, { base, key });
    const traces = [];
    for (const id of run.traceIds) traces.push(await readTrace(base, key, id));
    const fixture = {
      setup: name,
      generated_by: 'npx tsx server/src/ingest/otlp/frameworks/capture.ts',
      packages: Object.fromEntries(setup.packages.map((p) => [p, installedVersion(p)])),
      note: `Spans of scope "${HARNESS_SCOPE}" are the test app's own (a parent around calls that have none), not the framework's. Sibling order: spans are in the API's order (by start, then span id); the JS SDK stamps starts in whole milliseconds, so siblings starting in the same millisecond may swap between captures. resource_attributes: values taken from the machine are shown as <machine>. Model server: testing/fake-openai.ts (request model "${FAKE_REQUEST_MODEL}", response model "${FAKE_RESPONSE_MODEL}").`,
      model_requests: run.modelRequests.map((r) => `${r.method} ${r.path}${r.body?.stream === true ? ' (stream)' : ''}`),
      resource_attributes: machineNeutral(traces[0]?.spans[0]?.resource_attributes ?? {}),
      traces: traces.map((tr) => ({ span_count: tr.span_count, spans: fixtureSpans(tr) })),
    };
    const file = join(here, 'fixtures', `${name}.json`);
    writeFileSync(file, `${JSON.stringify(fixture, null, 2)}\n`);
    console.log(`${name}: ${traces.length} trace(s), ${run.spanCount} span(s) -> ${file}`);
  } finally {
    await t.close();
  }
}

const only = process.argv[2];
if (only) {
  await captureOne(only);
} else {
  let failed = false;
  for (const s of SETUPS) {
    const r = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), s.name], { stdio: 'inherit', cwd: repoRoot });
    if (r.status !== 0) {
      console.error(`${s.name}: failed (exit ${r.status})`);
      failed = true;
    }
  }
  if (failed) process.exitCode = 1;
}
