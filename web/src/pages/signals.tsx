/**
 * `/p/{p}/signals`: the review-signal inbox. Filters by status, severity and kind (in the URL; open and
 * acknowledged by default), newest first by last sighting, paged with the API's cursor; acknowledge, or
 * dismiss with a reason (both need `agents:write`; a role without it reads only).
 */
import { useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { useAction, usePaged } from '../api/hooks';
import type { components } from '../api/schema';
import { enumWords } from '../format';
import { setQuery, useLocation } from '../router';
import { useSession } from '../session';
import { DataTable, type Column } from '../table';
import { ErrorNote, Field, Loading, Page, Time } from '../ui';

type Signal = components['schemas']['ReviewSignal'];
const STATUSES = ['OPEN', 'ACKNOWLEDGED', 'RESOLVED', 'DISMISSED'].map((s) => `REVIEW_SIGNAL_STATUS_${s}`);
const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'].map((s) => `REVIEW_SIGNAL_SEVERITY_${s}`);
const KINDS = ['SHADOW_ASSET', 'ABOM_DRIFT', 'CONFIG_UNREGISTERED', 'KILLED_ASSET_CREDENTIAL', 'POISONED_MEMORY_ITEM', 'UNREVIEWED_ASSET', 'UNOWNED_ASSET', 'REVOKED_AUTHORITY_EXERCISED'].map(
  (k) => `REVIEW_SIGNAL_KIND_${k}`,
);
const DEFAULT_STATUS = `${STATUSES[0]},${STATUSES[1]}`;

export default function Signals({ params }: { params: Record<string, string> }) {
  const project = params.project;
  const { me } = useSession();
  const { query } = useLocation();
  const status = query.get('status') ?? DEFAULT_STATUS;
  const severity = query.get('severity') ?? '';
  const kind = query.get('kind') ?? '';
  const key = `${project}|${status}|${severity}|${kind}`;
  const fetchPage = async (cursor?: string) => {
    const p = ok(
      await api.GET('/api/v1/review-signals', {
        params: {
          query: {
            project_id: project,
            limit: 100,
            ...(status && status !== 'any' ? { status: status.split(',') } : {}),
            ...(severity ? { severity: severity.split(',') } : {}),
            ...(kind ? { kind: kind.split(',') } : {}),
            ...(cursor ? { cursor } : {}),
          },
        },
      }),
    );
    return { items: p.review_signals, next: p.next_cursor };
  };
  const { first, rows, more, moreError } = usePaged(fetchPage, [key]);
  const [dismissing, setDismissing] = useState<Signal | null>(null);
  const canWrite = me.scopes.includes('agents:write');
  const ack = useAction(async (id: string) => {
    ok(await api.POST('/api/v1/review-signals/{signalId}/acknowledge', { params: { path: { signalId: id } } }));
    first.reload();
  });

  const columns: Column<Signal>[] = [
    { id: 'sev', header: 'Severity', cell: ({ row }) => <span className={`badge severity-${enumWords(row.original.severity, 'REVIEW_SIGNAL_SEVERITY')}`}>{enumWords(row.original.severity, 'REVIEW_SIGNAL_SEVERITY')}</span> },
    { id: 'kind', header: 'Kind', cell: ({ row }) => enumWords(row.original.kind, 'REVIEW_SIGNAL_KIND') },
    { id: 'subject', header: 'About', cell: ({ row }) => <span className="mono">{row.original.subject_ref}</span> },
    { id: 'detail', header: 'Detail', cell: ({ row }) => <code>{row.original.detail_code}</code> },
    { id: 'status', header: 'Status', cell: ({ row }) => enumWords(row.original.status, 'REVIEW_SIGNAL_STATUS') },
    { id: 'opened', header: 'Opened', cell: ({ row }) => <Time iso={row.original.opened_at} /> },
    { id: 'seen', header: 'Last seen', cell: ({ row }) => <Time iso={row.original.last_seen_at} /> },
    {
      id: 'actions',
      header: 'Actions',
      cell: ({ row }) => {
        const s = row.original;
        const open = s.status === 'REVIEW_SIGNAL_STATUS_OPEN' || s.status === 'REVIEW_SIGNAL_STATUS_ACKNOWLEDGED';
        if (!open) return s.resolution_reason ? <span className="muted">{s.resolution_reason}</span> : <span className="muted">{s.resolution_code ?? '—'}</span>;
        if (!canWrite) return <span className="muted">needs agents:write</span>;
        return (
          <span className="actions">
            {s.status === 'REVIEW_SIGNAL_STATUS_OPEN' ? <button type="button" className="secondary" disabled={ack.pending} onClick={() => void ack.run(s.id)}>Acknowledge<span className="sr-only"> {s.subject_ref}</span></button> : null}
            <button type="button" className="secondary" onClick={() => setDismissing(s)}>Dismiss…<span className="sr-only"> {s.subject_ref}</span></button>
          </span>
        );
      },
    },
  ];

  const toggle = (name: 'status' | 'severity' | 'kind', current: string, value: string) => {
    const set = new Set(current ? current.split(',') : []);
    if (set.has(value)) set.delete(value);
    else set.add(value);
    // No status ticked is every status ('any'); an absent parameter is the default (open and acknowledged).
    setQuery({ [name]: [...set].filter((v) => v !== 'any').join(',') || (name === 'status' ? 'any' : '') });
  };
  const chips = (name: 'status' | 'severity' | 'kind', current: string, values: string[], prefix: string) => (
    <fieldset className="checks">
      <legend>{name[0].toUpperCase() + name.slice(1)}</legend>
      {values.map((v) => (
        <label key={v}><input type="checkbox" checked={current.split(',').includes(v)} onChange={() => toggle(name, current, v)} /> {enumWords(v, prefix)}</label>
      ))}
    </fieldset>
  );

  return (
    <Page title="Review signals">
      <div className="filters">
        {chips('status', status, STATUSES, 'REVIEW_SIGNAL_STATUS')}
        {chips('severity', severity, SEVERITIES, 'REVIEW_SIGNAL_SEVERITY')}
        {chips('kind', kind, KINDS, 'REVIEW_SIGNAL_KIND')}
      </div>
      <ErrorNote error={first.error} what="The signals could not be listed" />
      <ErrorNote error={ack.error ?? moreError} what="Not done" />
      {dismissing ? <Dismiss signal={dismissing} onDone={() => { setDismissing(null); first.reload(); }} /> : null}
      {first.data ? (
        <DataTable rows={rows} columns={columns} rowKey={(s) => s.id} label="Signals" empty="No signal matches: nothing waits for a person." more={more} />
      ) : first.loading ? <Loading /> : null}
    </Page>
  );
}

function Dismiss({ signal, onDone }: { signal: Signal; onDone: () => void }) {
  const [reason, setReason] = useState('');
  const dismiss = useAction(async () => ok(await api.POST('/api/v1/review-signals/{signalId}/dismiss', { params: { path: { signalId: signal.id } }, body: { reason } })));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (await dismiss.run()) onDone();
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="dismiss-h">
      <h2 id="dismiss-h">Dismiss: {enumWords(signal.kind, 'REVIEW_SIGNAL_KIND')} about <span className="mono">{signal.subject_ref}</span></h2>
      <Field label="Reason for dismissing">
        <textarea value={reason} onChange={(e) => setReason(e.target.value)} maxLength={1024} rows={2} autoFocus />
      </Field>
      <ErrorNote error={dismiss.error} what="Not dismissed" />
      <div className="actions">
        <button type="submit" disabled={dismiss.pending}>Dismiss</button>
        <button type="button" className="secondary" onClick={onDone}>Cancel</button>
      </div>
    </form>
  );
}
