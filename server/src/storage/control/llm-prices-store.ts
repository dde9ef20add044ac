import type { LlmPricePosition, LlmPriceRecord, LlmPriceStore } from '../../domains/llm/store.js';
import type { ControlDb } from './open.js';
import type { LlmPricesTable } from './schema.js';

/** The any-provider entry is stored with provider '' so that (project, model, provider) can be the primary key. */
const ANY = '';
const column = (provider: string | null) => provider ?? ANY;
/** Keeps IN lists well below the parameter limits of both engines. */
const CHUNK = 500;

const toRecord = (r: LlmPricesTable): LlmPriceRecord => ({
  orgId: r.org_id,
  projectId: r.project_id,
  model: r.model,
  provider: r.provider === ANY ? null : r.provider,
  inputMicrosPerMillion: Number(r.input_micros_per_mtok),
  outputMicrosPerMillion: Number(r.output_micros_per_mtok),
  updatedAt: r.updated_at,
  updatedByUserId: r.updated_by_user_id,
  updatedByApiKeyId: r.updated_by_api_key_id,
});

export class KyselyLlmPriceStore implements LlmPriceStore {
  constructor(private readonly db: ControlDb) {}

  async put(r: LlmPriceRecord) {
    const values = {
      org_id: r.orgId,
      input_micros_per_mtok: r.inputMicrosPerMillion,
      output_micros_per_mtok: r.outputMicrosPerMillion,
      updated_at: r.updatedAt,
      updated_by_user_id: r.updatedByUserId,
      updated_by_api_key_id: r.updatedByApiKeyId,
    };
    await this.db
      .insertInto('llm_prices')
      .values({ project_id: r.projectId, model: r.model, provider: column(r.provider), ...values })
      .onConflict((oc) => oc.columns(['project_id', 'model', 'provider']).doUpdateSet(values))
      .execute();
  }

  async find(projectId: string, model: string, provider: string | null) {
    const r = await this.db
      .selectFrom('llm_prices')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('model', '=', model)
      .where('provider', '=', column(provider))
      .executeTakeFirst();
    return r && toRecord(r);
  }

  async findModels(projectId: string, models: readonly string[]) {
    const distinct = [...new Set(models)];
    const out: LlmPriceRecord[] = [];
    for (let i = 0; i < distinct.length; i += CHUNK) {
      const rows = await this.db
        .selectFrom('llm_prices')
        .selectAll()
        .where('project_id', '=', projectId)
        .where('model', 'in', distinct.slice(i, i + CHUNK))
        .execute();
      out.push(...rows.map(toRecord));
    }
    return out;
  }

  async list(projectId: string, opts: { model?: string; after?: LlmPricePosition; limit: number }) {
    let sel = this.db.selectFrom('llm_prices').selectAll().where('project_id', '=', projectId);
    if (opts.model !== undefined) sel = sel.where('model', '=', opts.model);
    if (opts.after) {
      const { model } = opts.after;
      const provider = column(opts.after.provider);
      sel = sel.where((eb) => eb.or([eb('model', '>', model), eb.and([eb('model', '=', model), eb('provider', '>', provider)])]));
    }
    const rows = await sel.orderBy('model', 'asc').orderBy('provider', 'asc').limit(opts.limit + 1).execute();
    return rows.map(toRecord);
  }

  async count(projectId: string) {
    const r = await this.db
      .selectFrom('llm_prices')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('project_id', '=', projectId)
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async delete(projectId: string, model: string, provider: string | null) {
    const r = await this.db
      .deleteFrom('llm_prices')
      .where('project_id', '=', projectId)
      .where('model', '=', model)
      .where('provider', '=', column(provider))
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async deleteProject(projectId: string) {
    const r = await this.db.deleteFrom('llm_prices').where('project_id', '=', projectId).executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
