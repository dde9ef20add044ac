export interface OrganizationRecord {
  id: string;
  name: string;
  createdAt: string;
}

export interface OrganizationStore {
  insert(o: OrganizationRecord): Promise<void>;
  find(id: string): Promise<OrganizationRecord | undefined>;
  /** Start-up bookkeeping (for example: the first-start initialisation was done). */
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
}
