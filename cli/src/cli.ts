/** Builds the `svc` program and runs one invocation; returns the exit code (never exits the process). */
import { Command, CommanderError, Option } from 'commander';
import { registerAgent } from './commands/agent.js';
import { registerAgentRuns } from './commands/agent-runs.js';
import { registerAgentSessions } from './commands/agent-sessions.js';
import { registerApiKeys } from './commands/api-keys.js';
import { registerAssets } from './commands/assets.js';
import { registerConfig } from './commands/config.js';
import { registerLogin } from './commands/login.js';
import { registerLlm } from './commands/llm.js';
import { registerLogs } from './commands/logs.js';
import { registerMembers } from './commands/members.js';
import { registerMetrics } from './commands/metrics.js';
import { registerProjects } from './commands/projects.js';
import { registerQuarantines } from './commands/quarantines.js';
import { registerMemory } from './commands/memory.js';
import { registerFleet } from './commands/fleet.js';
import { registerTraces } from './commands/traces.js';
import { registerContentPolicy } from './commands/content-policy.js';
import { registerReceipts } from './commands/receipts.js';
import { registerAbom } from './commands/abom.js';
import { registerVerifyArtifact } from './commands/verify-artifact.js';
import { registerReceiptChains } from './commands/receipt-chains.js';
import { registerEvals } from './commands/evals.js';
import { Context, type Io } from './context.js';
import { CliError, ExitCode, usageError, withProjectHint } from './errors.js';
import { nonEmpty } from './flags.js';
import { formatError, OUTPUT_FORMATS, useColor, type OutputFormat } from './output.js';

export const VERSION = '0.1.0';
export type { Io } from './context.js';

const CREDENTIALS_HELP = `
Credentials, first found wins: --api-key, SVC_API_KEY, the profile's signed-in session
(\`svc login\`; used only with the API URL it was made for), the profile's api_key.
`;

export function buildProgram(io: Io): { program: Command; ctx: Context; helpErr: () => string } {
  const program = new Command();
  const ctx = new Context(io, program);
  let errBuffer = '';
  program
    .name('svc')
    .description('Command-line client for the svc observability service (talks only HTTP)')
    .version(VERSION, '-V, --version')
    .exitOverride()
    .configureHelp({ showGlobalOptions: true })
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      // Help shown because of an error is kept and decided on in `run`; errors are formatted by `run`.
      writeErr: (s) => {
        errBuffer += s;
      },
      outputError: () => {},
    })
    .option('--api-key <key>', 'API key (env SVC_API_KEY; before the `svc login` session and the profile api_key)', nonEmpty('--api-key'))
    .option('--api-url <url>', 'API origin without a path (env SVC_API_URL, then the profile; default http://127.0.0.1:8080)')
    .option('--ingest-url <url>', 'ingest origin (env SVC_INGEST_URL, then the profile; default: the API origin)')
    .addOption(new Option('-o, --output <format>', 'output format (default: table on a terminal, JSON when piped)').choices(OUTPUT_FORMATS))
    .option('--json', 'same as --output json (the last of --json/--output wins)')
    .option('--no-color', 'no colour in tables (also NO_COLOR)')
    .option(
      '--profile <name>',
      'config profile (env SVC_PROFILE, then `svc config use`; default "default"); an unknown one is an error',
      nonEmpty('--profile'),
    )
    .option('--project <id>', 'active project (before SVC_PROJECT and the profile)', nonEmpty('--project'));

  // Global flags are parsed in argv order wherever they appear, so the last output flag wins.
  program.on('option:json', () => ctx.output.set('json'));
  program.on('option:output', (value: OutputFormat) => ctx.output.set(value));

  registerProjects(program, ctx);
  registerMetrics(program, ctx);
  registerMembers(program, ctx);
  registerApiKeys(program, ctx);
  registerQuarantines(program, ctx);
  registerFleet(program, ctx);
  registerLlm(program, ctx);
  registerAgentRuns(program, ctx);
  registerAgentSessions(program, ctx);
  registerAssets(program, ctx);
  registerMemory(program, ctx);
  registerTraces(program, ctx);
  registerLogs(program, ctx);
  registerConfig(program, ctx);
  registerAgent(program, ctx);
  registerLogin(program, ctx);
  registerContentPolicy(program, ctx);
  registerReceipts(program, ctx);
  registerAbom(program, ctx);
  registerVerifyArtifact(program, ctx);
  registerReceiptChains(program, ctx);
  registerEvals(program, ctx);
  program.addHelpText('after', CREDENTIALS_HELP);
  return { program, ctx, helpErr: () => errBuffer };
}

export async function run(argv: string[], io: Io): Promise<number> {
  const { program, helpErr } = buildProgram(io);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (e) {
    let err: CliError;
    if (e instanceof CommanderError) {
      if (e.code === 'commander.helpDisplayed' || e.code === 'commander.version') return ExitCode.ok;
      if (e.code === 'commander.help') {
        if (e.exitCode === 0) return ExitCode.ok;
        // A command group without its subcommand: commander printed help "as an error".
        if (io.stderr.isTTY) {
          io.stderr.write(helpErr());
          return ExitCode.usage;
        }
        err = usageError('a subcommand is required; run the command with --help to list them');
      } else {
        err = usageError(e.message.replace(/^error:\s*/, '').replace(/\s*\n\s*/g, ' '));
      }
    } else if (e instanceof CliError) {
      err = withProjectHint(e);
    } else {
      err = new CliError('internal_error', e instanceof Error ? e.message : String(e), ExitCode.general);
    }
    reportError(err, io, program.opts().color !== false);
    return err.exitCode;
  }
}

export function reportError(err: CliError, io: Io, colorFlag = true): void {
  const interactive = Boolean(io.stderr.isTTY);
  io.stderr.write(formatError(err, { interactive, color: useColor({ isTTY: interactive, colorFlag, env: io.env }) }));
}
