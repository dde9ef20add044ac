/** How numbers and times from the API are shown. Something the API did not measure is never a zero. */

/** Nanodollars as dollars: $0.0123 (four significant decimals for small amounts). */
export function dollars(nanos: number): string {
  const d = nanos / 1e9;
  if (d === 0) return '$0';
  if (Math.abs(d) < 0.01) return `$${d.toPrecision(3)}`;
  return `$${d.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 4 })}`;
}

export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '—';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** A time as the person's local date and time, with the ISO instant as its title (ui.tsx Time). */
export function localTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** Why a cost is not shown, in words (the API's `cost_unavailable_reason`). */
export const COST_UNAVAILABLE: Record<string, string> = {
  no_model_calls: 'no model calls',
  missing_usage: 'usage not reported',
  unpriced_model: 'a model has no price',
  run_cost_unavailable: 'a run has no measurable cost',
  zero_cost: 'the costs sum to zero, which is not shown as a measured cost',
};

/** `CANONICAL_OPERATION_EXECUTE_TOOL` -> `execute tool`. */
export function operation(op: string | null | undefined): string {
  if (!op) return '—';
  return op.replace(/^CANONICAL_OPERATION_/, '').replace(/^OUTCOME_/, '').toLowerCase().replace(/_/g, ' ');
}

/** An API enumeration value in words: `RISK_TIER_UNASSESSED` -> `unassessed` (the prefix names the enumeration). */
export function enumWords(value: string | null | undefined, prefix: string): string {
  if (!value) return '—';
  return value.replace(new RegExp(`^${prefix}_`), '').toLowerCase().replace(/_/g, ' ');
}

/** An RFC 3339 time as microseconds since the epoch (the API's times carry up to six fractional digits), for ordering. */
export function isoMicros(iso: string): number {
  const frac = /\.(\d+)/.exec(iso)?.[1] ?? '';
  const ms = Date.parse(iso);
  return Math.floor(ms / 1000) * 1_000_000 + Number((frac + '000000').slice(0, 6));
}
