/**
 * `/p/{p}/runs`: the run list with the API's filters in the URL (so a filtered list can be shared), newest
 * first, paged with the API's cursor. A refused filter shows the API's message beside the filters.
 */
import { useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { usePaged } from '../api/hooks';
import type { components } from '../api/schema';
import { count, duration } from '../format';
import { Link, setQuery, useLocation } from '../router';
import { DataTable, type Column } from '../table';
import { Cost, ErrorNote, Field, Loading, Page, Status, Time } from '../ui';

type Run = components['schemas']['AgentRun'];
export const RUN_STATUSES = ['completed', 'failed', 'timed_out', 'cancelled', 'max_steps'] as const;
const FILTERS = ['status', 'session_key', 'observation_key', 'since', 'until'] as const;

export default function Runs({ params }: { params: Record<string, string> }) {
  const project = params.project;
  const { query } = useLocation();
  const filters = Object.fromEntries(FILTERS.map((f) => [f, query.get(f) ?? ''])) as Record<(typeof FILTERS)[number], string>;
  const key = JSON.stringify(filters);
  const fetchPage = async (cursor?: string) => {
    const page = ok(
      await api.GET('/api/v1/agent-runs', {
        params: {
          query: {
            project_id: project,
            limit: 100,
            ...(filters.status ? { status: filters.status.split(',') } : {}),
            ...(filters.session_key ? { session_key: filters.session_key } : {}),
            ...(filters.observation_key ? { observation_key: filters.observation_key } : {}),
            ...(filters.since ? { since: filters.since } : {}),
            ...(filters.until ? { until: filters.until } : {}),
            ...(cursor ? { cursor } : {}),
          },
        },
      }),
    );
    return { items: page.runs, next: page.next_cursor };
  };
  const { first, rows, more, moreError } = usePaged(fetchPage, [project, key]);

  const columns: Column<Run>[] = [
    {
      id: 'run',
      header: 'Run',
      cell: ({ row }) => (
        <Link href={`/p/${project}/runs/${row.original.run_id}`} className="mono">{row.original.run_id.slice(0, 12)}…</Link>
      ),
    },
    { id: 'agent', header: 'Agent', cell: ({ row }) => row.original.agent_name ?? <span className="muted">unnamed</span> },
    { id: 'status', header: 'Status', cell: ({ row }) => <Status value={row.original.status ?? 'not stated'} /> },
    { id: 'started', header: 'Started', cell: ({ row }) => <Time iso={row.original.started_at} /> },
    { id: 'duration', header: 'Duration', cell: ({ row }) => <span className="num">{duration(row.original.duration_ms)}</span> },
    { id: 'steps', header: 'Steps', cell: ({ row }) => <span className="num">{count(row.original.step_count)}</span> },
    { id: 'models', header: 'Model calls', cell: ({ row }) => <span className="num">{count(row.original.model_calls)}</span> },
    { id: 'cost', header: 'Cost', cell: ({ row }) => <Cost nanos={row.original.cost_nanos} reason={row.original.cost_unavailable_reason} /> },
    {
      id: 'session',
      header: 'Session',
      cell: ({ row }) =>
        row.original.session_key ? <Link href={`/p/${project}/sessions/${encodeURIComponent(row.original.session_key)}`}>{row.original.session_key}</Link> : <span className="muted">none</span>,
    },
  ];

  return (
    <Page title="Agent runs">
      <RunFilters initial={filters} />
      <ErrorNote error={first.error} what="The runs could not be listed" />
      <ErrorNote error={moreError} what="The next page could not be read" />
      {first.data ? (
        <DataTable
          rows={rows}
          columns={columns}
          rowKey={(r) => r.run_id}
          label="Agent runs"
          empty="No run matches. Runs arrive as OpenTelemetry GenAI spans (the README's quickstart sends one)."
          more={more}
        />
      ) : first.loading ? <Loading what="Loading runs" /> : null}
    </Page>
  );
}

function RunFilters({ initial }: { initial: Record<string, string> }) {
  const [f, setF] = useState(initial);
  const statuses = new Set(f.status ? f.status.split(',') : []);
  const toggle = (s: string) => {
    const next = new Set(statuses);
    if (next.has(s)) next.delete(s);
    else next.add(s);
    setF({ ...f, status: [...next].join(',') });
  };
  const apply = (e: FormEvent) => {
    e.preventDefault();
    setQuery(f);
  };
  return (
    <form className="filters" onSubmit={apply} aria-label="Filter runs">
      <fieldset className="checks">
        <legend>Status</legend>
        {RUN_STATUSES.map((s) => (
          <label key={s}>
            <input type="checkbox" checked={statuses.has(s)} onChange={() => toggle(s)} /> {s.replace(/_/g, ' ')}
          </label>
        ))}
      </fieldset>
      <Field label="Since" hint="30m, 6h, 7d or a time such as 2026-12-01T00:00:00Z">
        <input value={f.since} onChange={(e) => setF({ ...f, since: e.target.value })} placeholder="24h" />
      </Field>
      <Field label="Until">
        <input value={f.until} onChange={(e) => setF({ ...f, until: e.target.value })} placeholder="now" />
      </Field>
      <Field label="Session key">
        <input value={f.session_key} onChange={(e) => setF({ ...f, session_key: e.target.value })} />
      </Field>
      <Field label="Agent observation key">
        <input value={f.observation_key} onChange={(e) => setF({ ...f, observation_key: e.target.value })} />
      </Field>
      <div className="filter-actions">
        <button type="submit">Apply</button>
      </div>
    </form>
  );
}
