/**
 * `/p/{p}/metrics?name=`: the metric explorer. Names with their type and unit (GET /metrics/names), the
 * chosen metric's aggregate chart (POST /metrics/aggregate) with aggregation, step, window, filters and
 * group-by, all in the URL; a histogram also as a heatmap (POST /metrics/histogram); a forecast with its
 * band (POST /metrics/forecast), or the reason the API gives for not forecasting.
 */
import { useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { useLoad } from '../api/hooks';
import type { paths } from '../api/schema';
import { TimeChart, type Series } from '../chart';
import { Heatmap } from '../heatmap';
import { navigate, setQuery, useLocation } from '../router';
import { ErrorNote, Field, Loading, Page, Unavailable } from '../ui';

type AggregateBody = paths['/api/v1/metrics/aggregate']['post']['requestBody']['content']['application/json'];
type Aggregation = NonNullable<AggregateBody['aggregation']>;
type Step = NonNullable<AggregateBody['step']>;
const AGGREGATIONS: Aggregation[] = ['avg', 'sum', 'min', 'max', 'count', 'p50', 'p95', 'p99', 'stddev', 'variance'];
const STEPS: Step[] = ['1s', '5s', '10s', '30s', '1m', '5m', '10m', '15m', '30m', '1h', '6h', '12h', '1d', '7d'];
const FORECAST_INTERVALS = new Set(['1m', '5m', '10m', '15m', '30m', '1h', '6h', '12h', '1d']);

/** `key=a|b` filters of the URL (one per `filter` parameter) as the API's `{key, values}`. */
function parseFilters(raw: string[]): { key: string; values: string[] }[] {
  return raw
    .map((f) => {
      const at = f.indexOf('=');
      return at > 0 ? { key: f.slice(0, at).trim(), values: f.slice(at + 1).split('|').map((v) => v.trim()).filter(Boolean) } : { key: f.trim(), values: [] };
    })
    .filter((f) => f.key);
}

export default function Metrics({ params }: { params: Record<string, string> }) {
  const project = params.project;
  const { query } = useLocation();
  const name = query.get('name') ?? '';
  const names = useLoad(async () => ok(await api.GET('/api/v1/metrics/names', { params: { query: { project_id: project, start_time: '30d' } } })), [project]);
  const [search, setSearch] = useState('');
  const chosen = names.data?.metrics.find((m) => m.name === name);
  const shown = (names.data?.metrics ?? []).filter((m) => m.name.toLowerCase().includes(search.toLowerCase()));
  return (
    <Page title="Metrics">
      <div className="split">
        <nav className="card names" aria-label="Metric names">
          <Field label="Find a metric">
            <input type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
          </Field>
          <ErrorNote error={names.error} what="The metric names could not be read" />
          {names.data ? (
            <>
              <ul className="plain name-list">
                {shown.map((m) => (
                  <li key={m.name}>
                    <button type="button" className={`link ${m.name === name ? 'current' : ''}`} aria-current={m.name === name ? 'true' : undefined} onClick={() => setQuery({ name: m.name })}>
                      {m.name}
                    </button>{' '}
                    <span className="muted">{m.type ?? 'type not reported'}{m.unit ? `, ${m.unit}` : ''}</span>
                  </li>
                ))}
              </ul>
              {!names.data.metrics.length ? <p className="muted">No metric in the last 30 days. Send some over OTLP (<code>/v1/metrics</code>).</p> : null}
              {names.data.truncated ? <p className="muted">The first {names.data.metrics.length} of {names.data.total_count} names; type more to narrow.</p> : null}
            </>
          ) : names.loading ? <Loading /> : null}
        </nav>
        <div className="explore">
          {name ? <Explorer key={name} project={project} name={name} type={chosen?.type} unit={chosen?.unit} description={chosen?.description} /> : <p className="muted">Choose a metric.</p>}
        </div>
      </div>
    </Page>
  );
}

function Explorer({ project, name, type, unit, description }: { project: string; name: string; type?: string; unit?: string; description?: string }) {
  const { query } = useLocation();
  const q = {
    agg: (query.get('agg') ?? (type === 'histogram' ? 'p95' : type === 'counter' ? 'sum' : 'avg')) as Aggregation,
    step: (query.get('step') ?? '5m') as Step,
    since: query.get('since') ?? '24h',
    until: query.get('until') ?? '',
    group_by: query.get('group_by') ?? '',
    filters: query.getAll('filter'),
    service: query.get('service') ?? '',
    env: query.get('env') ?? '',
    forecast: query.get('forecast') === '1',
  };
  const deps = [project, name, JSON.stringify(q)];
  const time_range = { start: q.since, ...(q.until ? { end: q.until } : {}) };
  const body: AggregateBody = {
    metric_name: name,
    aggregation: q.agg,
    step: q.step,
    time_range,
    ...(q.group_by ? { group_by: q.group_by.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
    ...(q.filters.length ? { filters: parseFilters(q.filters) } : {}),
    ...(q.service ? { service_name: q.service } : {}),
    ...(q.env ? { environment: q.env } : {}),
  };
  const agg = useLoad(async () => ok(await api.POST('/api/v1/metrics/aggregate', { params: { query: { project_id: project } }, body })), deps);
  const histogram = useLoad(
    async () =>
      type === 'histogram'
        ? ok(await api.POST('/api/v1/metrics/histogram', { params: { query: { project_id: project } }, body: { metric_name: name, step: q.step, time_range, ...(q.env ? { environment: q.env } : {}) } }))
        : null,
    [...deps, type],
  );
  const interval = FORECAST_INTERVALS.has(q.step) ? (q.step as '1h') : '1h';
  const forecast = useLoad(
    async () => (q.forecast ? ok(await api.POST('/api/v1/metrics/forecast', { params: { query: { project_id: project } }, body: { metric_name: name, interval, ...(q.env ? { environment: q.env } : {}) } })) : null),
    deps,
  );

  const series: Series[] = (agg.data?.series ?? []).map((s) => ({
    label: Object.keys(s.labels).length ? Object.entries(s.labels).map(([k, v]) => `${k}=${v}`).join(', ') : `${q.agg}(${name})`,
    points: s.points.map((p) => ({ t: Date.parse(p.timestamp), v: p.value })),
  }));
  const bands = [];
  if (forecast.data && forecast.data.status === 'FORECAST_FIT_STATUS_READY') {
    const f = forecast.data.forecast.map((p) => ({ t: Date.parse(p.timestamp), ...p }));
    series.push({ label: 'forecast', points: f.map((p) => ({ t: p.t, v: p.expected })) });
    series.push({ label: 'forecast lower', points: f.map((p) => ({ t: p.t, v: p.lower })) });
    series.push({ label: 'forecast upper', points: f.map((p) => ({ t: p.t, v: p.upper })) });
    bands.push({ lower: series.length - 2, upper: series.length - 1 });
  }

  return (
    <>
      <h2 className="mono">{name}</h2>
      <p className="muted">{type ?? 'type not reported'}{unit ? ` · ${unit}` : ''}{description ? ` · ${description}` : ''}</p>
      <Controls initial={q} histogram={type === 'histogram'} />
      <ErrorNote error={agg.error} what="The chart could not be drawn" />
      {agg.data ? (
        <>
          {agg.data.estimated ? <p className="muted">Percentiles of a histogram are estimates, interpolated within its buckets.</p> : null}
          {agg.data.series.length ? (
            <TimeChart series={series} bands={bands} unit={unit} label={`${q.agg} of ${name} per ${q.step}`} />
          ) : (
            <p className="muted empty">No point of {name} in this window matches.</p>
          )}
        </>
      ) : agg.loading ? <Loading what="Loading the chart" /> : null}
      {q.forecast ? (
        <section aria-labelledby="forecast-h">
          <h3 id="forecast-h">Forecast, {interval} steps</h3>
          <ErrorNote error={forecast.error} what="No forecast" />
          {forecast.data ? (
            forecast.data.status === 'FORECAST_FIT_STATUS_READY' ? (
              <p className="muted">{forecast.data.horizon} points ahead, band {forecast.data.band_semantics.replace(/_/g, ' ')}, from {forecast.data.history_points} points of history.</p>
            ) : (
              <Unavailable why={forecast.data.status_reason} />
            )
          ) : forecast.loading ? <Loading /> : null}
        </section>
      ) : null}
      {type === 'histogram' ? (
        <section aria-labelledby="heatmap-h">
          <h3 id="heatmap-h">Distribution</h3>
          <ErrorNote error={histogram.error} what="The heatmap could not be drawn" />
          {histogram.data ? <Heatmap cells={histogram.data.cells} unit={unit} label={`distribution of ${name}`} /> : histogram.loading ? <Loading /> : null}
        </section>
      ) : null}
    </>
  );
}

function Controls({ initial, histogram }: { initial: { agg: string; step: string; since: string; until: string; group_by: string; filters: string[]; service: string; env: string; forecast: boolean }; histogram: boolean }) {
  const [f, setF] = useState({ ...initial, filters: initial.filters.join('\n') });
  const apply = (e: FormEvent) => {
    e.preventDefault();
    const url = new URL(window.location.href);
    const set = (k: string, v: string) => (v ? url.searchParams.set(k, v) : url.searchParams.delete(k));
    set('agg', f.agg);
    set('step', f.step);
    set('since', f.since);
    set('until', f.until);
    set('group_by', f.group_by);
    set('service', f.service);
    set('env', f.env);
    set('forecast', f.forecast ? '1' : '');
    url.searchParams.delete('filter');
    for (const line of f.filters.split('\n').map((l) => l.trim()).filter(Boolean)) url.searchParams.append('filter', line);
    navigate(url.pathname + url.search, { replace: true });
  };
  return (
    <form className="filters" onSubmit={apply} aria-label="Chart settings">
      <Field label="Aggregation" hint={histogram ? 'p50, p95 and p99 are estimated from the buckets' : undefined}>
        <select value={f.agg} onChange={(e) => setF({ ...f, agg: e.target.value })}>{AGGREGATIONS.map((a) => <option key={a}>{a}</option>)}</select>
      </Field>
      <Field label="Step">
        <select value={f.step} onChange={(e) => setF({ ...f, step: e.target.value })}>{STEPS.map((s) => <option key={s}>{s}</option>)}</select>
      </Field>
      <Field label="Since"><input value={f.since} onChange={(e) => setF({ ...f, since: e.target.value })} /></Field>
      <Field label="Until"><input value={f.until} placeholder="now" onChange={(e) => setF({ ...f, until: e.target.value })} /></Field>
      <Field label="Group by" hint="up to two label keys, comma-separated"><input value={f.group_by} onChange={(e) => setF({ ...f, group_by: e.target.value })} /></Field>
      <Field label="Filters" hint="one per line: key=value|other"><textarea rows={2} value={f.filters} onChange={(e) => setF({ ...f, filters: e.target.value })} /></Field>
      <Field label="Service"><input value={f.service} onChange={(e) => setF({ ...f, service: e.target.value })} /></Field>
      <Field label="Environment"><input value={f.env} onChange={(e) => setF({ ...f, env: e.target.value })} /></Field>
      <label className="check"><input type="checkbox" checked={f.forecast} onChange={(e) => setF({ ...f, forecast: e.target.checked })} /> Forecast</label>
      <div className="filter-actions"><button type="submit">Draw</button></div>
    </form>
  );
}
