/**
 * What a quarantine holds, resolved from what exists now (service.ts `TargetResolver`).
 */
import type { AppContext } from '../../context.js';
import type { ResolvedTarget, TargetResolver } from './service.js';

/**
 * The resolver over what exists now: an API key of the organization reachable from the project (a key
 * bound to it, or an org-wide key); an observation key's sightings (each API key that sent it; OAuth
 * sightings cannot be held and are counted as unenforceable). Assets resolve through `assetKeys` when the
 * inventory provides it.
 */
export function targetResolver(
  ctx: Pick<AppContext, 'control' | 'agentRuns'>,
  assetKeys?: (orgId: string, projectId: string, assetId: string) => Promise<string[] | undefined>,
): TargetResolver {
  const bySightings = async (projectId: string, observationKeys: string[]): Promise<ResolvedTarget> => {
    const rows = await ctx.agentRuns.sightingRows(projectId, observationKeys);
    const apiKeyIds = [...new Set(rows.filter((r) => r.source === 'api_key' && r.apiKeyId !== '').map((r) => r.apiKeyId))].sort();
    return { apiKeyIds, unenforceableSightings: rows.filter((r) => r.source !== 'api_key').reduce((a, r) => a + r.sightingCount, 0) };
  };
  return {
    async resolve(orgId, projectId, kind, target) {
      if (kind === 'api_key_id') {
        const key = await ctx.control.apiKeys.findById(orgId, target);
        if (!key || (key.projectId !== null && key.projectId !== projectId)) return undefined;
        return { apiKeyIds: [key.id], unenforceableSightings: 0 };
      }
      if (kind === 'observation_key') return bySightings(projectId, [target]);
      const keys = assetKeys ? await assetKeys(orgId, projectId, target) : undefined;
      return keys && bySightings(projectId, keys);
    },
  };
}
