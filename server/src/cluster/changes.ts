/**
 * The control-data changes a node announces so that every node drops what it holds about them
 * (docs/several-nodes.md). A change names what changed by id, never what it changed to and never a
 * secret: a node that hears it re-reads the store. Each is sent when the write commits (inside the
 * writing transaction on PostgreSQL: NOTIFY is delivered at commit, and not at all on rollback).
 */

export type Change =
  /** A key was revoked, its scopes narrowed, or a containment froze, released or revoked it. */
  | { topic: 'api_key.changed'; keyId: string }
  /** A sign-in ended (logout, reuse of a rotated refresh credential) or its access credential was rotated. */
  | { topic: 'session.changed'; signInId: string }
  /** A person's role changed or they were removed from the organization (their sessions, keys and approvals follow). */
  | { topic: 'member.changed'; orgId: string; userId: string }
  /** An agent approval (OAuth connection) was revoked, with every token of it. */
  | { topic: 'agent_connection.revoked'; connectionId: string }
  /** A project's content policy grid was replaced. */
  | { topic: 'content_policy.changed'; projectId: string }
  /** A project's telemetry retention windows were replaced (docs/retention.md). */
  | { topic: 'telemetry_retention.changed'; projectId: string }
  /** A project was deleted. */
  | { topic: 'project.deleted'; projectId: string };

export type ChangeTopic = Change['topic'];
export type ChangeOf<T extends ChangeTopic> = Extract<Change, { topic: T }>;

/** The id fields of each topic (what a payload must carry; anything else is dropped). */
const FIELDS: { [T in ChangeTopic]: readonly Exclude<keyof ChangeOf<T>, 'topic'>[] } = {
  'api_key.changed': ['keyId'],
  'session.changed': ['signInId'],
  'member.changed': ['orgId', 'userId'],
  'agent_connection.revoked': ['connectionId'],
  'content_policy.changed': ['projectId'],
  'telemetry_retention.changed': ['projectId'],
  'project.deleted': ['projectId'],
};

export const CHANGE_TOPICS = Object.keys(FIELDS) as ChangeTopic[];

/** Ids are short; a NOTIFY payload must stay under 8000 bytes, and these stay under 300. */
const MAX_ID = 128;

/** The wire form: compact JSON of the topic and its ids. */
export function encodeChange(c: Change): string {
  const out: Record<string, string> = { topic: c.topic };
  for (const f of FIELDS[c.topic] as readonly string[]) out[f] = (c as unknown as Record<string, string>)[f];
  return JSON.stringify(out);
}

/**
 * Reads a payload; undefined for anything malformed or of a topic this version does not know (a newer
 * node during a rolling upgrade), which is ignored.
 */
export function decodeChange(payload: string): Change | undefined {
  let v: unknown;
  try {
    v = JSON.parse(payload);
  } catch {
    return undefined;
  }
  if (typeof v !== 'object' || v === null) return undefined;
  const o = v as Record<string, unknown>;
  const topic = o.topic;
  if (typeof topic !== 'string' || !Object.hasOwn(FIELDS, topic)) return undefined;
  const out: Record<string, string> = { topic };
  for (const f of FIELDS[topic as ChangeTopic] as readonly string[]) {
    const id = o[f];
    if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID) return undefined;
    out[f] = id;
  }
  return out as unknown as Change;
}

/** Where the committed changes of a control store are published (`ControlStores.changes`, bound to a transaction or not). */
export interface ChangeNotices {
  /**
   * Announces a change. Bound to a transaction: sent when it commits, dropped on rollback. Outside one:
   * sent at once. Call it after (or with) the write it announces, never before.
   */
  publish(change: Change): Promise<void>;
}
