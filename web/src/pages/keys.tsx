/**
 * `/settings/keys`: the signed-in person's API keys. Minting shows the secret once (the API never returns
 * it again); scopes offered are the ones the person holds (a key cannot hold more than its maker).
 */
import { useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { useAction, useLoad } from '../api/hooks';
import type { components } from '../api/schema';
import { useSession } from '../session';
import { DataTable, type Column } from '../table';
import { ErrorNote, Field, Loading, Page, Status, Time } from '../ui';

type ApiKey = components['schemas']['ApiKey'];

/** The scope every key route needs; a person whose role lacks it is told so instead of being refused. */
const KEYS_SCOPE = 'api_key:write';

export default function Keys() {
  const { me } = useSession();
  if (!me.scopes.includes(KEYS_SCOPE)) {
    return (
      <Page title="API keys">
        <p>
          Your role ({me.organization.role}) does not hold <code>{KEYS_SCOPE}</code>, which creating and listing API keys needs. An owner or
          admin of your organization can mint a key for you, or change your role.
        </p>
        <p className="muted">The CLI can still act as you: <code>svc login</code> signs it in with your scopes.</p>
      </Page>
    );
  }
  return <KeyList />;
}

function KeyList() {
  const { me, projects } = useSession();
  const keys = useLoad(async () => ok(await api.GET('/api/v1/account/api-keys', { params: { query: { limit: 200 } } })), []);
  const [minted, setMinted] = useState<{ name: string; key: string } | null>(null);
  const revoke = useAction(async (id: string) => ok(await api.POST('/api/v1/account/api-keys/{id}/revoke', { params: { path: { id } } })));
  const projectName = (id: string | null) => (id ? (projects.find((p) => p.id === id)?.name ?? id) : 'organization');

  const columns: Column<ApiKey>[] = [
    { id: 'name', header: 'Name', cell: ({ row }) => row.original.name },
    { id: 'prefix', header: 'Key', cell: ({ row }) => <code>{row.original.key_prefix}…</code> },
    { id: 'where', header: 'Project', cell: ({ row }) => (row.original.org_wide ? 'every project (organization-wide)' : projectName(row.original.project_id)) },
    { id: 'scopes', header: 'Scopes', cell: ({ row }) => <span className="scopes-inline">{row.original.scopes.join(', ')}</span> },
    { id: 'status', header: 'Status', cell: ({ row }) => <Status value={row.original.status} /> },
    { id: 'expires', header: 'Expires', cell: ({ row }) => <Time iso={row.original.expires_at} /> },
    { id: 'used', header: 'Last used', cell: ({ row }) => (row.original.last_used_at ? <Time iso={row.original.last_used_at} /> : <span className="muted">never</span>) },
    {
      id: 'actions',
      header: 'Actions',
      cell: ({ row }) =>
        row.original.status === 'active' ? (
          <button
            type="button"
            className="secondary danger"
            disabled={revoke.pending}
            onClick={async () => {
              if (!window.confirm(`Revoke the key "${row.original.name}"? Anything using it is refused at once.`)) return;
              if (await revoke.run(row.original.id)) keys.reload();
            }}
          >
            Revoke<span className="sr-only"> {row.original.name}</span>
          </button>
        ) : null,
    },
  ];

  return (
    <Page title="API keys">
      <MintForm scopes={me.scopes} projects={projects} onMinted={(m) => { setMinted(m); keys.reload(); }} />
      {minted ? (
        <div className="card secret" role="status" aria-live="polite">
          <h2>Key “{minted.name}” created</h2>
          <p>Copy it now: it is shown this once and cannot be read again.</p>
          <p><code data-testid="minted-key" className="secret-value">{minted.key}</code>{' '}
            <button type="button" className="secondary" onClick={() => void navigator.clipboard?.writeText(minted.key)}>Copy</button>{' '}
            <button type="button" className="link" onClick={() => setMinted(null)}>Done</button>
          </p>
        </div>
      ) : null}
      <h2>Your keys</h2>
      <ErrorNote error={keys.error} what="Your keys could not be listed" />
      <ErrorNote error={revoke.error} what="Not revoked" />
      {keys.data ? (
        <DataTable rows={keys.data.api_keys} columns={columns} rowKey={(k) => k.id} label="Your API keys" empty="You have no API key yet." />
      ) : keys.loading ? <Loading /> : null}
    </Page>
  );
}

function MintForm({ scopes, projects, onMinted }: { scopes: string[]; projects: { id: string; name: string }[]; onMinted: (m: { name: string; key: string }) => void }) {
  const [name, setName] = useState('');
  const [chosen, setChosen] = useState<Set<string>>(new Set());
  const [where, setWhere] = useState(projects[0]?.id ?? 'org');
  const [days, setDays] = useState('30');
  const mint = useAction(async () =>
    ok(
      await api.POST('/api/v1/account/api-keys', {
        body: {
          name,
          scopes: [...chosen],
          ...(where === 'org' ? { org_wide: true } : { project_id: where }),
          expires_in_days: Number(days),
        },
      }),
    ),
  );
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const created = await mint.run();
    if (created) {
      onMinted({ name: created.name, key: created.key });
      setName('');
      setChosen(new Set());
    }
  };
  const toggle = (s: string) => {
    const next = new Set(chosen);
    if (next.has(s)) next.delete(s);
    else next.add(s);
    setChosen(next);
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="mint-h">
      <h2 id="mint-h">Create a key</h2>
      <div className="row">
        <Field label="Name">
          <input value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
        </Field>
        <Field label="Project">
          <select value={where} onChange={(e) => setWhere(e.target.value)}>
            {projects.map((p) => <option key={p.id} value={p.id}>{p.name}</option>)}
            <option value="org">Every project (organization-wide)</option>
          </select>
        </Field>
        <Field label="Expires after (days)">
          <input type="number" min={1} value={days} onChange={(e) => setDays(e.target.value)} required />
        </Field>
      </div>
      <fieldset className="checks scopes-pick">
        <legend>Scopes (the ones you hold)</legend>
        {scopes.map((s) => (
          <label key={s}>
            <input type="checkbox" checked={chosen.has(s)} onChange={() => toggle(s)} /> <code>{s}</code>
          </label>
        ))}
      </fieldset>
      <ErrorNote error={mint.error} what="Not created" />
      <button type="submit" disabled={mint.pending}>{mint.pending ? 'Creating…' : 'Create key'}</button>
    </form>
  );
}
