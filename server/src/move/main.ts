/**
 * `npm run move -- --from-data-dir DIR --to-database-url postgres://... --to-clickhouse-url http://...`
 *
 * Copies a stopped embedded install (SQLite + DuckDB data dir) into PostgreSQL + ClickHouse (move.ts;
 * docs/scale-out.md "Moving an embedded install"). Run it again after an interruption: it continues.
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { clickhouseSettings } from '../config.js';
import { formatCounts, moveInstall, MoveRefusedError } from './move.js';

const usage = `usage: npm run move -- --from-data-dir DIR [--to-database-url URL] [--to-clickhouse-url URL] [--batch-rows N]

Copies an embedded install (control data in SQLite, telemetry in DuckDB) into PostgreSQL + ClickHouse.
The server must be stopped. Run the same command again after an interruption: it continues where it stopped.

  --from-data-dir      the embedded install's data dir (default: SVC_DATA_DIR)
  --to-database-url    PostgreSQL (default: DATABASE_URL); the schema is the URL's search_path
                       (?options=-c%20search_path%3Dname) or the user's default; it must hold no organization
  --to-clickhouse-url  ClickHouse's HTTP interface, http(s)://[user[:password]@]host[:port][/database]
                       (default: SVC_CLICKHOUSE_URL); SVC_CLICKHOUSE_DATABASE, _USER, _PASSWORD and _CLUSTER
                       apply as for the server
  --batch-rows         telemetry rows per ClickHouse insert (default 20000)
`;

function fail(message: string, code: number): never {
  process.stderr.write(`move: ${message}\n`);
  process.exit(code);
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        'from-data-dir': { type: 'string' },
        'to-database-url': { type: 'string' },
        'to-clickhouse-url': { type: 'string' },
        'batch-rows': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (e) {
    fail(`${(e as Error).message}\n\n${usage}`, 2);
  }
  if (values.help) {
    process.stdout.write(usage);
    return;
  }
  const env = process.env;
  const from = values['from-data-dir'] || env.SVC_DATA_DIR;
  if (!from) fail(`--from-data-dir (or SVC_DATA_DIR) is required\n\n${usage}`, 2);
  // Relative to where the user ran the command (npm runs scripts from the package root and records the caller's directory in INIT_CWD).
  const dataDir = path.resolve(env.INIT_CWD || process.cwd(), from);
  const databaseUrl = values['to-database-url'] || env.DATABASE_URL;
  if (!databaseUrl) fail(`--to-database-url (or DATABASE_URL) is required\n\n${usage}`, 2);
  let clickhouse;
  try {
    clickhouse = clickhouseSettings({ ...env, SVC_CLICKHOUSE_URL: values['to-clickhouse-url'] || env.SVC_CLICKHOUSE_URL });
  } catch (e) {
    fail((e as Error).message, 2);
  }
  if (!clickhouse) fail(`--to-clickhouse-url (or SVC_CLICKHOUSE_URL) is required\n\n${usage}`, 2);
  const batchRows = values['batch-rows'] === undefined ? undefined : Number(values['batch-rows']);
  if (batchRows !== undefined && (!Number.isInteger(batchRows) || batchRows < 1 || batchRows > 1_000_000)) fail('--batch-rows must be an integer between 1 and 1000000', 2);

  const result = await moveInstall({ dataDir, databaseUrl, clickhouse, telemetryBatchRows: batchRows });
  const out = process.stdout;
  out.write(`\n${formatCounts(result.counts)}\n\n`);
  out.write(`${result.keyHash.text}\n\n`);
  let verdict: string;
  if (result.alreadyComplete)
    verdict = `The move was already complete (svc_move_progress): nothing was copied, the counts above are of now.${result.ok ? '' : ' Tables marked DIFFERS changed since: was a server started on the data dir or on the destination?'}`;
  else if (result.ok)
    verdict = `Moved in ${result.seconds.toFixed(1)} s${result.resumed ? ' (resumed)' : ''}: every table has its rows on both sides. Start the nodes with DATABASE_URL and SVC_CLICKHOUSE_URL set (and the key-hash secret above).`;
  else verdict = `Moved in ${result.seconds.toFixed(1)} s, but the counts of the tables marked DIFFERS do not agree: do not switch over yet (was the server started during the move?).`;
  out.write(`${verdict}\n`);
  if (!result.ok) process.exit(3);
}

main().catch((e: unknown) => {
  if (e instanceof MoveRefusedError) fail(e.message, 1);
  const err = e as { message?: string; code?: string; type?: string; name?: string };
  const what = err?.message || [err?.name, err?.type, err?.code].filter(Boolean).join(' ') || String(e);
  fail(`${what}\nWhat was recorded as copied stays copied: run the same command again to continue.`, 1);
});
