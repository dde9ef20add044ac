/**
 * `npm run clickhouse:local -- [--port 8123] [--host 127.0.0.1] [--path DIR] [--user U --password P] [--verbose]`
 *
 * Serves ClickHouse's HTTP interface (the subset @clickhouse/client uses) over chdb, the ClickHouse engine embedded
 * in this process: a development and test endpoint, not a server to run in production. See README.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';

const usage = `usage: clickhouse-local [--port 8123] [--host 127.0.0.1] [--path DIR] [--user NAME --password SECRET] [--verbose]

  --port      TCP port (0: any free port); default 8123
  --host      address to listen on; default 127.0.0.1
  --path      the data directory (created if missing); default a new temporary directory, removed on exit
  --user      with --password: the only credentials accepted (default: any credentials are accepted)
  --password
  --verbose   one line per request on stderr
`;

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        path: { type: 'string' },
        user: { type: 'string' },
        password: { type: 'string' },
        verbose: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n\n${usage}`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(usage);
    return;
  }
  const port = values.port === undefined ? 8123 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`invalid --port: ${values.port}\n\n${usage}`);
    process.exit(2);
  }
  if ((values.user === undefined) !== (values.password === undefined)) {
    process.stderr.write(`--user and --password go together\n\n${usage}`);
    process.exit(2);
  }

  // The server's time zone, as on a ClickHouse server configured for UTC. Set before the engine loads.
  process.env.TZ = 'UTC';
  const temporary = values.path === undefined;
  const path = temporary ? mkdtempSync(join(tmpdir(), 'clickhouse-local-')) : resolve(values.path!);
  const removeTemporary = () => {
    if (temporary) rmSync(path, { recursive: true, force: true });
  };

  const { startServer } = await import('./http.js');
  let server;
  try {
    server = await startServer({ path, port, host: values.host, user: values.user, password: values.password, verbose: values.verbose });
  } catch (e) {
    process.stderr.write(`clickhouse-local: could not start: ${(e as Error).message}\n`);
    removeTemporary();
    process.exit(1);
  }
  process.stdout.write(
    `clickhouse-local listening on ${server.url} (data: ${path}${temporary ? ' [temporary, removed on exit]' : ''}, ClickHouse ${server.version})\n`,
  );

  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) {
      process.stderr.write(`clickhouse-local: ${signal} again, exiting now\n`);
      process.exit(1);
    }
    stopping = true;
    server
      .close()
      .then(() => {
        removeTemporary();
        process.exit(0);
      })
      .catch((e: unknown) => {
        process.stderr.write(`clickhouse-local: error while stopping: ${(e as Error).message}\n`);
        process.exit(1);
      });
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

await main();
