/**
 * `svc memory label|get|labels|propagation`: memory item labels and where an item went
 * (`/api/v1/memory-items`, `/memory-item-labels`; docs/memory.md). The label write needs agents:write,
 * the reads agents:read; all act on the active project. Labels are given short (`quarantined`) or in full
 * (`MEMORY_TRUST_LABEL_QUARANTINED`). A label records a judgement only: it blocks nothing, so it needs no --yes.
 */
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { collect, nonEmpty, positiveInt } from '../flags.js';
import { renderTable, type Cell } from '../output.js';
import { readPages } from '../paged.js';
import { enumValue } from './assets.js';

export const MAX_LABEL_PAGE = 200;
export const MAX_PROPAGATION_LIMIT = 500;
export const TRUST_LABEL = { prefix: 'MEMORY_TRUST_LABEL_', values: ['trusted', 'suspect', 'quarantined'] } as const;

export interface MemoryLabel {
  id: string;
  memory_item_key: string;
  label: string;
  reason: string;
  revision: number;
  labeled_by: string;
  labeled_at: string;
  review_signal_opened: boolean;
  review_signal_resolved: boolean;
}

interface PropagationEntry {
  session_key: string | null;
  turn_id: string | null;
  run_id: string | null;
  span_id: string;
  occurred_at: string;
  canonical_operation: string;
  store: string | null;
  label_in_force: string | null;
  label_revision: number | null;
}

interface Propagation {
  memory_item_key: string;
  entries: PropagationEntry[];
  distinct_session_count: number;
  current_label: string | null;
  truncated: boolean;
}

const short = (v: string | null | undefined) => (v ? v.replace(/^MEMORY_TRUST_LABEL_|^CANONICAL_OPERATION_/, '').toLowerCase() : undefined);
const LABEL_HEADERS = ['ITEM', 'REVISION', 'LABEL', 'LABELED_BY', 'LABELED_AT', 'REASON'];
const labelRow = (l: MemoryLabel): Cell[] => [l.memory_item_key, l.revision, short(l.label), l.labeled_by, l.labeled_at, l.reason];

function renderLabel(l: MemoryLabel, color: boolean): string {
  const rows: Cell[][] = [...LABEL_HEADERS.map((h, i) => [h.toLowerCase(), labelRow(l)[i]]), ['id', l.id]];
  if (l.review_signal_opened) rows.push(['review_signal', 'opened']);
  if (l.review_signal_resolved) rows.push(['review_signal', 'resolved']);
  return renderTable(['FIELD', 'VALUE'], rows, { color });
}

function renderPropagation(p: Propagation, color: boolean): string {
  const head = `item ${p.memory_item_key}: current label ${short(p.current_label) ?? 'none'}, ${p.distinct_session_count} session(s)${p.truncated ? ', truncated (raise --limit)' : ''}\n`;
  return (
    head +
    renderTable(
      ['OCCURRED_AT', 'OPERATION', 'STORE', 'SESSION', 'TURN', 'RUN', 'SPAN', 'LABEL_THEN'],
      p.entries.map((e) => [
        e.occurred_at,
        short(e.canonical_operation),
        e.store ?? undefined,
        e.session_key ?? undefined,
        e.turn_id ?? undefined,
        e.run_id ?? undefined,
        e.span_id,
        e.label_in_force ? `${short(e.label_in_force)} (r${e.label_revision})` : 'unlabeled',
      ]),
      { color },
    )
  );
}

const itemPath = (key: string, suffix: string) => `/memory-items/${encodeURIComponent(key)}${suffix}`;

export function registerMemory(program: Command, ctx: Context): void {
  const project = (why: string) => ctx.projectQuery(why);
  const m = program.command('memory').description('memory item labels (trusted, suspect, quarantined) and where an item went');

  m.command('label')
    .description('label a memory item (appends a revision; quarantined opens a review signal, trusted resolves it)')
    .argument('<item_key>', 'the item key (svc.memory.item.id)')
    .requiredOption('--label <label>', TRUST_LABEL.values.join(' | '), (v: string) => enumValue('--label', TRUST_LABEL, v))
    .requiredOption('--reason <text>', 'why (required, at most 1024 characters)', nonEmpty('--reason'))
    .action(async (key: string, opts: { label: string; reason: string }) => {
      const query = project('a memory label belongs to a project');
      const l = await ctx.client().put<MemoryLabel>(itemPath(key, '/label'), { query, body: { label: opts.label, reason: opts.reason } });
      ctx.print(l, () => renderLabel(l, ctx.color));
    });

  m.command('get')
    .description('the current label of a memory item (exit 1 with not_found when nobody labelled it)')
    .argument('<item_key>', 'the item key')
    .action(async (key: string) => {
      const l = await ctx.client().get<MemoryLabel>(itemPath(key, '/label'), { query: project('a memory label belongs to a project') });
      ctx.print(l, () => renderLabel(l, ctx.color));
    });

  m.command('labels')
    .description('every label revision of the active project, newest first')
    .option('--item <item_key>', 'only this item', nonEmpty('--item'))
    .option('--label <label>', `repeatable or comma-separated: ${TRUST_LABEL.values.join(', ')}`, (v: string, prev: string[] | undefined) =>
      collect(v.split(',').map((x) => enumValue('--label', TRUST_LABEL, x)).join(','), prev),
    )
    .option('--limit <n>', `page size (server default 100, at most ${MAX_LABEL_PAGE})`, positiveInt('--limit', MAX_LABEL_PAGE))
    .option('--cursor <cursor>', 'continue from a next_cursor')
    .option('--all', 'follow next_cursor until the last page')
    .action(async (opts: { item?: string; label?: string[]; limit?: number; cursor?: string; all?: boolean }) => {
      const labels = opts.label && [...new Set(opts.label.flatMap((v) => v.split(',')))];
      const query = { ...project('memory labels belong to a project'), memory_item_key: opts.item, label: labels };
      const { items, next_cursor } = await readPages<MemoryLabel>(ctx, '/memory-item-labels', 'memory_item_labels', opts, query);
      ctx.print({ memory_item_labels: items, next_cursor }, () => renderTable(LABEL_HEADERS, items.map(labelRow), { color: ctx.color }));
      if (next_cursor !== null && ctx.format === 'table') ctx.note(`more labels: pass --cursor ${next_cursor} (or --all)`);
    });

  m.command('propagation')
    .description('where a memory item went: its recorded operations, oldest first, with the label in force at each')
    .argument('<item_key>', 'the item key')
    .option('--limit <n>', `entries (server default 200, at most ${MAX_PROPAGATION_LIMIT})`, positiveInt('--limit', MAX_PROPAGATION_LIMIT))
    .action(async (key: string, opts: { limit?: number }) => {
      const p = await ctx.client().get<Propagation>(itemPath(key, '/propagation'), { query: { ...project('a memory item belongs to a project'), limit: opts.limit } });
      ctx.print(p, () => renderPropagation(p, ctx.color));
    });
}
