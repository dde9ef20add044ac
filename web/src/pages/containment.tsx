/**
 * `/p/{p}/containments/{id}`: one containment and its moves. A pending one is approved by a person other
 * than the requester (the API compares people, so the page does not offer the requester an approve button),
 * rejected by another person or withdrawn by the requester, with a reason; an active one is lifted (with a
 * reason) or re-enforced when a key's enforcement failed. What the approval did to each key is listed.
 */
import { useState } from 'react';
import { api, ok } from '../api/client';
import { useAction, useLoad } from '../api/hooks';
import type { components } from '../api/schema';
import { Link } from '../router';
import { useSession } from '../session';
import { ErrorNote, Field, Loading, Page, Status, Time } from '../ui';
import { targetOf } from './containments';

type Quarantine = components['schemas']['Quarantine'];
type Who = { user_id?: string; api_key_id?: string } | undefined;

export default function Containment({ params }: { params: Record<string, string> }) {
  const { project, id } = params;
  const { me } = useSession();
  const q = useLoad(async () => ok(await api.GET('/api/v1/quarantines/{quarantineId}', { params: { path: { quarantineId: id } } })), [id]);
  const [reason, setReason] = useState('');
  const path = { params: { path: { quarantineId: id } } };
  const move = useAction(async (what: 'approve' | 'withdraw' | 'lift' | 'reenforce') => {
    const done =
      what === 'approve'
        ? ok(await api.POST('/api/v1/quarantines/{quarantineId}/approve', path))
        : what === 'reenforce'
          ? ok(await api.POST('/api/v1/quarantines/{quarantineId}/reenforce', path))
          : what === 'lift'
            ? ok(await api.POST('/api/v1/quarantines/{quarantineId}/lift', { ...path, body: { reason } }))
            : ok(await api.POST('/api/v1/quarantines/{quarantineId}/withdraw', { ...path, body: { reason } }));
    setReason('');
    q.reload();
    return done;
  });
  if (q.error) return <Page title="Containment"><ErrorNote error={q.error} what="This containment could not be read" /></Page>;
  if (!q.data) return <Loading />;
  const c: Quarantine = q.data;
  if (c.project_id !== project) return <Page title="Containment"><p>This containment belongs to another project.</p></Page>;
  const mine = c.requested_by.user_id === me.id;
  const who = (w: Who) => (!w ? '—' : w.user_id === me.id ? 'you' : w.user_id ? `person ${w.user_id.slice(0, 8)}` : `API key ${w.api_key_id?.slice(0, 8)}`);
  const can = (scope: string) => me.scopes.includes(scope);
  const needsReason = (c.status === 'pending' && (mine ? can('quarantine:request') : can('quarantine:approve'))) || (c.status === 'active' && can('quarantine:approve'));
  return (
    <Page title={<>Containment <Status value={c.status} /></>} actions={<Link href={`/p/${project}/containments`}>All containments</Link>}>
      <dl className="facts">
        <div><dt>Target</dt><dd>{targetOf(c)}</dd></div>
        <div><dt>Action</dt><dd>{c.action.replace(/_/g, ' ')}</dd></div>
        <div><dt>Reason</dt><dd>{c.reason}</dd></div>
        <div><dt>Requested</dt><dd>by {who(c.requested_by)}, <Time iso={c.requested_at} /></dd></div>
        {c.approved_at ? <div><dt>Approved</dt><dd>by {who(c.approved_by)}, <Time iso={c.approved_at} /></dd></div> : null}
        {c.lifted_at ? <div><dt>Lifted</dt><dd>by {who(c.lifted_by)}, <Time iso={c.lifted_at} />: {c.lift_reason}</dd></div> : null}
        {c.withdrawn_at ? <div><dt>Withdrawn</dt><dd>by {who(c.withdrawn_by)}, <Time iso={c.withdrawn_at} />: {c.withdraw_reason}</dd></div> : null}
        {c.environment ? <div><dt>Environment</dt><dd>{c.environment}</dd></div> : null}
      </dl>

      {c.status === 'pending' ? (
        mine ? (
          <p className="muted" data-testid="two-person">You requested this containment: another person with <code>quarantine:approve</code> approves or rejects it.</p>
        ) : !can('quarantine:approve') ? (
          <p className="muted">Your role does not hold <code>quarantine:approve</code>: an owner or admin approves it.</p>
        ) : null
      ) : null}
      <ErrorNote error={move.error} what="Not done" />
      {needsReason ? (
        <div className="card">
          {c.status === 'pending' && !mine && can('quarantine:approve') ? (
            <p>
              <button type="button" disabled={move.pending} onClick={() => void move.run('approve')}>Approve and enforce</button>{' '}
              <span className="muted">the target's keys are resolved and the action carried out on each.</span>
            </p>
          ) : null}
          <Field label={c.status === 'active' ? 'Reason to lift' : mine ? 'Reason to withdraw' : 'Reason to reject'}>
            <textarea value={reason} onChange={(e) => setReason(e.target.value)} maxLength={1024} rows={2} />
          </Field>
          <div className="actions">
            {c.status === 'pending' ? (
              <button type="button" className="secondary" disabled={move.pending || !reason.trim()} onClick={() => void move.run('withdraw')}>{mine ? 'Withdraw' : 'Reject'}</button>
            ) : (
              <>
                <button type="button" className="secondary" disabled={move.pending || !reason.trim()} onClick={() => void move.run('lift')}>Lift</button>
                {c.credentials.some((k) => k.enforcement === 'failed') ? <button type="button" className="secondary" disabled={move.pending} onClick={() => void move.run('reenforce')}>Re-enforce failed keys</button> : null}
              </>
            )}
          </div>
        </div>
      ) : null}

      <h2>Keys reached</h2>
      {c.credentials.length ? (
        <table aria-label="Keys reached by this containment">
          <thead><tr><th scope="col">API key</th><th scope="col">Effect</th><th scope="col">Enforcement</th><th scope="col">Released</th></tr></thead>
          <tbody>
            {c.credentials.map((k) => (
              <tr key={k.api_key_id}>
                <td className="mono">{k.api_key_id}</td>
                <td>{k.effect}</td>
                <td><Status value={k.enforcement === 'verified' ? 'ok' : k.enforcement} /> {k.enforcement}{k.detail_code ? <span className="muted"> ({k.detail_code})</span> : null}</td>
                <td>{k.released_at ? <Time iso={k.released_at} /> : <span className="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p className="muted">{c.status === 'pending' ? 'None yet: keys are reached when the containment is approved.' : 'None: the target had no API key when it was approved.'}</p>
      )}
      {c.unenforceable_sightings ? <p className="muted">{c.unenforceable_sightings} sightings of the target came with OAuth access tokens, which no containment can hold.</p> : null}
    </Page>
  );
}
