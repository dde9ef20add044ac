/**
 * `/p/{p}/agents`: the agent inventory (GET /assets): declared and discovered agents, shadow ones marked,
 * with approval, risk, classification, ownership and where they were seen; filters in the URL.
 */
import { api, ok } from '../api/client';
import { usePaged } from '../api/hooks';
import type { components } from '../api/schema';
import { enumWords } from '../format';
import { Link, setQuery, useLocation } from '../router';
import { DataTable, type Column } from '../table';
import { ErrorNote, Loading, Page, Status, Unavailable } from '../ui';

type Asset = components['schemas']['Asset'];

export function environmentsOf(a: Asset) {
  if (a.environments === null) return <Unavailable why="the telemetry store could not be read" />;
  if (!a.environments.length) return <span className="muted">none named</span>;
  return <>{a.environments.join(', ')}{a.environments_truncated ? ' …' : ''}</>;
}

export default function Agents({ params }: { params: Record<string, string> }) {
  const project = params.project;
  const { query } = useLocation();
  const shadow = query.get('shadow') ?? '';
  const approval = query.get('approval_state') ?? '';
  const key = `${project}|${shadow}|${approval}`;
  const fetchPage = async (cursor?: string) => {
    const p = ok(
      await api.GET('/api/v1/assets', {
        params: { query: { project_id: project, limit: 100, ...(shadow ? { shadow: shadow === 'true' } : {}), ...(approval ? { approval_state: [approval] } : {}), ...(cursor ? { cursor } : {}) } },
      }),
    );
    return { items: p.assets, next: p.next_cursor };
  };
  const { first, rows, more, moreError } = usePaged(fetchPage, [key]);
  const columns: Column<Asset>[] = [
    {
      id: 'name',
      header: 'Agent',
      cell: ({ row }) => (
        <>
          <Link href={`/p/${project}/agents/${row.original.id}`}>{row.original.name}</Link>{' '}
          {row.original.shadow ? <span className="badge status-shadow" title="seen in telemetry, declared by nobody">shadow</span> : null}
          {row.original.quarantined ? <span className="badge status-failed">contained</span> : null}
        </>
      ),
    },
    { id: 'origin', header: 'Origin', cell: ({ row }) => row.original.origin },
    { id: 'approval', header: 'Approval', cell: ({ row }) => <Status value={enumWords(row.original.approval_state, 'APPROVAL_STATE')} /> },
    { id: 'risk', header: 'Risk', cell: ({ row }) => enumWords(row.original.risk_tier, 'RISK_TIER') },
    { id: 'class', header: 'Data', cell: ({ row }) => enumWords(row.original.data_classification, 'DATA_CLASSIFICATION') },
    { id: 'owner', header: 'Owner', cell: ({ row }) => row.original.owner_team ?? row.original.owner_principal ?? <span className="muted">nobody</span> },
    { id: 'env', header: 'Environments', cell: ({ row }) => environmentsOf(row.original) },
  ];
  const pick = (name: string, value: string, options: [string, string][]) => (
    <fieldset className="checks">
      <legend>{name === 'shadow' ? 'Shadow' : 'Approval'}</legend>
      {options.map(([v, label]) => (
        <label key={v}><input type="radio" name={name} checked={value === v} onChange={() => setQuery({ [name]: v })} /> {label}</label>
      ))}
    </fieldset>
  );
  return (
    <Page title="Agents">
      <div className="filters">
        {pick('shadow', shadow, [['', 'all'], ['true', 'shadow only'], ['false', 'declared only']])}
        {pick('approval_state', approval, [['', 'any'], ...(['UNREVIEWED', 'APPROVED', 'REJECTED'].map((s) => [`APPROVAL_STATE_${s}`, s.toLowerCase()]) as [string, string][])])}
      </div>
      <ErrorNote error={first.error} what="The inventory could not be read" />
      <ErrorNote error={moreError} what="The next page could not be read" />
      {first.data ? (
        <DataTable rows={rows} columns={columns} rowKey={(a) => a.id} label="Agent inventory" empty="No agent matches. Agents appear when their runs arrive, or when declared with svc assets declare." more={more} />
      ) : first.loading ? <Loading /> : null}
    </Page>
  );
}
