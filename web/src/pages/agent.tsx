/**
 * `/p/{p}/agents/{asset_id}`: one agent of the inventory: what it is, where it was seen, its runs and
 * containment; review (approval and risk, with a reason), data classification and ownership (each needs
 * `agents:write`); every version of the record with who wrote it.
 */
import { useState, type FormEvent, type ReactNode } from 'react';
import { api, ok } from '../api/client';
import { useAction, useLoad } from '../api/hooks';
import type { components } from '../api/schema';
import { enumWords } from '../format';
import { Link } from '../router';
import { useSession } from '../session';
import { ErrorNote, Field, Loading, Page, Status, Time } from '../ui';
import { environmentsOf } from './agents';

type Asset = components['schemas']['Asset'];
const APPROVALS = ['UNREVIEWED', 'APPROVED', 'REJECTED'].map((s) => `APPROVAL_STATE_${s}`) as Asset['approval_state'][];
const RISKS = ['UNASSESSED', 'LOW', 'MEDIUM', 'HIGH', 'CRITICAL'].map((s) => `RISK_TIER_${s}`) as Asset['risk_tier'][];
const CLASSES = ['UNCLASSIFIED', 'PUBLIC', 'INTERNAL', 'CONFIDENTIAL', 'RESTRICTED'].map((s) => `DATA_CLASSIFICATION_${s}`) as Asset['data_classification'][];

export default function Agent({ params }: { params: Record<string, string> }) {
  const { project, asset: id } = params;
  const { me } = useSession();
  const path = { path: { assetId: id }, query: { project_id: project } };
  const asset = useLoad(async () => ok(await api.GET('/api/v1/assets/{assetId}', { params: path })), [project, id]);
  const versions = useLoad(async () => ok(await api.GET('/api/v1/assets/{assetId}/versions', { params: { ...path, query: { ...path.query, limit: 200 } } })), [project, id, asset.data?.version]);
  if (asset.error) return <Page title="Agent"><ErrorNote error={asset.error} what="This agent could not be read" /></Page>;
  if (!asset.data) return <Loading />;
  const a = asset.data;
  const canWrite = me.scopes.includes('agents:write');
  const key = a.observation_keys[0];
  return (
    <Page
      title={<>{a.name} {a.shadow ? <span className="badge status-shadow">shadow</span> : null}</>}
      actions={<Link href={`/p/${project}/agents`}>All agents</Link>}
    >
      <dl className="facts">
        <div><dt>Origin</dt><dd>{a.origin}</dd></div>
        <div><dt>Approval</dt><dd><Status value={enumWords(a.approval_state, 'APPROVAL_STATE')} />{a.approval_reason ? <span className="muted"> {a.approval_reason}</span> : null}</dd></div>
        <div><dt>Risk tier</dt><dd>{enumWords(a.risk_tier, 'RISK_TIER')}</dd></div>
        <div><dt>Data classification</dt><dd>{enumWords(a.data_classification, 'DATA_CLASSIFICATION')}</dd></div>
        <div><dt>Owner</dt><dd>{[a.owner_team, a.owner_principal].filter(Boolean).join(' · ') || <span className="muted">nobody</span>}</dd></div>
        <div><dt>Environments</dt><dd>{environmentsOf(a)}</dd></div>
        <div><dt>Observation keys</dt><dd className="mono">{a.observation_keys.join(', ') || '—'}</dd></div>
        <div><dt>Containment</dt><dd>{a.quarantine_id ? <Link href={`/p/${project}/containments/${a.quarantine_id}`}>active</Link> : <Link href={`/p/${project}/containments?asset_id=${a.id}`}>none (request one…)</Link>}</dd></div>
        <div><dt>Version</dt><dd className="num">{a.version}</dd></div>
      </dl>
      {key ? <p><Link href={`/p/${project}/runs?observation_key=${encodeURIComponent(key)}`}>Runs of this agent</Link></p> : null}
      {canWrite ? (
        <div className="panels">
          <Review a={a} project={project} onDone={asset.reload} />
          <Classify a={a} project={project} onDone={asset.reload} />
          <Ownership a={a} project={project} onDone={asset.reload} />
        </div>
      ) : (
        <p className="muted">Your role does not hold <code>agents:write</code>: you can read this agent, not review it.</p>
      )}
      <h2>History</h2>
      <ErrorNote error={versions.error} what="The history could not be read" />
      {versions.data ? (
        <table aria-label="Versions of this agent">
          <thead><tr><th scope="col">Version</th><th scope="col">Change</th><th scope="col">By</th><th scope="col">When</th></tr></thead>
          <tbody>
            {[...versions.data.versions].reverse().map((v) => (
              <tr key={v.version}><td className="num">{v.version}</td><td>{v.change}</td><td className="mono">{v.actor ?? 'system'}</td><td><Time iso={v.occurred_at} /></td></tr>
            ))}
          </tbody>
        </table>
      ) : versions.loading ? <Loading /> : null}
    </Page>
  );
}

function FormCard({ title, onSubmit, error, pending, children }: { title: string; onSubmit: () => void; error: ReturnType<typeof useAction>['error']; pending: boolean; children: ReactNode }) {
  const submit = (e: FormEvent) => {
    e.preventDefault();
    onSubmit();
  };
  return (
    <form className="card panel" onSubmit={submit} aria-label={title}>
      <h2>{title}</h2>
      {children}
      <ErrorNote error={error} what="Not saved" />
      <button type="submit" disabled={pending}>Save</button>
    </form>
  );
}

function Review({ a, project, onDone }: { a: Asset; project: string; onDone: () => void }) {
  const [approval, setApproval] = useState(a.approval_state);
  const [risk, setRisk] = useState(a.risk_tier);
  const [reason, setReason] = useState('');
  const save = useAction(async () => ok(await api.POST('/api/v1/assets/{assetId}/reviews', { params: { path: { assetId: a.id }, query: { project_id: project } }, body: { approval_state: approval, risk_tier: risk, reason } })));
  return (
    <FormCard title="Review" error={save.error} pending={save.pending} onSubmit={async () => (await save.run()) && (setReason(''), onDone())}>
      <Field label="Approval"><select value={approval} onChange={(e) => setApproval(e.target.value as typeof approval)}>{APPROVALS.map((v) => <option key={v} value={v}>{enumWords(v, 'APPROVAL_STATE')}</option>)}</select></Field>
      <Field label="Risk tier"><select value={risk} onChange={(e) => setRisk(e.target.value as typeof risk)}>{RISKS.map((v) => <option key={v} value={v}>{enumWords(v, 'RISK_TIER')}</option>)}</select></Field>
      <Field label="Review reason"><input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={1024} /></Field>
    </FormCard>
  );
}

function Classify({ a, project, onDone }: { a: Asset; project: string; onDone: () => void }) {
  const [cls, setCls] = useState(a.data_classification);
  const [reason, setReason] = useState('');
  const save = useAction(async () => ok(await api.PUT('/api/v1/assets/{assetId}/data-classification', { params: { path: { assetId: a.id }, query: { project_id: project } }, body: { data_classification: cls, reason } })));
  return (
    <FormCard title="Data classification" error={save.error} pending={save.pending} onSubmit={async () => (await save.run()) && (setReason(''), onDone())}>
      <Field label="Classification"><select value={cls} onChange={(e) => setCls(e.target.value as typeof cls)}>{CLASSES.map((v) => <option key={v} value={v}>{enumWords(v, 'DATA_CLASSIFICATION')}</option>)}</select></Field>
      <Field label="Classification reason"><input value={reason} onChange={(e) => setReason(e.target.value)} maxLength={1024} /></Field>
    </FormCard>
  );
}

function Ownership({ a, project, onDone }: { a: Asset; project: string; onDone: () => void }) {
  const [team, setTeam] = useState(a.owner_team ?? '');
  const [principal, setPrincipal] = useState(a.owner_principal ?? '');
  const save = useAction(async () =>
    ok(await api.PUT('/api/v1/assets/{assetId}/ownership', { params: { path: { assetId: a.id }, query: { project_id: project } }, body: { owner_team: team || null, owner_principal: principal || null } })),
  );
  return (
    <FormCard title="Ownership" error={save.error} pending={save.pending} onSubmit={async () => (await save.run()) && onDone()}>
      <Field label="Owning team"><input value={team} onChange={(e) => setTeam(e.target.value)} /></Field>
      <Field label="Owning person or principal"><input value={principal} onChange={(e) => setPrincipal(e.target.value)} /></Field>
    </FormCard>
  );
}
