/** Reads the configuration, opens the stores, listens, and shuts down gracefully on SIGTERM/SIGINT. */
import net, { type AddressInfo } from 'node:net';
import { buildApp } from './app.js';
import { loadConfig, localUrl } from './config.js';
import { withKeyHashSecret } from './lib/keyed-hash.js';
import { buildContext } from './context.js';
import { bootstrap, firstStartBlock } from './domains/organizations/bootstrap.js';
import { openStores } from './stores.js';
import { applyChanges, changeFeedFor } from './cluster/apply-changes.js';
import { lockDataDir } from './cluster/data-dir-lock.js';

/** Binds host:port once and lets it go: a busy port or an unknown host fails here, before the store is touched. */
function assertListenable(host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      reject(new Error(`cannot listen on ${host}:${port} (${err.code ?? err.message}); set SVC_PORT or SVC_HOST. Nothing was created.`)),
    );
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

async function main() {
  // The data dir holds secrets (the key-hash secret, OAuth signing keys, sealed replays): everything the
  // server creates is readable by its own user only.
  process.umask(0o077);
  const loaded = loadConfig();
  // One process per data dir (docs/several-nodes.md): a second one is refused here, before anything in it is read or written.
  const dataDirLock = lockDataDir(loaded.dataDir, { controlInPostgres: loaded.databaseUrl !== undefined, telemetryInClickHouse: loaded.clickhouse !== undefined });
  const config = await withKeyHashSecret(loaded);
  // One-time upgrades of the data files print their progress (JSON lines, like the service's log).
  const { control, telemetry } = await openStores(config, (msg) => process.stdout.write(`${JSON.stringify({ level: 30, time: Date.now(), msg })}\n`));
  const ctx = buildContext({ config, control, telemetry });
  // A first start creates the owner key and shows it once; if the address were unusable the process
  // would then exit with a store nobody can sign in to. So the address is tried before anything is created.
  await assertListenable(config.host, config.port);
  const init = await bootstrap(control, ctx.audit, ctx.clock, ctx.ids, config.init, ctx.keyHash);
  const app = await buildApp(ctx);
  // Changes made on any node drop what this node caches of them (PostgreSQL LISTEN/NOTIFY; docs/several-nodes.md).
  const changes = changeFeedFor(config, control, app.log.child({ component: 'changes' }));
  applyChanges(changes, ctx);
  await changes.start();
  if (init.created) app.log.info({ org_id: init.orgId, project_id: init.projectId }, 'initialized an empty store');
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down: no new connections, finishing in-flight requests');
    try {
      await app.close(); // stops accepting, waits for in-flight requests, runs onClose hooks (flushes, stops the job runner)
      await changes.stop();
      await telemetry.close(); // stops the writers (committing what is queued), then closes the store
      await control.close();
      dataDirLock.release();
      process.exit(0);
    } catch (err) {
      app.log.error({ err }, 'unclean shutdown');
      process.exit(1);
    }
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  const address = await app.listen({ port: config.port, host: config.host });
  app.log.info({ address, data_dir: config.dataDir, control: control.dialect }, 'listening');
  // Background jobs (docs/jobs.md); app.close() in shutdown stops the loop before the stores close.
  ctx.jobs.start(app.log.child({ component: 'jobs' }));
  if (init.created) {
    const port = (app.server.address() as AddressInfo).port;
    const apiUrl = process.env.SVC_PUBLIC_URL ? config.publicUrl : localUrl(config.host, port);
    // Printed once, to the terminal, never to the structured log.
    process.stderr.write(firstStartBlock({ apiUrl, orgId: init.orgId, projectId: init.projectId, generatedKey: init.generatedKey }));
  }
}

main().catch((err) => {
  process.stderr.write(`svc failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
