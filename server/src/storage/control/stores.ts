/** The control store's adapters, bound either to the database or to one transaction. */
import type { ApiKeyStore } from '../../domains/api-keys/store.js';
import type { AuditStore } from '../../domains/audit/store.js';
import type { OrganizationStore } from '../../domains/organizations/store.js';
import type { ProjectStore } from '../../domains/projects/store.js';
import { KyselyApiKeyStore } from './api-keys-store.js';
import { KyselyAuditStore } from './audit-store.js';
import { KyselyOrganizationStore } from './organizations-store.js';
import type { ControlDb } from './open.js';
import { KyselyProjectStore } from './projects-store.js';

export interface ControlStores {
  apiKeys: ApiKeyStore;
  projects: ProjectStore;
  audit: AuditStore;
  organizations: OrganizationStore;
}

export interface ControlStore extends ControlStores {
  dialect: 'sqlite' | 'postgres';
  /** Runs `fn` with stores bound to one transaction; all or nothing. */
  transaction<T>(fn: (tx: ControlStores) => Promise<T>): Promise<T>;
  ping(): Promise<void>;
  close(): Promise<void>;
}

function bind(db: ControlDb): ControlStores {
  return {
    apiKeys: new KyselyApiKeyStore(db),
    projects: new KyselyProjectStore(db),
    audit: new KyselyAuditStore(db),
    organizations: new KyselyOrganizationStore(db),
  };
}

export function controlStore(db: ControlDb, dialect: 'sqlite' | 'postgres'): ControlStore {
  return {
    ...bind(db),
    dialect,
    transaction: (fn) => db.transaction().execute((tx) => fn(bind(tx))),
    ping: async () => {
      await db.selectFrom('svc_meta').select('key').limit(1).execute();
    },
    close: () => db.destroy(),
  };
}
