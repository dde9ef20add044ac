/**
 * `/settings/pricing?project=`: a project's model prices (USD per million input and output tokens, by exact
 * model string, for one provider or any): runs and sessions are priced from them when read, so a price set
 * later prices runs already stored. Set or delete a price with `llm:write`.
 */
import { useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { useAction, usePaged } from '../api/hooks';
import type { components } from '../api/schema';
import { setQuery, useLocation } from '../router';
import { useSession } from '../session';
import { DataTable, type Column } from '../table';
import { ErrorNote, Field, Loading, Page, Time } from '../ui';

type Price = components['schemas']['LlmPrice'];

export default function Pricing() {
  const { me, projects } = useSession();
  const { query } = useLocation();
  const project = query.get('project') ?? localStorage.getItem('svc.project') ?? projects[0]?.id ?? '';
  const canWrite = me.scopes.includes('llm:write');
  const fetchPage = async (cursor?: string) => {
    const p = ok(await api.GET('/api/v1/llm/pricing', { params: { query: { project_id: project, limit: 200, ...(cursor ? { cursor } : {}) } } }));
    return { items: p.prices, next: p.next_cursor };
  };
  const { first, rows, more, moreError } = usePaged(fetchPage, [project]);
  const remove = useAction(async (p: Price) => {
    ok(await api.DELETE('/api/v1/llm/pricing', { params: { query: { project_id: project, model: p.model, ...(p.provider ? { provider: p.provider } : {}) } } }));
    first.reload();
  });
  const columns: Column<Price>[] = [
    { id: 'model', header: 'Model', cell: ({ row }) => <code>{row.original.model}</code> },
    { id: 'provider', header: 'Provider', cell: ({ row }) => row.original.provider ?? <span className="muted">any</span> },
    { id: 'in', header: 'Input, $ per 1M tokens', cell: ({ row }) => <span className="num">{row.original.input_usd_per_million_tokens}</span> },
    { id: 'out', header: 'Output, $ per 1M tokens', cell: ({ row }) => <span className="num">{row.original.output_usd_per_million_tokens}</span> },
    { id: 'updated', header: 'Updated', cell: ({ row }) => <Time iso={row.original.updated_at} /> },
    {
      id: 'actions',
      header: 'Actions',
      cell: ({ row }) =>
        canWrite ? (
          <button type="button" className="secondary danger" onClick={() => window.confirm(`Delete the price of ${row.original.model}? Its runs show their cost as unavailable.`) && void remove.run(row.original)}>
            Delete<span className="sr-only"> the price of {row.original.model}</span>
          </button>
        ) : null,
    },
  ];
  return (
    <Page
      title="Model prices"
      actions={
        <label className="field">
          <span>Project</span>
          <select value={project} onChange={(e) => setQuery({ project: e.target.value })}>{projects.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}</select>
        </label>
      }
    >
      {canWrite ? <PriceForm project={project} onSaved={first.reload} /> : <p className="muted">Your role does not hold <code>llm:write</code>: you can read the prices, not set them.</p>}
      <ErrorNote error={first.error ?? moreError ?? remove.error} what="Prices" />
      {first.data ? <DataTable rows={rows} columns={columns} rowKey={(p) => `${p.model}\n${p.provider ?? ''}`} label="Price list" empty="No price: model costs show as unavailable (a model has no price) until one is set." more={more} /> : first.loading ? <Loading /> : null}
    </Page>
  );
}

function PriceForm({ project, onSaved }: { project: string; onSaved: () => void }) {
  const [f, setF] = useState({ model: '', provider: '', input: '', output: '' });
  const save = useAction(async () =>
    ok(
      await api.PUT('/api/v1/llm/pricing', {
        params: { query: { project_id: project } },
        body: { model: f.model, provider: f.provider || null, input_usd_per_million_tokens: Number(f.input), output_usd_per_million_tokens: Number(f.output) },
      }),
    ),
  );
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (await save.run()) {
      setF({ model: '', provider: '', input: '', output: '' });
      onSaved();
    }
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="price-h">
      <h2 id="price-h">Set a price</h2>
      <div className="row">
        <Field label="Model" hint="the exact model string of the steps"><input value={f.model} onChange={(e) => setF({ ...f, model: e.target.value })} required /></Field>
        <Field label="Provider" hint="empty: any provider"><input value={f.provider} onChange={(e) => setF({ ...f, provider: e.target.value })} /></Field>
        <Field label="Input $ per million tokens"><input type="number" step="any" min={0} value={f.input} onChange={(e) => setF({ ...f, input: e.target.value })} required /></Field>
        <Field label="Output $ per million tokens"><input type="number" step="any" min={0} value={f.output} onChange={(e) => setF({ ...f, output: e.target.value })} required /></Field>
      </div>
      <ErrorNote error={save.error} what="Not saved" />
      <button type="submit" disabled={save.pending}>Save price</button>
    </form>
  );
}
