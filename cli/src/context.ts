/** What every command needs: global flags, resolved settings, the HTTP client and output helpers. */
import type { Command } from 'commander';
import {
  configPath,
  loadConfig,
  resolveProfileName,
  resolveSettings,
  type ConfigFile,
  type Env,
  type Profile,
  type Settings,
  type Sourced,
} from './config.js';
import { CliError, ExitCode } from './errors.js';
import { ApiClient, type FetchLike } from './http.js';
import { OutputChoice, renderJson, useColor, type OutStream, type OutputFormat } from './output.js';

export interface Io {
  env: Env;
  stdout: OutStream;
  stderr: OutStream;
  /** Replaces the global fetch (tests). */
  fetch?: FetchLike;
  /** Replaces the clock (tests). */
  now?: () => Date;
}

/** The global flags as commander stores them on the program. */
export interface GlobalOptions {
  apiKey?: string;
  apiUrl?: string;
  ingestUrl?: string;
  json?: boolean;
  color: boolean;
  output?: OutputFormat;
  profile?: string;
  project?: string;
}

export class Context {
  readonly output = new OutputChoice();
  /** One clock reading per invocation, so --since and --until agree. */
  readonly now: Date;
  private config: ConfigFile | undefined;

  constructor(
    readonly io: Io,
    private readonly program: Command,
  ) {
    this.now = io.now ? io.now() : new Date();
  }

  get opts(): GlobalOptions {
    return this.program.opts<GlobalOptions>();
  }

  get env(): Env {
    return this.io.env;
  }

  get format(): OutputFormat {
    return this.output.resolve(this.io.stdout.isTTY);
  }

  get color(): boolean {
    return useColor({ isTTY: this.io.stdout.isTTY, colorFlag: this.opts.color !== false, env: this.env });
  }

  get configPath(): string {
    return configPath(this.env);
  }

  loadConfig(): ConfigFile {
    this.config ??= loadConfig(this.configPath);
    return this.config;
  }

  /** The active profile name (`--profile`, `SVC_PROFILE`, `default`) and its stored settings. */
  profile(): { name: Sourced<string>; values: Profile } {
    const name = resolveProfileName(this.opts.profile, this.env);
    return { name, values: this.loadConfig().profiles[name.value] ?? {} };
  }

  settings(): Settings {
    const o = this.opts;
    return resolveSettings(
      { apiKey: o.apiKey, apiUrl: o.apiUrl, ingestUrl: o.ingestUrl, project: o.project },
      this.env,
      this.profile().values,
    );
  }

  /** The active project by precedence (`--project`, `SVC_PROJECT`, profile), if any. */
  activeProject(): Sourced<string> | undefined {
    return this.settings().project;
  }

  /** An API client; without any API key configured this fails with exit code 3 before sending anything. */
  client(): ApiClient {
    const s = this.settings();
    if (!s.apiKey)
      throw new CliError(
        'unauthenticated',
        'no API key configured: pass --api-key, set SVC_API_KEY, or run `svc config set api_key <key>`',
        ExitCode.unauthenticated,
      );
    return new ApiClient(s.apiUrl.value, s.apiKey.value, this.io.fetch);
  }

  /** Prints a result: JSON as is, or the table rendered by `table`. */
  print(json: unknown, table: () => string): void {
    this.io.stdout.write(this.format === 'json' ? renderJson(json) : table());
  }

  /** A side note for people at a terminal (never mixed into JSON or piped stderr). */
  note(message: string): void {
    if (this.io.stderr.isTTY) this.io.stderr.write(`${message}\n`);
  }
}
