/**
 * `/settings/projects`: the organization's projects with their `sampling_rate` (the share of telemetry
 * kept at ingest; 0 keeps none); create one, rename it or change its rate (`projects:write`).
 */
import { useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { useAction } from '../api/hooks';
import { useSession, type Project } from '../session';
import { DataTable, type Column } from '../table';
import { ErrorNote, Field, Page, Time } from '../ui';

export default function Projects() {
  const { me, projects, reloadProjects } = useSession();
  const canWrite = me.scopes.includes('projects:write');
  const columns: Column<Project>[] = [
    { id: 'name', header: 'Name', cell: ({ row }) => row.original.name },
    { id: 'id', header: 'Id', cell: ({ row }) => <code>{row.original.id}</code> },
    { id: 'rate', header: 'Sampling rate', cell: ({ row }) => (canWrite ? <RateEditor project={row.original} onSaved={reloadProjects} /> : <span className="num">{row.original.sampling_rate}</span>) },
    { id: 'created', header: 'Created', cell: ({ row }) => <Time iso={row.original.created_at} /> },
  ];
  return (
    <Page title="Projects">
      {canWrite ? <CreateForm onCreated={reloadProjects} /> : <p className="muted">Your role does not hold <code>projects:write</code>: you can read the projects, not change them.</p>}
      <DataTable rows={projects} columns={columns} rowKey={(p) => p.id} label="Project list" empty="No project." />
    </Page>
  );
}

function RateEditor({ project, onSaved }: { project: Project; onSaved: () => void }) {
  const [rate, setRate] = useState(String(project.sampling_rate));
  const save = useAction(async () => ok(await api.PATCH('/api/v1/projects/{id}', { params: { path: { id: project.id } }, body: { sampling_rate: Number(rate) } })));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (await save.run()) onSaved();
  };
  return (
    <form onSubmit={submit} className="inline-form">
      <input aria-label={`Sampling rate of ${project.name}`} type="number" step="any" value={rate} onChange={(e) => setRate(e.target.value)} style={{ width: '6rem' }} />
      <button type="submit" className="secondary" disabled={save.pending}>Save<span className="sr-only"> the rate of {project.name}</span></button>
      <ErrorNote error={save.error} />
    </form>
  );
}

function CreateForm({ onCreated }: { onCreated: () => void }) {
  const [name, setName] = useState('');
  const [rate, setRate] = useState('1');
  const create = useAction(async () => ok(await api.POST('/api/v1/projects', { body: { name, sampling_rate: Number(rate) } })));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (await create.run()) {
      setName('');
      onCreated();
    }
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="create-h">
      <h2 id="create-h">Create a project</h2>
      <div className="row">
        <Field label="Name"><input value={name} onChange={(e) => setName(e.target.value)} required /></Field>
        <Field label="Sampling rate" hint="0 to 1: the share of telemetry kept; 0 keeps none"><input type="number" step="any" value={rate} onChange={(e) => setRate(e.target.value)} /></Field>
      </div>
      <ErrorNote error={create.error} what="Not created" />
      <button type="submit" disabled={create.pending}>Create project</button>
    </form>
  );
}
