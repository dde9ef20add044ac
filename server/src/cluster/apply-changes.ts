/**
 * What each node does when it hears a change (docs/several-nodes.md "What a node keeps in memory"). Every
 * request already re-reads API keys, sign-ins, agent approvals, memberships and containment holds from the
 * control store, so a revocation made on one node is refused by every other at its next request. What a node
 * does keep is listed here, with what drops it:
 *
 * - the content policy grids (ContentPolicyService, up to SVC_CONTENT_POLICY_TTL_SECONDS): dropped on
 *   `content_policy.changed` and `project.deleted`; nothing is cached while the feed is not live;
 * - the telemetry retention windows (TelemetryRetentionService, up to SVC_RETENTION_TTL_SECONDS): dropped on
 *   `telemetry_retention.changed` and `project.deleted`; nothing is cached while the feed is not live;
 * - the open live log tails, admitted with a credential (LogTailService, re-checked every few seconds): the
 *   tails of the key, sign-in, approval or person that changed are re-checked at once, so a revoked one ends
 *   within the second; the tails of a deleted project end;
 * - on a resync (changes may have been missed), all of the above.
 */
import type { Config } from '../config.js';
import type { ContentPolicyService } from '../domains/content-policy/service.js';
import type { TelemetryRetentionService } from '../domains/telemetry-retention/service.js';
import type { LogTailService } from '../domains/logs/tail.js';
import type { ControlStore } from '../storage/control/stores.js';
import { InProcessChangeFeed, type ChangeFeed, type FeedLog } from './change-feed.js';
import { PostgresChangeFeed } from './postgres-change-feed.js';

/** The feed this node's control store calls for: PostgreSQL LISTEN/NOTIFY in server mode, local fan-out otherwise. */
export function changeFeedFor(config: Pick<Config, 'databaseUrl'>, control: ControlStore, log?: FeedLog): ChangeFeed {
  return control.dialect === 'postgres' && config.databaseUrl ? new PostgresChangeFeed(control, { connectionString: config.databaseUrl, log }) : new InProcessChangeFeed(control, log);
}

/** Subscribes this node's caches to the feed (before it starts). */
export function applyChanges(feed: ChangeFeed, ctx: { contentPolicy: ContentPolicyService; logTail: LogTailService; telemetryRetention: TelemetryRetentionService }): void {
  const { contentPolicy, logTail, telemetryRetention } = ctx;
  // A policy change applies at the next request of every node; while changes may be missed, nothing is kept.
  contentPolicy.cacheOnlyWhile(() => feed.live);
  contentPolicy.onPolicyChanged((projectId) => feed.publish({ topic: 'content_policy.changed', projectId }));
  feed.subscribe('content_policy.changed', (c) => contentPolicy.invalidate(c.projectId));
  // A retention change hides (or shows again) at the next read of every node, as a policy change does.
  telemetryRetention.cacheOnlyWhile(() => feed.live);
  feed.subscribe('telemetry_retention.changed', (c) => telemetryRetention.invalidate(c.projectId));
  feed.subscribe('project.deleted', (c) => {
    contentPolicy.invalidate(c.projectId);
    telemetryRetention.invalidate(c.projectId);
    logTail.endProject(c.projectId);
  });
  // Open tails re-check their credential now instead of at their next interval.
  feed.subscribe('api_key.changed', (c) => logTail.recheckCredentials((p) => p.keyId === c.keyId));
  feed.subscribe('session.changed', (c) => logTail.recheckCredentials((p) => p.signInId === c.signInId));
  feed.subscribe('agent_connection.revoked', (c) => logTail.recheckCredentials((p) => p.connectionId === c.connectionId));
  feed.subscribe('member.changed', (c) => logTail.recheckCredentials((p) => p.orgId === c.orgId && p.userId === c.userId));
  feed.onResync(() => {
    contentPolicy.invalidateAll();
    telemetryRetention.invalidateAll();
    logTail.recheckCredentials(() => true);
  });
}
