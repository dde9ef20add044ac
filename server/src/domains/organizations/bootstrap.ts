/**
 * First start on an empty store: one organization, one project and an owner API key holding every
 * scope. A later start never changes them (the SVC_INIT_* variables are then ignored).
 */
import type { Clock, IdGenerator } from '../../lib/clock.js';
import type { ControlStore } from '../../storage/control/stores.js';
import { ALL_SCOPES } from '../api-keys/scopes.js';
import type { KeyedHash } from '../../lib/keyed-hash.js';
import { keyPrefix, newKeySecret, plausibleKey } from '../api-keys/secret.js';
import { MAX_EXPIRY_DAYS } from '../api-keys/service.js';
import type { AuditService } from '../audit/service.js';

export const INITIALIZED = 'initialized_at';

export interface BootstrapResult {
  created: boolean;
  orgId: string;
  projectId: string;
  /** The owner key's secret, only when it was generated now (to be printed once). */
  generatedKey?: string;
}

export async function bootstrap(
  store: ControlStore,
  audit: AuditService,
  clock: Clock,
  ids: IdGenerator,
  init: { orgId?: string; projectId?: string; apiKey?: string },
  keyHash: KeyedHash,
): Promise<BootstrapResult> {
  const done = await store.organizations.getMeta(INITIALIZED);
  if (done) {
    const meta = JSON.parse(done) as { org_id: string; project_id: string };
    return { created: false, orgId: meta.org_id, projectId: meta.project_id };
  }
  if (init.apiKey !== undefined && !plausibleKey(init.apiKey))
    throw new Error('SVC_INIT_API_KEY must be 16 to 256 printable ASCII characters without spaces');
  const now = clock.now();
  const orgId = init.orgId ?? ids.uuid();
  const projectId = init.projectId ?? ids.uuid();
  const secret = init.apiKey ?? newKeySecret();
  const keyId = ids.uuid();
  await store.transaction(async (tx) => {
    await tx.organizations.insert({ id: orgId, name: 'default', createdAt: now.toISOString() });
    await tx.projects.insert({ id: projectId, orgId, name: 'default', samplingRate: 1, createdAt: now.toISOString(), deletedAt: null });
    await tx.apiKeys.insert({
      id: keyId,
      orgId,
      projectId: null,
      name: 'owner (initial)',
      keyHash: keyHash.hash(secret),
      keyPrefix: keyPrefix(secret),
      scopes: [...ALL_SCOPES],
      status: 'active',
      expiresAt: new Date(now.getTime() + MAX_EXPIRY_DAYS * 86_400_000).toISOString(),
      lastUsedAt: null,
      createdAt: now.toISOString(),
      revokedAt: null,
      userId: null,
      createdByApiKeyId: null,
      createdByState: 'system',
    });
    await audit.record(tx, 'system', orgId, {
      projectId: null,
      eventType: 'api_key_created',
      resource: 'api_key',
      action: 'create',
      result: 'success',
      toolName: null,
      targetId: keyId,
      targetApiKeyId: keyId,
      metadata: { scopes: [...ALL_SCOPES], via: 'bootstrap' },
    });
    await tx.organizations.setMeta(INITIALIZED, JSON.stringify({ at: now.toISOString(), org_id: orgId, project_id: projectId }));
  });
  return { created: true, orgId, projectId, generatedKey: init.apiKey ? undefined : secret };
}

/**
 * What the first start prints for the person who ran it: the three variables the CLI and the
 * quickstart read, ready to paste. The owner key is organization-wide, so the block also names
 * the project it created; without it every project-scoped command would have to ask.
 */
export function firstStartBlock(o: { apiUrl: string; orgId: string; projectId: string; generatedKey?: string }): string {
  const key = o.generatedKey
    ? `export SVC_API_KEY=${o.generatedKey}`
    : '# SVC_API_KEY: the SVC_INIT_API_KEY this store was created with';
  return (
    `\nsvc initialized an empty store: organization ${o.orgId}, project ${o.projectId}.\n` +
    (o.generatedKey ? 'The owner API key below holds every scope and is shown only now: store it.\n' : '') +
    'Paste these lines into your shell to use the svc CLI:\n\n' +
    `export SVC_API_URL=${o.apiUrl}\n${key}\nexport SVC_PROJECT=${o.projectId}\n\n`
  );
}
