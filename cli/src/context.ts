/** What every command needs: global flags, resolved settings, the HTTP client and output helpers. */
import type { Command } from 'commander';
import {
  checkProfileKnown,
  configPath,
  loadConfig,
  PROFILE_SOURCE_LABEL,
  resolveProfileName,
  resolveSettings,
  type ConfigFile,
  type Env,
  type Profile,
  type Settings,
  type Sourced,
} from './config.js';
import { CliError, ExitCode, projectRequired } from './errors.js';
import { ApiClient, type FetchLike } from './http.js';
import { OutputChoice, renderJson, useColor, type OutStream, type OutputFormat } from './output.js';
import { openInBrowser, realSleep, SessionAuth, type OAuthDeps, type Sleep } from './session.js';

export interface Io {
  env: Env;
  stdout: OutStream;
  stderr: OutStream;
  /** Replaces the global fetch (tests). */
  fetch?: FetchLike;
  /** Replaces the clock (tests). */
  now?: () => Date;
  /** Replaces waiting, e.g. between device-flow polls (tests). */
  sleep?: Sleep;
  /** Replaces the platform's browser opener (tests); resolves whether something was started. */
  openUrl?: (url: string) => Promise<boolean>;
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

  /**
   * The active profile name (`--profile`, `SVC_PROFILE`, the file's `active_profile`, `default`) and its
   * stored settings. A selected profile the file does not hold is a usage error (exit 2), unless
   * `mayCreate` (`svc config set` and `svc login`, which create it).
   */
  profile(opts: { mayCreate?: boolean } = {}): { name: Sourced<string>; values: Profile } {
    const cfg = this.loadConfig();
    const name = resolveProfileName(this.opts.profile, this.env, cfg.active_profile);
    if (!opts.mayCreate) checkProfileKnown(name.value, PROFILE_SOURCE_LABEL[name.source], cfg);
    return { name, values: cfg.profiles[name.value] ?? {} };
  }

  /** `mayCreate`: as for `profile()`. */
  settings(opts: { mayCreate?: boolean } = {}): Settings {
    const o = this.opts;
    return resolveSettings(
      { apiKey: o.apiKey, apiUrl: o.apiUrl, ingestUrl: o.ingestUrl, project: o.project },
      this.env,
      this.profile(opts).values,
    );
  }

  /** The active project by precedence (`--project`, `SVC_PROJECT`, profile), if any. */
  activeProject(): Sourced<string> | undefined {
    return this.settings().project;
  }

  /** `{project_id}` of the active project for a request's query; a usage error saying `why` when none is set. */
  projectQuery(why: string): { project_id: string } {
    const p = this.activeProject();
    if (!p) throw projectRequired(why);
    return { project_id: p.value };
  }

  /** What the OAuth calls of session.ts need: fetch, a live clock, sleep. */
  oauthDeps(): OAuthDeps {
    return {
      fetch: this.io.fetch ?? fetch,
      now: () => (this.io.now ? this.io.now() : new Date()),
      sleep: this.io.sleep ?? realSleep,
    };
  }

  openUrl(url: string): Promise<boolean> {
    return (this.io.openUrl ?? openInBrowser)(url);
  }

  /**
   * An API client with the credential by precedence: `--api-key`, `SVC_API_KEY`, the profile's
   * signed-in session (`svc login`; only when it was made for the resolved API URL, so a token never
   * goes to another server), the profile's `api_key`. Without any, this fails with exit code 3
   * before sending anything.
   */
  client(): ApiClient {
    const s = this.settings();
    const apiUrl = s.apiUrl.value;
    if (s.apiKey && s.apiKey.source !== 'profile') return new ApiClient(apiUrl, s.apiKey.value, this.io.fetch);
    const { name, values } = this.profile();
    const session = values.session;
    if (session && session.api_url === apiUrl) {
      const auth = new SessionAuth({ configPath: this.configPath, profile: name.value, session, deps: this.oauthDeps() });
      return new ApiClient(apiUrl, auth, this.io.fetch);
    }
    if (s.apiKey) return new ApiClient(apiUrl, s.apiKey.value, this.io.fetch);
    const elsewhere = session ? ` (profile "${name.value}" is signed in to ${session.api_url}, not ${apiUrl})` : '';
    throw new CliError(
      'unauthenticated',
      `not signed in and no API key configured${elsewhere}: run \`svc login\`, pass --api-key, set SVC_API_KEY, or run \`svc config set api_key <key>\``,
      ExitCode.unauthenticated,
    );
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
