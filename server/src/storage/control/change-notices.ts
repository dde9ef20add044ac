/**
 * `ControlStores.changes`: announcing committed control-data changes (server/src/cluster/, docs/several-nodes.md).
 *
 * - PostgreSQL: `pg_notify` on the channel of the store's schema, with the statement's executor, so a
 *   change announced inside a transaction is delivered to every listening node when it commits and never
 *   when it rolls back (PostgreSQL's own rule for NOTIFY).
 * - Every dialect: this process's own subscribers hear it after the commit, from the store itself (no round
 *   trip; the only delivery on SQLite, where one process is the whole service).
 */
import { sql } from 'kysely';
import { encodeChange, type Change, type ChangeNotices } from '../../cluster/changes.js';
import type { ControlDb } from './open.js';

/** The NOTIFY channel of a schema: nodes sharing a database but not a schema never hear each other. */
export const CHANGE_CHANNEL_PREFIX = 'svc_changes.';
/** A channel name is an identifier (at most 63 bytes): both sides cut it the same way (schema names are ASCII here). */
const MAX_CHANNEL = 63;

export function changeChannel(schema: string): string {
  return `${CHANGE_CHANNEL_PREFIX}${schema}`.slice(0, MAX_CHANNEL);
}

export class KyselyChangeNotices implements ChangeNotices {
  constructor(
    private readonly db: ControlDb,
    private readonly dialect: 'sqlite' | 'postgres',
    /** Hands the change to this process's subscribers: at once outside a transaction, after its commit inside one. */
    private readonly local: (change: Change) => void,
  ) {}

  async publish(change: Change): Promise<void> {
    if (this.dialect === 'postgres') {
      await sql`SELECT pg_notify(left(${CHANGE_CHANNEL_PREFIX}::text || current_schema()::text, ${sql.lit(MAX_CHANNEL)}), ${encodeChange(change)}::text)`.execute(this.db);
    }
    this.local(change);
  }
}
