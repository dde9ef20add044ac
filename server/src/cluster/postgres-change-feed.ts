/**
 * The change feed of nodes sharing one PostgreSQL database (docs/several-nodes.md): one dedicated
 * connection per node LISTENs on its schema's channel; every node NOTIFYs there inside its writing
 * transactions (storage/control/change-notices.ts), so PostgreSQL delivers each announcement to every
 * node when the write commits, in commit order, within milliseconds.
 *
 * The connection can drop (a restart of PostgreSQL, a network cut, an idle-connection killer): then
 * notifications may have been missed, so at once `live` turns false (caches stop keeping anything) and
 * `onResync` handlers drop what they hold; the feed reconnects with backoff (100 ms doubling to 5 s, with
 * jitter), LISTENs again and resyncs once more (what committed while it was away was never heard). A
 * heartbeat query every few seconds finds a connection that died silently.
 */
import pg from 'pg';
import type { ControlStore } from '../storage/control/stores.js';
import { changeChannel } from '../storage/control/change-notices.js';
import { InProcessChangeFeed, type FeedLog } from './change-feed.js';
import { decodeChange } from './changes.js';

export interface PostgresFeedOptions {
  /** The same URL as the control store's (DATABASE_URL). */
  connectionString: string;
  /** The schema when the URL's search_path does not name it (tests isolate themselves in a schema). */
  schema?: string;
  log?: FeedLog;
  /** How often the listening connection is checked (ms; default 5000). */
  heartbeatMs?: number;
  /** Reconnect backoff bounds (ms; defaults 100 and 5000). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
}

const quoteIdent = (s: string) => `"${s.replace(/"/g, '""')}"`;

export class PostgresChangeFeed extends InProcessChangeFeed {
  private client?: pg.Client;
  private channel?: string;
  private stopped = false;
  private attempt = 0;
  private reconnectTimer?: NodeJS.Timeout;
  private heartbeat?: NodeJS.Timeout;
  private connecting?: Promise<boolean>;
  /** How many times the listening connection was lost (tests and the log). */
  losses = 0;

  constructor(
    control: ControlStore,
    private readonly opts: PostgresFeedOptions,
  ) {
    super(control, opts.log);
  }

  override get live(): boolean {
    return this.client !== undefined;
  }

  /** The server process id of the listening connection (tests end it with pg_terminate_backend). */
  get backendPid(): number | undefined {
    return (this.client as unknown as { processID?: number } | undefined)?.processID;
  }

  /**
   * Connects and LISTENs. A first attempt that fails does not stop the server: the node serves with
   * `live` false (no caching) and keeps trying.
   */
  override async start(): Promise<void> {
    this.stopped = false;
    if (!(await this.connect())) this.scheduleReconnect();
    const every = this.opts.heartbeatMs ?? 5000;
    this.heartbeat = setInterval(() => void this.checkAlive(every), every);
    this.heartbeat.unref();
  }

  override async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.heartbeat);
    clearTimeout(this.reconnectTimer);
    await this.connecting;
    const c = this.client;
    this.client = undefined;
    if (c) await c.end().catch(() => undefined);
    await super.stop();
  }

  private connect(): Promise<boolean> {
    this.connecting ??= this.tryConnect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async tryConnect(): Promise<boolean> {
    const c = new pg.Client({
      connectionString: this.opts.connectionString,
      ...(this.opts.schema ? { options: `-c search_path=${this.opts.schema}` } : {}),
      keepAlive: true,
      connectionTimeoutMillis: 5000,
    });
    // Errors of a connection that was never in use (or already replaced) are ignored; the live one's mean it is lost.
    c.on('error', (err) => this.lost(c, err));
    c.on('end', () => this.lost(c, new Error('connection ended')));
    c.on('notification', (m) => {
      if (m.channel !== this.channel || m.payload === undefined) return;
      const change = decodeChange(m.payload);
      if (change) this.deliver(change);
    });
    try {
      await c.connect();
      const schema = this.opts.schema ?? (await c.query<{ schema: string | null }>('SELECT current_schema() AS schema')).rows[0]?.schema;
      if (!schema) throw new Error('PostgreSQL has no current schema: set search_path in DATABASE_URL');
      const channel = changeChannel(schema);
      await c.query(`LISTEN ${quoteIdent(channel)}`);
      if (this.stopped) {
        await c.end().catch(() => undefined);
        return false;
      }
      this.channel = channel;
      this.client = c;
      const wasDown = this.attempt > 0 || this.losses > 0;
      this.attempt = 0;
      // Whatever committed while nobody listened was never heard: drop it all once more.
      if (wasDown) {
        this.resync();
        this.log?.info({ channel }, 'changes: listening again (caches dropped)');
      }
      return true;
    } catch (err) {
      await c.end().catch(() => undefined);
      this.log?.warn({ err: String(err), attempt: this.attempt }, 'changes: could not listen for changes of other nodes; retrying');
      return false;
    }
  }

  /** The live connection failed: from now on changes may be missed, so caches drop everything and hold nothing until LISTEN is back. */
  private lost(c: pg.Client, err: unknown): void {
    if (this.client !== c) return;
    this.client = undefined;
    this.losses++;
    c.end().catch(() => undefined);
    this.resync();
    if (this.stopped) return;
    this.log?.warn({ err: String(err) }, 'changes: lost the connection listening for changes of other nodes; caches dropped, reconnecting');
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.reconnectTimer) return;
    const min = this.opts.minBackoffMs ?? 100;
    const max = this.opts.maxBackoffMs ?? 5000;
    const delay = Math.min(max, min * 2 ** this.attempt) + Math.floor(Math.random() * min);
    this.attempt++;
    this.reconnectTimer = setTimeout(async () => {
      this.reconnectTimer = undefined;
      if (this.stopped || this.client) return;
      if (!(await this.connect())) this.scheduleReconnect();
    }, delay);
    this.reconnectTimer.unref();
  }

  /** A connection that died without a word (a cut network) is found by a query that gets no answer in time. */
  private async checkAlive(timeoutMs: number): Promise<void> {
    const c = this.client;
    if (!c) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        c.query('SELECT 1'),
        new Promise((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer to the heartbeat within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } catch (err) {
      this.lost(c, err);
    } finally {
      clearTimeout(timer);
    }
  }
}
