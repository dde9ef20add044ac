/**
 * `/p/{p}/traces`: traces that started in the window, newest first (GET /traces), filtered by service,
 * span name, status, duration and attributes, all in the URL, paged with the API's cursor.
 */
import { useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { usePaged } from '../api/hooks';
import type { paths } from '../api/schema';
import { count, duration } from '../format';
import { Link, navigate, useLocation } from '../router';
import { DataTable, type Column } from '../table';
import { ErrorNote, Field, Loading, Page, Time } from '../ui';

type TraceQuery = NonNullable<paths['/api/v1/traces']['get']['parameters']['query']>;
type Trace = paths['/api/v1/traces']['get']['responses'][200]['content']['application/json']['traces'][number];
const FIELDS = ['service', 'name', 'status', 'min_duration_ms', 'max_duration_ms', 'since', 'until'] as const;

export default function Traces({ params }: { params: Record<string, string> }) {
  const project = params.project;
  const { query } = useLocation();
  const f = Object.fromEntries(FIELDS.map((k) => [k, query.get(k) ?? ''])) as Record<(typeof FIELDS)[number], string>;
  const attr = query.getAll('attr');
  const key = JSON.stringify([f, attr]);
  const fetchPage = async (cursor?: string) => {
    const p = ok(
      await api.GET('/api/v1/traces', {
        params: {
          query: {
            project_id: project,
            limit: 100,
            ...(f.service ? { service: f.service.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
            ...(f.name ? { name: f.name } : {}),
            ...(f.status ? { status: f.status as TraceQuery['status'] } : {}),
            ...(f.min_duration_ms ? { min_duration_ms: Number(f.min_duration_ms) } : {}),
            ...(f.max_duration_ms ? { max_duration_ms: Number(f.max_duration_ms) } : {}),
            ...(f.since ? { since: f.since } : {}),
            ...(f.until ? { until: f.until } : {}),
            ...(attr.length ? { attr } : {}),
            ...(cursor ? { cursor } : {}),
          },
        },
      }),
    );
    return { items: p.traces, next: p.next_cursor };
  };
  const { first, rows, more, moreError } = usePaged(fetchPage, [project, key]);
  const columns: Column<Trace>[] = [
    { id: 'root', header: 'Root span', cell: ({ row }) => <Link href={`/p/${project}/traces/${row.original.trace_id}`}>{row.original.root_span_name}</Link> },
    { id: 'service', header: 'Service', cell: ({ row }) => row.original.root_service_name ?? <span className="muted">—</span> },
    { id: 'started', header: 'Started', cell: ({ row }) => <Time iso={row.original.started_at} /> },
    { id: 'duration', header: 'Duration', cell: ({ row }) => <span className="num">{duration(row.original.duration_ms)}</span> },
    { id: 'spans', header: 'Spans', cell: ({ row }) => <span className="num">{count(row.original.span_count)}</span> },
    { id: 'errors', header: 'Errors', cell: ({ row }) => <span className={`num ${row.original.error_count ? 'sev-error' : ''}`}>{count(row.original.error_count)}</span> },
    { id: 'services', header: 'Services', cell: ({ row }) => row.original.services.join(', ') },
  ];
  return (
    <Page title="Traces">
      <TraceFilters key={key} initial={{ ...f, attr: attr.join('\n') }} />
      <ErrorNote error={first.error} what="The traces could not be searched" />
      <ErrorNote error={moreError} what="The next page could not be read" />
      {first.data ? (
        <DataTable rows={rows} columns={columns} rowKey={(t) => t.trace_id} label="Trace list" empty="No trace started in this window matches." more={more} />
      ) : first.loading ? <Loading what="Searching" /> : null}
    </Page>
  );
}

function TraceFilters({ initial }: { initial: Record<string, string> }) {
  const [f, setF] = useState(initial);
  const apply = (e: FormEvent) => {
    e.preventDefault();
    const url = new URL(window.location.href);
    for (const k of FIELDS) {
      if (f[k]) url.searchParams.set(k, f[k]);
      else url.searchParams.delete(k);
    }
    url.searchParams.delete('attr');
    for (const line of f.attr.split('\n').map((l) => l.trim()).filter(Boolean)) url.searchParams.append('attr', line);
    navigate(url.pathname + url.search, { replace: true });
  };
  const input = (k: string, label: string, hint?: string, placeholder?: string) => (
    <Field label={label} hint={hint}><input value={f[k]} placeholder={placeholder} onChange={(e) => setF({ ...f, [k]: e.target.value })} /></Field>
  );
  return (
    <form className="filters" onSubmit={apply} aria-label="Filter traces">
      {input('service', 'Service', 'comma-separated')}
      {input('name', 'Span name', 'exact')}
      <Field label="Span status">
        <select value={f.status} onChange={(e) => setF({ ...f, status: e.target.value })}>
          <option value="">any</option>
          <option value="error">error</option>
          <option value="ok">ok</option>
          <option value="unset">unset</option>
        </select>
      </Field>
      {input('min_duration_ms', 'Longer than (ms)')}
      {input('max_duration_ms', 'Shorter than (ms)')}
      {input('since', 'Since', undefined, '24h')}
      {input('until', 'Until', undefined, 'now')}
      <Field label="Attributes" hint="one per line: key=value"><textarea rows={1} value={f.attr} onChange={(e) => setF({ ...f, attr: e.target.value })} /></Field>
      <div className="filter-actions"><button type="submit">Search</button></div>
    </form>
  );
}
