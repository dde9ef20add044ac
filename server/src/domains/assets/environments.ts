/** Where an asset was seen: the deployment environments its observation keys' sightings named. */
import type { AssetRecord } from './store.js';
import type { SightingsReader } from './service.js';
import { MAX_ENVIRONMENTS_SHOWN } from './schemas.js';

/** Observation keys per read of their environments. */
const KEYS_PER_ENVIRONMENT_READ = 1000;

/**
 * Where an asset was seen, from the sightings of its observation keys (never stored with the asset):
 * `environments` every deployment environment they named, most recently seen first (then code point
 * order), at most MAX_ENVIRONMENTS_SHOWN; `environment` the first of them (the environment of the latest
 * sighting that named one). No sighting named one (or the keys have no sightings): `environment` null and
 * `environments` []. The telemetry store could not be read: both null (unknown, never an empty list).
 */
export interface SeenIn {
  environment: string | null;
  environments: string[] | null;
  environmentsTruncated: boolean;
}

/** SeenIn of each asset, by asset id; every asset unknown (nulls) when the telemetry store cannot be read. */
export async function seenIn(telemetry: Pick<SightingsReader, 'sightingEnvironments'>, assets: AssetRecord[]): Promise<Map<string, SeenIn>> {
  const byProject = new Map<string, Set<string>>();
  for (const a of assets) {
    let keys = byProject.get(a.projectId);
    if (!keys) byProject.set(a.projectId, (keys = new Set()));
    for (const k of a.observationKeys) keys.add(k);
  }
  // Per project and key: environment -> last seen (µs).
  const envs = new Map<string, Map<string, number>>();
  try {
    for (const [projectId, set] of byProject) {
      const keys = [...set];
      for (let off = 0; off < keys.length; off += KEYS_PER_ENVIRONMENT_READ) {
        const rows = await telemetry.sightingEnvironments(projectId, keys.slice(off, off + KEYS_PER_ENVIRONMENT_READ), MAX_ENVIRONMENTS_SHOWN + 1);
        for (const r of rows) {
          const id = `${projectId}\n${r.observationKey}`;
          let m = envs.get(id);
          if (!m) envs.set(id, (m = new Map()));
          m.set(r.environment, r.lastSeenUs);
        }
      }
    }
  } catch {
    return new Map(assets.map((a) => [a.id, { environment: null, environments: null, environmentsTruncated: false }]));
  }
  const out = new Map<string, SeenIn>();
  for (const a of assets) {
    const merged = new Map<string, number>();
    for (const k of a.observationKeys)
      for (const [env, lastUs] of envs.get(`${a.projectId}\n${k}`) ?? []) merged.set(env, Math.max(merged.get(env) ?? 0, lastUs));
    // Each key brought its MAX+1 most recent environments, so the MAX most recent of the union are among them.
    const names = [...merged].sort(([x, xu], [y, yu]) => yu - xu || codePoint(x, y)).map(([env]) => env);
    out.set(a.id, { environment: names[0] ?? null, environments: names.slice(0, MAX_ENVIRONMENTS_SHOWN), environmentsTruncated: names.length > MAX_ENVIRONMENTS_SHOWN });
  }
  return out;
}

/** Code unit order (a < b), the order asset keys and environments are sorted in. */
export const codePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
