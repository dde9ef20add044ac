/** Process entry of `svc` (loaded by bin/svc.js through tsx). */
import { reportError, run } from './cli.js';
import { CliError, ExitCode } from './errors.js';

const io = { env: process.env, stdout: process.stdout, stderr: process.stderr };

// A signal interrupts the command: report it like any other error, exit code 1.
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.once(signal, () => {
    reportError(new CliError('interrupted', `interrupted by ${signal}`, ExitCode.general), io);
    process.exit(ExitCode.general);
  });
}

// A closed pipe (`svc ... | head`) is not an error worth a stack trace.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

process.exitCode = await run(process.argv.slice(2), io);
