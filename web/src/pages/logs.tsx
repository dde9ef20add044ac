/**
 * `/p/{p}/logs`: log search (GET /logs) with text, severity, service and attribute filters in the URL,
 * paged with the API's cursor; and the live tail (GET /stream/logs, the same filters, no window) that puts
 * each new record on top as it arrives. The tail keeps the newest 10,000 records in the page (it says so
 * when it drops older ones); the list renders only the rows in view.
 */
import { useEffect, useRef, useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { usePaged } from '../api/hooks';
import type { paths } from '../api/schema';
import { follow } from '../api/sse';
import { Link, navigate, useLocation } from '../router';
import { DataTable, type Column } from '../table';
import { ErrorNote, Field, Loading, Page, Time, Withheld } from '../ui';
import type { ApiFailure } from '../api/client';

type LogQuery = NonNullable<paths['/api/v1/logs']['get']['parameters']['query']>;
type Log = paths['/api/v1/logs']['get']['responses'][200]['content']['application/json']['logs'][number];
const SEVERITIES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
const TAIL_CAP = 10_000;

function filtersOf(query: URLSearchParams) {
  return {
    q: query.get('q') ?? '',
    severity: query.get('severity') ?? '',
    service: query.get('service') ?? '',
    attr: query.getAll('attr'),
    since: query.get('since') ?? '',
    until: query.get('until') ?? '',
  };
}
type Filters = ReturnType<typeof filtersOf>;

function apiFilters(f: Filters) {
  return {
    ...(f.q ? { q: f.q } : {}),
    ...(f.severity ? { severity: f.severity as LogQuery['severity'] } : {}),
    ...(f.service ? { service: f.service.split(',').map((s) => s.trim()).filter(Boolean) } : {}),
    ...(f.attr.length ? { attr: f.attr } : {}),
  };
}

export default function Logs({ params }: { params: Record<string, string> }) {
  const project = params.project;
  const { query } = useLocation();
  const f = filtersOf(query);
  const key = JSON.stringify(f);
  const tailing = query.get('tail') === '1';
  const page = async (cursor?: string) => {
    // While the tail runs the search is not read; read again when it stops (the list then holds what arrived).
    if (tailing) return { items: [] as Log[], next: null };
    const p = ok(
      await api.GET('/api/v1/logs', {
        params: { query: { project_id: project, limit: 200, ...apiFilters(f), ...(f.since ? { since: f.since } : {}), ...(f.until ? { until: f.until } : {}), ...(cursor ? { cursor } : {}) } },
      }),
    );
    return { items: p.logs, next: p.next_cursor };
  };
  const { first, rows, more, moreError } = usePaged(page, [project, key, tailing]);

  const columns: Column<Log>[] = [
    { id: 'time', header: 'Time', cell: ({ row }) => <Time iso={row.original.timestamp} /> },
    { id: 'sev', header: 'Severity', cell: ({ row }) => <span className={`badge sev-${row.original.severity ?? 'none'}`}>{row.original.severity ?? row.original.severity_text ?? 'none'}</span> },
    { id: 'service', header: 'Service', cell: ({ row }) => row.original.service_name ?? <span className="muted">—</span> },
    {
      id: 'body',
      header: 'Body',
      cell: ({ row }) =>
        row.original.body_withheld ? <Withheld why="recorded content the content policy or your scopes keep back" /> : row.original.body === null ? <span className="muted">no body</span> : <span className="log-body">{row.original.body}</span>,
    },
    {
      id: 'trace',
      header: 'Trace',
      cell: ({ row }) => (row.original.trace_id ? <Link className="mono" href={`/p/${project}/traces/${row.original.trace_id}`} title="open the trace">{row.original.trace_id.slice(0, 8)}…</Link> : <span className="muted">—</span>),
    },
  ];

  return (
    <Page
      title="Logs"
      actions={
        <button type="button" className={tailing ? 'secondary' : undefined} onClick={() => setParam('tail', tailing ? '' : '1')} aria-pressed={tailing}>
          {tailing ? 'Stop following' : 'Follow new records'}
        </button>
      }
    >
      <LogFilters key={key} initial={f} tailing={tailing} />
      {tailing ? (
        <Tail key={`${project}:${key}`} project={project} filters={f} columns={columns} />
      ) : (
        <>
          <ErrorNote error={first.error} what="The logs could not be searched" />
          <ErrorNote error={moreError} what="The next page could not be read" />
          {first.data ? (
            <DataTable rows={rows} columns={columns} rowKey={(l) => l.log_id} label="Log records" empty="No log record matches in this window." more={more} />
          ) : first.loading ? <Loading what="Searching" /> : null}
        </>
      )}
    </Page>
  );
}

function setParam(name: string, value: string) {
  const url = new URL(window.location.href);
  if (value) url.searchParams.set(name, value);
  else url.searchParams.delete(name);
  navigate(url.pathname + url.search, { replace: true });
}

function Tail({ project, filters, columns }: { project: string; filters: Filters; columns: Column<Log>[] }) {
  const [logs, setLogs] = useState<Log[]>([]);
  const [dropped, setDropped] = useState(0);
  const [status, setStatus] = useState<{ state: string; detail?: string }>({ state: 'connecting' });
  const [failure, setFailure] = useState<ApiFailure>();
  const pending = useRef<Log[]>([]);
  useEffect(() => {
    const abort = new AbortController();
    // New records are put on screen at most every 250 ms, so a fast flow stays one render per frame batch.
    const flush = setInterval(() => {
      if (!pending.current.length) return;
      const batch = pending.current.reverse();
      pending.current = [];
      setLogs((old) => {
        const all = [...batch, ...old];
        if (all.length > TAIL_CAP) setDropped((d) => d + all.length - TAIL_CAP);
        return all.slice(0, TAIL_CAP);
      });
    }, 250);
    void follow({
      signal: abort.signal,
      open: async (lastEventId, signal) => {
        const r = await api.GET('/api/v1/stream/logs', {
          params: { query: { project_id: project, ...apiFilters(filters) } },
          parseAs: 'stream',
          signal,
          headers: lastEventId ? { 'last-event-id': lastEventId } : {},
        });
        const body = ok(r) as unknown as ReadableStream<Uint8Array>;
        return { body };
      },
      onEvent: (e) => {
        if (e.event === 'log') pending.current.push(JSON.parse(e.data) as Log);
      },
      onStatus: (state, detail) => setStatus({ state, detail }),
      onFailure: setFailure,
    });
    return () => {
      abort.abort();
      clearInterval(flush);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  return (
    <>
      <p className="muted" role="status" data-testid="tail-status">
        {status.state === 'open' ? 'Following: new records appear on top as they arrive.' : status.state === 'connecting' ? 'Connecting…' : status.detail ?? status.state}
        {dropped ? ` The oldest ${dropped.toLocaleString('en-US')} records left the page (it keeps the newest ${TAIL_CAP.toLocaleString('en-US')}).` : ''}
      </p>
      <ErrorNote error={failure} what="The live tail stopped" />
      <DataTable rows={logs} columns={columns} rowKey={(l) => l.log_id} label="New log records" empty="No new record yet: records ingested from now on appear here." />
    </>
  );
}

function LogFilters({ initial, tailing }: { initial: Filters; tailing: boolean }) {
  const [f, setF] = useState({ ...initial, attr: initial.attr.join('\n') });
  const apply = (e: FormEvent) => {
    e.preventDefault();
    const url = new URL(window.location.href);
    for (const k of ['q', 'severity', 'service', 'since', 'until'] as const) {
      if (f[k]) url.searchParams.set(k, f[k]);
      else url.searchParams.delete(k);
    }
    url.searchParams.delete('attr');
    for (const line of f.attr.split('\n').map((l) => l.trim()).filter(Boolean)) url.searchParams.append('attr', line);
    navigate(url.pathname + url.search, { replace: true });
  };
  return (
    <form className="filters" onSubmit={apply} aria-label="Filter logs">
      <Field label="Text in the body"><input type="search" value={f.q} onChange={(e) => setF({ ...f, q: e.target.value })} /></Field>
      <Field label="Minimum severity">
        <select value={f.severity} onChange={(e) => setF({ ...f, severity: e.target.value })}>
          <option value="">any</option>
          {SEVERITIES.map((s) => <option key={s}>{s}</option>)}
        </select>
      </Field>
      <Field label="Service" hint="comma-separated"><input value={f.service} onChange={(e) => setF({ ...f, service: e.target.value })} /></Field>
      <Field label="Attributes" hint="one per line: key=value"><textarea rows={1} value={f.attr} onChange={(e) => setF({ ...f, attr: e.target.value })} /></Field>
      {tailing ? null : (
        <>
          <Field label="Since"><input value={f.since} placeholder="24h" onChange={(e) => setF({ ...f, since: e.target.value })} /></Field>
          <Field label="Until"><input value={f.until} placeholder="now" onChange={(e) => setF({ ...f, until: e.target.value })} /></Field>
        </>
      )}
      <div className="filter-actions"><button type="submit">{tailing ? 'Apply to the tail' : 'Search'}</button></div>
    </form>
  );
}
