/**
 * `/p/{p}/containments`: the project's containments by status, and the request form (one person asks;
 * another approves on the containment's page). The target comes from the URL when a page links here
 * (`?observation_key=` or `?asset_id=`); each submission carries its own `request_id`, so a retried
 * submission is the same request, never a second one.
 */
import { useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { useAction, useLoad } from '../api/hooks';
import type { components } from '../api/schema';
import { Link, navigate, setQuery, useLocation } from '../router';
import { useSession } from '../session';
import { DataTable, type Column } from '../table';
import { ErrorNote, Field, Loading, Page, Status, Time } from '../ui';

type Quarantine = components['schemas']['Quarantine'];
export const ACTIONS = [
  ['freeze_writes', 'freeze writes (the keys can still read)'],
  ['revoke_credentials', 'revoke the keys'],
  ['kill', 'kill (revoke the keys and stop the agent)'],
] as const;
const STATUSES = ['pending', 'active', 'lifted', 'withdrawn'] as const;
const TARGETS = [
  ['observation_key', 'Agent (observation key)'],
  ['asset_id', 'Inventory asset id'],
  ['api_key_id', 'API key id'],
] as const;
type TargetKind = (typeof TARGETS)[number][0];

export const targetOf = (q: Quarantine) =>
  q.observation_key ? `agent ${q.observation_key}` : q.asset_id ? `asset ${q.asset_id}` : q.api_key_id ? `API key ${q.api_key_id}` : '—';

export default function Containments({ params }: { params: Record<string, string> }) {
  const project = params.project;
  const { me } = useSession();
  const { query } = useLocation();
  const status = query.get('status') ?? '';
  const list = useLoad(
    async () => ok(await api.GET('/api/v1/quarantines', { params: { query: { project_id: project, limit: 200, ...(status ? { status: status.split(',') } : {}) } } })),
    [project, status],
  );
  const columns: Column<Quarantine>[] = [
    { id: 'when', header: 'Requested', cell: ({ row }) => <Link href={`/p/${project}/containments/${row.original.id}`}><Time iso={row.original.requested_at} /></Link> },
    { id: 'status', header: 'Status', cell: ({ row }) => <Status value={row.original.status} /> },
    { id: 'action', header: 'Action', cell: ({ row }) => row.original.action.replace(/_/g, ' ') },
    { id: 'target', header: 'Target', cell: ({ row }) => targetOf(row.original) },
    { id: 'reason', header: 'Reason', cell: ({ row }) => row.original.reason },
    { id: 'keys', header: 'Keys reached', cell: ({ row }) => <span className="num">{row.original.credentials.length}</span> },
  ];
  return (
    <Page title="Containments">
      {me.scopes.includes('quarantine:request') ? <RequestForm project={project} /> : <p className="muted">Your role does not hold <code>quarantine:request</code>: you can read containments, not request one.</p>}
      <h2>Containments of this project</h2>
      <div className="filters" role="group" aria-label="Status">
        {['', ...STATUSES].map((s) => (
          <button key={s} type="button" className={status === s ? undefined : 'secondary'} aria-pressed={status === s} onClick={() => setQuery({ status: s })}>
            {s || 'all'}
          </button>
        ))}
      </div>
      <ErrorNote error={list.error} what="The containments could not be listed" />
      {list.data ? (
        <>
          <DataTable rows={list.data.quarantines} columns={columns} rowKey={(q) => q.id} label="Containment requests" empty="No containment matches." />
          {list.data.next_cursor ? <p className="muted">The newest 200 are shown; narrow by status to see others.</p> : null}
        </>
      ) : list.loading ? <Loading /> : null}
    </Page>
  );
}

function RequestForm({ project }: { project: string }) {
  const { query } = useLocation();
  const preset = TARGETS.find(([k]) => query.get(k))?.[0];
  const [kind, setKind] = useState<TargetKind>(preset ?? 'observation_key');
  const [target, setTarget] = useState(preset ? (query.get(preset) ?? '') : '');
  const [action, setAction] = useState<(typeof ACTIONS)[number][0]>('freeze_writes');
  const [reason, setReason] = useState('');
  const [environment, setEnvironment] = useState('');
  // One id per request being made: a retry after a lost answer sends the same one.
  const [requestId, setRequestId] = useState(() => crypto.randomUUID());
  const send = useAction(async () =>
    ok(
      await api.POST('/api/v1/quarantines', {
        params: { query: { project_id: project } },
        body: { [kind]: target.trim(), action, reason, request_id: requestId, ...(environment ? { environment } : {}) },
      }),
    ),
  );
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const q = await send.run();
    if (q) {
      setRequestId(crypto.randomUUID());
      navigate(`/p/${project}/containments/${q.id}`);
    }
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="request-h">
      <h2 id="request-h">Request a containment</h2>
      <p className="muted">Nothing is touched until another person approves it.</p>
      <div className="row">
        <Field label="Target kind">
          <select value={kind} onChange={(e) => setKind(e.target.value as TargetKind)}>
            {TARGETS.map(([k, label]) => <option key={k} value={k}>{label}</option>)}
          </select>
        </Field>
        <Field label="Target">
          <input value={target} onChange={(e) => setTarget(e.target.value)} required />
        </Field>
        <Field label="Action">
          <select value={action} onChange={(e) => setAction(e.target.value as typeof action)}>
            {ACTIONS.map(([a, label]) => <option key={a} value={a}>{label}</option>)}
          </select>
        </Field>
        <Field label="Environment" hint="where it misbehaved (recorded)">
          <input value={environment} onChange={(e) => setEnvironment(e.target.value)} />
        </Field>
      </div>
      <Field label="Reason">
        <textarea value={reason} onChange={(e) => setReason(e.target.value)} required maxLength={1024} rows={2} />
      </Field>
      <ErrorNote error={send.error} what="Not requested" />
      <button type="submit" disabled={send.pending}>{send.pending ? 'Requesting…' : 'Request containment'}</button>
    </form>
  );
}
