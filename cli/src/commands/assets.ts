/**
 * `svc assets list|get|versions|declare|review|classify|own|attribution` and `svc signals list|get|acknowledge|dismiss`: the
 * agent inventory and its review signals (`/api/v1/assets`, `/review-signals`; reads need agents:read,
 * writes agents:write). Enumerated values are given short (`approved`, `high`) or in full
 * (`APPROVAL_STATE_APPROVED`).
 */
import { InvalidArgumentError, type Command } from 'commander';
import type { Context } from '../context.js';
import { usageError } from '../errors.js';
import { collect, nonEmpty, positiveInt } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';

export const MAX_PAGE = 200;

/** An enumeration of the API: its full names are `<prefix><SHORT>`. */
interface Enum {
  prefix: string;
  values: readonly string[];
}
export const APPROVAL: Enum = { prefix: 'APPROVAL_STATE_', values: ['unreviewed', 'approved', 'rejected'] };
export const TIER: Enum = { prefix: 'RISK_TIER_', values: ['unassessed', 'low', 'medium', 'high', 'critical'] };
export const CLASSIFICATION: Enum = { prefix: 'DATA_CLASSIFICATION_', values: ['unclassified', 'public', 'internal', 'confidential', 'restricted'] };
export const SIGNAL_STATUS: Enum = { prefix: 'REVIEW_SIGNAL_STATUS_', values: ['open', 'acknowledged', 'resolved', 'dismissed'] };
export const SIGNAL_SEVERITY: Enum = { prefix: 'REVIEW_SIGNAL_SEVERITY_', values: ['low', 'medium', 'high', 'critical'] };
export const SIGNAL_KIND: Enum = {
  prefix: 'REVIEW_SIGNAL_KIND_',
  values: [
    'shadow_asset',
    'abom_drift',
    'config_unregistered',
    'killed_asset_credential',
    'poisoned_memory_item',
    'unreviewed_asset',
    'unowned_asset',
    'revoked_authority_exercised',
  ],
};

/** `approved` or `APPROVAL_STATE_APPROVED` -> `APPROVAL_STATE_APPROVED`; anything else is a usage error naming the accepted values. */
export function enumValue(flag: string, e: Enum, value: string): string {
  const v = value.trim();
  const short = v.toUpperCase().startsWith(e.prefix) ? v.slice(e.prefix.length).toLowerCase() : v.toLowerCase();
  if (!e.values.includes(short)) throw new InvalidArgumentError(`${flag} must be one of ${e.values.join(', ')}, got "${value}".`);
  return `${e.prefix}${short.toUpperCase()}`;
}

const one = (flag: string, e: Enum) => (value: string) => enumValue(flag, e, value);
/** Repeatable and comma-separated. */
const many = (flag: string, e: Enum) => (value: string, previous: string[] | undefined) => {
  const out = [...(previous ?? [])];
  for (const item of value.split(',')) {
    const full = enumValue(flag, e, item);
    if (!out.includes(full)) out.push(full);
  }
  return out;
};

const short = (e: Enum, v: string | undefined) => (v?.startsWith(e.prefix) ? v.slice(e.prefix.length).toLowerCase() : v);

export interface Asset {
  id: string;
  name: string;
  shadow: boolean;
  observation_keys: string[];
  approval_state: string;
  risk_tier: string;
  data_classification: string;
  owner_team: string | null;
  owner_principal: string | null;
  quarantined?: boolean;
  version: number;
  created_at: string;
  [k: string]: unknown;
}

export interface ReviewSignal {
  id: string;
  kind: string;
  status: string;
  severity: string;
  subject_ref: string;
  asset_id: string | null;
  last_seen_at: string;
  [k: string]: unknown;
}

interface Attribution {
  availability: string;
  unavailable_reason?: string;
  mappings: { observation_key: string; asset_id: string | null; credentials?: { source: string; api_key_id?: string; first_seen: string; last_seen: string; sighting_count: number }[] }[];
}

const ASSET_HEADERS = ['ID', 'NAME', 'SHADOW', 'APPROVAL', 'RISK', 'CLASSIFICATION', 'OWNER', 'KEYS'];
const assetRow = (a: Asset): Cell[] => [
  a.id,
  a.name,
  a.shadow ? 'yes' : 'no',
  short(APPROVAL, a.approval_state),
  short(TIER, a.risk_tier),
  short(CLASSIFICATION, a.data_classification),
  a.owner_team ?? a.owner_principal ?? undefined,
  (a.observation_keys ?? []).join(','),
];

const SIGNAL_HEADERS = ['ID', 'KIND', 'SEVERITY', 'STATUS', 'SUBJECT', 'ASSET', 'LAST_SEEN_AT'];
const signalRow = (s: ReviewSignal): Cell[] => [
  s.id,
  short(SIGNAL_KIND, s.kind),
  short(SIGNAL_SEVERITY, s.severity),
  short(SIGNAL_STATUS, s.status),
  s.subject_ref,
  s.asset_id ?? undefined,
  s.last_seen_at,
];

const fields = (o: Record<string, unknown>, color: boolean) =>
  renderTable(
    ['FIELD', 'VALUE'],
    Object.entries(o ?? {}).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v as Cell)]),
    { color },
  );

export function renderAttribution(a: Attribution, color: boolean): string {
  if (a.availability !== 'answered') return `attribution unavailable (${a.unavailable_reason ?? 'unknown'}): the telemetry store could not be read\n`;
  const rows: Cell[][] = [];
  for (const m of a.mappings ?? []) {
    const creds = m.credentials ?? [];
    if (creds.length === 0) rows.push([m.observation_key, m.asset_id ?? undefined, 'none recorded', undefined, undefined, undefined]);
    for (const c of creds) rows.push([m.observation_key, m.asset_id ?? undefined, c.source, c.api_key_id, c.last_seen, c.sighting_count]);
  }
  return renderTable(['OBSERVATION_KEY', 'ASSET', 'SOURCE', 'API_KEY_ID', 'LAST_SEEN', 'SIGHTINGS'], rows, { color });
}

const assetPath = (id: string, suffix = '') => `/assets/${encodeURIComponent(id)}${suffix}`;

export function registerAssets(program: Command, ctx: Context): void {
  const projectId = () => ctx.activeProject()?.value;
  const query = () => ({ project_id: projectId() });
  /** A write to one asset; prints the updated asset. */
  const write = async (method: 'POST' | 'PUT', id: string, suffix: string, body: Record<string, unknown>) => {
    const client = ctx.client();
    const a = await (method === 'POST' ? client.post<Asset>(assetPath(id, suffix), { body }) : client.put<Asset>(assetPath(id, suffix), { body }));
    ctx.print(a, () => fields(a, ctx.color));
  };
  const assets = program.command('assets').description('the agent inventory: list, show, declare, review, classify, set owners, attribution');

  assets
    .command('list')
    .description('list the assets of the active project, newest first')
    .option('--shadow', 'only discovered (undeclared) assets')
    .option('--declared', 'only declared assets')
    .option('--risk-tier <tier>', `repeatable or comma-separated: ${TIER.values.join(', ')}`, many('--risk-tier', TIER))
    .option('--approval <state>', `repeatable or comma-separated: ${APPROVAL.values.join(', ')}`, many('--approval', APPROVAL))
    .option('--classification <c>', `repeatable or comma-separated: ${CLASSIFICATION.values.join(', ')}`, many('--classification', CLASSIFICATION))
    .option('--owner-team <team>', 'only assets of this team', nonEmpty('--owner-team'))
    .option('--unowned', 'only assets with neither owner team nor owner principal')
    .option('--limit <n>', `page size (server default 100, at most ${MAX_PAGE})`, positiveInt('--limit', MAX_PAGE))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(
      async (opts: { shadow?: boolean; declared?: boolean; riskTier?: string[]; approval?: string[]; classification?: string[]; ownerTeam?: string; unowned?: boolean; limit?: number; cursor?: string; all?: boolean }) => {
        if (opts.shadow && opts.declared) throw usageError('--shadow and --declared contradict each other');
        const { items, next_cursor } = await readPages<Asset>(ctx, '/assets', 'assets', opts, {
          ...query(),
          shadow: opts.shadow ? 'true' : opts.declared ? 'false' : undefined,
          risk_tier: opts.riskTier,
          approval_state: opts.approval,
          data_classification: opts.classification,
          owner_team: opts.ownerTeam,
          owned: opts.unowned ? 'false' : undefined,
        });
        ctx.print({ assets: items, next_cursor }, () => renderTable(ASSET_HEADERS, items.map(assetRow), { color: ctx.color }));
        if (next_cursor !== null && ctx.format === 'table') ctx.note(`more assets: pass --cursor ${next_cursor} (or --all)`);
      },
    );

  assets
    .command('get')
    .description('show one asset')
    .argument('<asset_id>', 'asset id')
    .action(async (id: string) => {
      const a = await ctx.client().get<Asset>(assetPath(id), { query: query() });
      ctx.print(a, () => fields(a, ctx.color));
    });

  assets
    .command('versions')
    .description('every version of an asset, oldest first (every page)')
    .argument('<asset_id>', 'asset id')
    .action(async (id: string) => {
      const { items } = await readPages<{ version: number; change: string; actor: string | null; occurred_at: string }>(ctx, assetPath(id, '/versions'), 'versions', { all: true, limit: MAX_PAGE }, query());
      ctx.print({ versions: items, next_cursor: null }, () =>
        renderTable(['VERSION', 'CHANGE', 'ACTOR', 'OCCURRED_AT'], items.map((v) => [v.version, v.change, v.actor ?? undefined, v.occurred_at]), { color: ctx.color }),
      );
    });

  assets
    .command('declare')
    .description('declare an agent asset with its observation keys')
    .argument('<name>', 'asset name')
    .option('--key <observation_key>', 'an observation key of the agent (repeatable)', collect)
    .option('--description <text>', 'free text', nonEmpty('--description'))
    .action(async (name: string, opts: { key?: string[]; description?: string }) => {
      const body: Record<string, unknown> = { project_id: projectId(), name, observation_keys: opts.key ?? [] };
      if (opts.description !== undefined) body.description = opts.description;
      const a = await ctx.client().post<Asset>('/assets', { body });
      ctx.print(a, () => fields(a, ctx.color));
    });

  assets
    .command('review')
    .description('record a review: approval state, risk tier and reason (you are the approver)')
    .argument('<asset_id>', 'asset id')
    .requiredOption('--state <state>', `approval: ${APPROVAL.values.join(', ')}`, one('--state', APPROVAL))
    .requiredOption('--risk-tier <tier>', `risk tier: ${TIER.values.join(', ')}`, one('--risk-tier', TIER))
    .requiredOption('--reason <text>', 'why', nonEmpty('--reason'))
    .action(async (id: string, opts: { state: string; riskTier: string; reason: string }) => {
      await write('POST', id, '/reviews', { project_id: projectId(), approval_state: opts.state, risk_tier: opts.riskTier, reason: opts.reason });
    });

  assets
    .command('classify')
    .description('set the data classification of an asset (you are the classifier)')
    .argument('<asset_id>', 'asset id')
    .requiredOption('--classification <c>', `one of ${CLASSIFICATION.values.join(', ')}`, one('--classification', CLASSIFICATION))
    .requiredOption('--reason <text>', 'why', nonEmpty('--reason'))
    .action(async (id: string, opts: { classification: string; reason: string }) => {
      await write('PUT', id, '/data-classification', { project_id: projectId(), data_classification: opts.classification, reason: opts.reason });
    });

  assets
    .command('own')
    .description('set the owner team and/or owner principal of an asset')
    .argument('<asset_id>', 'asset id')
    .option('--team <team>', 'owning team', nonEmpty('--team'))
    .option('--principal <principal>', 'owning person or principal', nonEmpty('--principal'))
    .option('--clear-team', 'remove the owner team')
    .option('--clear-principal', 'remove the owner principal')
    .action(async (id: string, opts: { team?: string; principal?: string; clearTeam?: boolean; clearPrincipal?: boolean }) => {
      if (opts.team !== undefined && opts.clearTeam) throw usageError('--team and --clear-team contradict each other');
      if (opts.principal !== undefined && opts.clearPrincipal) throw usageError('--principal and --clear-principal contradict each other');
      const body: Record<string, unknown> = { project_id: projectId() };
      if (opts.team !== undefined || opts.clearTeam) body.owner_team = opts.team ?? null;
      if (opts.principal !== undefined || opts.clearPrincipal) body.owner_principal = opts.principal ?? null;
      if (Object.keys(body).length === 1) throw usageError('nothing to set: pass --team and/or --principal (or --clear-team, --clear-principal)');
      await write('PUT', id, '/ownership', body);
    });

  assets
    .command('attribution')
    .description('which asset each observation key maps to and which credentials sent it: give keys, or --asset')
    .argument('[observation_key...]', 'observation keys')
    .option('--asset <asset_id>', 'every key of this asset', nonEmpty('--asset'))
    .action(async (keys: string[], opts: { asset?: string }) => {
      if (opts.asset !== undefined && keys.length > 0) throw usageError('give observation keys or --asset, not both');
      if (opts.asset === undefined && keys.length === 0) throw usageError('give at least one observation key, or --asset');
      const res = opts.asset
        ? await ctx.client().get<Attribution>(assetPath(opts.asset, '/attribution'), { query: query() })
        : await ctx.client().get<Attribution>('/assets/attribution', { query: { ...query(), observation_key: keys } });
      ctx.print(res, () => renderAttribution(res, ctx.color));
    });

  const signals = program.command('signals').description('review signals: what in the agent inventory needs a person');
  signals
    .command('list')
    .description('list review signals, newest first by last_seen_at')
    .option('--status <status>', `repeatable or comma-separated: ${SIGNAL_STATUS.values.join(', ')}`, many('--status', SIGNAL_STATUS))
    .option('--kind <kind>', `repeatable or comma-separated: ${SIGNAL_KIND.values.join(', ')}`, many('--kind', SIGNAL_KIND))
    .option('--severity <severity>', `repeatable or comma-separated: ${SIGNAL_SEVERITY.values.join(', ')}`, many('--severity', SIGNAL_SEVERITY))
    .option('--asset <asset_id>', 'only signals about this asset', nonEmpty('--asset'))
    .option('--limit <n>', `page size (server default 100, at most ${MAX_PAGE})`, positiveInt('--limit', MAX_PAGE))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { status?: string[]; kind?: string[]; severity?: string[]; asset?: string; limit?: number; cursor?: string; all?: boolean }) => {
      const { items, next_cursor } = await readPages<ReviewSignal>(ctx, '/review-signals', 'review_signals', opts, {
        ...query(),
        status: opts.status,
        kind: opts.kind,
        severity: opts.severity,
        asset_id: opts.asset,
      });
      ctx.print({ review_signals: items, next_cursor }, () => renderTable(SIGNAL_HEADERS, items.map(signalRow), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more signals: pass --cursor ${next_cursor} (or --all)`);
    });

  const showSignal = (s: ReviewSignal) =>
    ctx.print(s, () => renderTable(['FIELD', 'VALUE'], Object.entries(s).map(([k, v]) => [k, v === null || typeof v !== 'object' ? (v as Cell) : JSON.stringify(v)]), { color: ctx.color }));
  const signalPath = (id: string, suffix = '') => `/review-signals/${encodeURIComponent(id)}${suffix}`;
  signals
    .command('get')
    .description('show one review signal')
    .argument('<id>', 'signal id')
    .action(async (id: string) => showSignal(await ctx.client().get<ReviewSignal>(signalPath(id))));
  signals
    .command('acknowledge')
    .description('acknowledge an open signal (someone is on it); who acknowledged comes from the credential')
    .argument('<id>', 'signal id')
    .action(async (id: string) => showSignal(await ctx.client().post<ReviewSignal>(signalPath(id, '/acknowledge'))));
  signals
    .command('dismiss')
    .description('dismiss a signal for good, with a reason')
    .argument('<id>', 'signal id')
    .requiredOption('--reason <text>', 'why (required)')
    .action(async (id: string, opts: { reason: string }) => showSignal(await ctx.client().post<ReviewSignal>(signalPath(id, '/dismiss'), { body: { reason: opts.reason } })));
}
