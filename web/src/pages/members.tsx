/**
 * `/settings/members`: the organization's people and invitations. Invite (the acceptance link is shown
 * once, to send), revoke a pending invitation, change a member's role, remove a member (their keys stop
 * working with the membership). Writes need `members:write`; without it the lists are read-only.
 */
import { useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { useAction, useLoad } from '../api/hooks';
import type { components } from '../api/schema';
import { useSession } from '../session';
import { DataTable, type Column } from '../table';
import { ErrorNote, Field, Loading, Page, Status, Time } from '../ui';

type Member = components['schemas']['Member'];
type Invitation = components['schemas']['Invitation'];
const ROLES = ['member', 'admin', 'owner'] as const;

/** Every member, page after page (an organization's people fit in a page's memory); past MEMBER_PAGES pages the list says it stopped. */
const MEMBER_PAGES = 25;
async function everyMember(): Promise<{ members: Member[]; truncated: boolean }> {
  const members: Member[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < MEMBER_PAGES; i++) {
    const page = ok(await api.GET('/api/v1/members', { params: { query: { limit: 200, ...(cursor ? { cursor } : {}) } } }));
    members.push(...page.members);
    cursor = page.next_cursor ?? undefined;
    if (!cursor) break;
  }
  // Newest first, as every list of the UI.
  members.sort((a, b) => b.created_at.localeCompare(a.created_at) || a.email.localeCompare(b.email));
  return { members, truncated: cursor !== undefined };
}

export default function Members() {
  const { me } = useSession();
  const canWrite = me.scopes.includes('members:write');
  const members = useLoad(() => everyMember(), []);
  const invitations = useLoad(async () => (canWrite ? ok(await api.GET('/api/v1/invitations', { params: { query: { limit: 200 } } })) : null), [canWrite]);
  const act = useAction(async (fn: () => Promise<unknown>) => {
    await fn();
    members.reload();
    invitations.reload();
    return true;
  });
  const memberColumns: Column<Member>[] = [
    { id: 'name', header: 'Name', cell: ({ row }) => <>{row.original.name}{row.original.user_id === me.id ? <span className="muted"> (you)</span> : null}</> },
    { id: 'email', header: 'Email', cell: ({ row }) => row.original.email },
    {
      id: 'role',
      header: 'Role',
      cell: ({ row }) =>
        canWrite && row.original.user_id !== me.id ? (
          <select
            aria-label={`Role of ${row.original.email}`}
            value={row.original.role}
            onChange={(e) => void act.run(async () => ok(await api.PATCH('/api/v1/members/{user_id}', { params: { path: { user_id: row.original.user_id } }, body: { role: e.target.value as Member['role'] } })))}
          >
            {ROLES.map((r) => <option key={r}>{r}</option>)}
          </select>
        ) : (
          row.original.role
        ),
    },
    { id: 'since', header: 'Member since', cell: ({ row }) => <Time iso={row.original.created_at} /> },
    {
      id: 'actions',
      header: 'Actions',
      cell: ({ row }) =>
        canWrite && row.original.user_id !== me.id ? (
          <button
            type="button"
            className="secondary danger"
            onClick={() =>
              window.confirm(`Remove ${row.original.email} from the organization? Their sign-ins and API keys stop working.`) &&
              void act.run(async () => ok(await api.DELETE('/api/v1/members/{user_id}', { params: { path: { user_id: row.original.user_id } } })))
            }
          >
            Remove<span className="sr-only"> {row.original.email}</span>
          </button>
        ) : null,
    },
  ];
  const invitationColumns: Column<Invitation>[] = [
    { id: 'email', header: 'Email', cell: ({ row }) => row.original.email },
    { id: 'role', header: 'Role', cell: ({ row }) => row.original.role },
    { id: 'status', header: 'Status', cell: ({ row }) => <Status value={row.original.status} /> },
    { id: 'expires', header: 'Expires', cell: ({ row }) => <Time iso={row.original.expires_at} /> },
    {
      id: 'actions',
      header: 'Actions',
      cell: ({ row }) =>
        row.original.status === 'pending' ? (
          <button type="button" className="secondary" onClick={() => void act.run(async () => ok(await api.POST('/api/v1/invitations/{id}/revoke', { params: { path: { id: row.original.id } } })))}>
            Revoke<span className="sr-only"> the invitation of {row.original.email}</span>
          </button>
        ) : null,
    },
  ];
  return (
    <Page title="Members">
      {canWrite ? <InviteForm onInvited={() => invitations.reload()} /> : <p className="muted">Your role does not hold <code>members:write</code>: an owner or admin invites people and changes roles.</p>}
      <ErrorNote error={act.error} what="Not done" />
      <h2>People</h2>
      <ErrorNote error={members.error} what="The members could not be listed" />
      {members.data ? (
        <>
          {members.data.truncated ? <p className="muted">The first {members.data.members.length.toLocaleString('en-US')} members are listed.</p> : null}
          <DataTable rows={members.data.members} columns={memberColumns} rowKey={(m) => m.user_id} label="People" empty="No member." />
        </>
      ) : members.loading ? <Loading /> : null}
      {canWrite ? (
        <>
          <h2>Invitations</h2>
          <ErrorNote error={invitations.error} what="The invitations could not be listed" />
          {invitations.data ? <DataTable rows={invitations.data.invitations} columns={invitationColumns} rowKey={(i) => i.id} label="Invitations" empty="No invitation." /> : invitations.loading ? <Loading /> : null}
        </>
      ) : null}
    </Page>
  );
}

function InviteForm({ onInvited }: { onInvited: () => void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<(typeof ROLES)[number]>('member');
  const [link, setLink] = useState<{ email: string; url: string } | null>(null);
  const invite = useAction(async () => ok(await api.POST('/api/v1/invitations', { body: { email, role } })));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const inv = await invite.run();
    if (inv) {
      setLink({ email: inv.email, url: `${window.location.origin}/invitations/${inv.token}` });
      setEmail('');
      onInvited();
    }
  };
  return (
    <form className="card" onSubmit={submit} aria-labelledby="invite-h">
      <h2 id="invite-h">Invite someone</h2>
      <div className="row">
        <Field label="Email"><input type="email" value={email} onChange={(e) => setEmail(e.target.value)} required /></Field>
        <Field label="Role"><select value={role} onChange={(e) => setRole(e.target.value as typeof role)}>{ROLES.map((r) => <option key={r}>{r}</option>)}</select></Field>
      </div>
      <ErrorNote error={invite.error} what="Not invited" />
      <button type="submit" disabled={invite.pending}>Invite</button>
      {link ? (
        <p className="secret" role="status">
          Send {link.email} this link (shown this once): <code data-testid="invitation-link" className="secret-value">{link.url}</code>
        </p>
      ) : null}
    </form>
  );
}
