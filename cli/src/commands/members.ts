/** `svc members list|remove|set-role` and `svc invitations create|list|revoke`. */
import { Argument, Option, type Command } from 'commander';
import type { Context } from '../context.js';
import { nonEmpty, positiveInt, requireYes } from '../flags.js';
import { renderTable } from '../output.js';
import { readPages } from '../paged.js';

const ROLES = ['owner', 'admin', 'member'];

interface Member {
  user_id: string;
  email: string;
  name: string;
  role: string;
  created_at: string;
}

interface Invitation {
  id: string;
  email: string;
  role: string;
  status: string;
  expires_at: string;
  created_at: string;
  token?: string;
}

const MEMBER_HEADERS = ['USER_ID', 'EMAIL', 'NAME', 'ROLE', 'JOINED'];
const memberRow = (m: Member) => [m.user_id, m.email, m.name, m.role, m.created_at];
const INVITATION_HEADERS = ['ID', 'EMAIL', 'ROLE', 'STATUS', 'EXPIRES_AT'];
const invitationRow = (i: Invitation) => [i.id, i.email, i.role, i.status, i.expires_at];

function pageOptions(cmd: Command): Command {
  return cmd
    .option('--limit <n>', 'page size', positiveInt('--limit'))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page');
}

export function registerMembers(program: Command, ctx: Context): void {
  const members = program.command('members').description('members of the organization and their roles');

  pageOptions(members.command('list').description('list members')).action(async (opts: { limit?: number; cursor?: string; all?: boolean }) => {
    const { items, next_cursor } = await readPages<Member>(ctx, '/members', 'members', opts);
    ctx.print({ members: items, next_cursor }, () => renderTable(MEMBER_HEADERS, items.map(memberRow), { color: ctx.color }));
    if (next_cursor !== null && ctx.format === 'table') ctx.note(`more members: svc members list --cursor ${next_cursor}`);
  });

  members
    .command('remove')
    .description('remove a member from the organization (needs --yes)')
    .argument('<user_id>', 'the member to remove')
    .option('--yes', 'confirm the removal')
    .action(async (userId: string, opts: { yes?: boolean }) => {
      requireYes(opts.yes, `removing member ${userId}`);
      await ctx.client().delete(`/members/${encodeURIComponent(userId)}`);
      ctx.print({ removed: true, user_id: userId }, () => `Removed member ${userId}\n`);
    });

  members
    .command('set-role')
    .description('change the role of a member')
    .argument('<user_id>', 'the member')
    .addArgument(new Argument('<role>', 'the new role').choices(ROLES))
    .action(async (userId: string, role: string) => {
      const member = await ctx.client().patch<Member>(`/members/${encodeURIComponent(userId)}`, { body: { role } });
      ctx.print(member, () => renderTable(MEMBER_HEADERS, [memberRow(member)], { color: ctx.color }));
    });

  const invitations = program.command('invitations').description('invite people into the organization');

  invitations
    .command('create')
    .description('invite a person; prints the one-time acceptance token')
    .requiredOption('--email <email>', 'who to invite', nonEmpty('--email'))
    .addOption(new Option('--role <role>', 'their role').choices(ROLES).default('member'))
    .action(async (opts: { email: string; role: string }) => {
      const inv = await ctx.client().post<Invitation>('/invitations', { body: { email: opts.email, role: opts.role } });
      ctx.print(inv, () => renderTable([...INVITATION_HEADERS, 'TOKEN'], [[...invitationRow(inv), inv.token ?? '']], { color: ctx.color }));
      if (ctx.format === 'table' && inv.token)
        ctx.note(`the token is shown only this once: send the invitee ${ctx.settings().apiUrl.value.replace(/\/+$/, '')}/invitations/${inv.token} to accept in a browser`);
    });

  pageOptions(invitations.command('list').description('list invitations')).action(async (opts: { limit?: number; cursor?: string; all?: boolean }) => {
    const { items, next_cursor } = await readPages<Invitation>(ctx, '/invitations', 'invitations', opts);
    ctx.print({ invitations: items, next_cursor }, () => renderTable(INVITATION_HEADERS, items.map(invitationRow), { color: ctx.color }));
  });

  invitations
    .command('revoke')
    .description('revoke a pending invitation (needs --yes)')
    .argument('<id>', 'invitation id')
    .option('--yes', 'confirm the revocation')
    .action(async (id: string, opts: { yes?: boolean }) => {
      requireYes(opts.yes, `revoking invitation ${id}`);
      const inv = await ctx.client().post<Invitation>(`/invitations/${encodeURIComponent(id)}/revoke`);
      ctx.print(inv, () => renderTable(INVITATION_HEADERS, [invitationRow(inv)], { color: ctx.color }));
    });
}
