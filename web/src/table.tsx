/**
 * The one table of every list page: TanStack Table for the columns, TanStack Virtual for the rows, so a
 * list of 10,000 rows renders the few dozen in view. A real <table> (spacer rows above and below the
 * rendered window keep the scroll height), so screen readers and keyboard users meet a table.
 * The rows are the API's pages as they arrive; `more` loads the next page with the API's cursor.
 */
import { useRef, type ReactNode } from 'react';
import { flexRender, getCoreRowModel, useReactTable, type ColumnDef } from '@tanstack/react-table';
import { useVirtualizer } from '@tanstack/react-virtual';

export type Column<T> = ColumnDef<T, unknown> & { header: string };

export function DataTable<T>({
  rows,
  columns,
  label,
  empty,
  more,
  rowKey,
  height = 560,
}: {
  rows: T[];
  columns: Column<T>[];
  label: string;
  empty: ReactNode;
  /** Present while the API has a next page. */
  more?: { load: () => void; pending: boolean };
  rowKey: (row: T) => string;
  height?: number;
}) {
  const table = useReactTable({ data: rows, columns, getCoreRowModel: getCoreRowModel(), getRowId: (r) => rowKey(r) });
  const scroller = useRef<HTMLDivElement>(null);
  const all = table.getRowModel().rows;
  const virtual = useVirtualizer({ count: all.length, getScrollElement: () => scroller.current, estimateSize: () => 37, overscan: 12 });
  const items = virtual.getVirtualItems();
  const top = items.length ? items[0].start : 0;
  const bottom = items.length ? virtual.getTotalSize() - items[items.length - 1].end : 0;
  if (!rows.length) return <p className="muted empty">{empty}</p>;
  return (
    <div className="table-wrap">
      <div className="scroller" ref={scroller} style={{ maxHeight: height }} tabIndex={0} role="region" aria-label={label}>
        <table aria-rowcount={all.length}>
          <thead>
            {table.getHeaderGroups().map((g) => (
              <tr key={g.id}>
                {g.headers.map((h) => (
                  <th key={h.id} scope="col">{flexRender(h.column.columnDef.header, h.getContext())}</th>
                ))}
              </tr>
            ))}
          </thead>
          <tbody>
            {top > 0 ? <tr aria-hidden="true" style={{ height: top }} /> : null}
            {items.map((v) => {
              const row = all[v.index];
              return (
                <tr key={row.id} data-index={v.index} ref={virtual.measureElement} aria-rowindex={v.index + 1}>
                  {row.getVisibleCells().map((c) => (
                    <td key={c.id}>{flexRender(c.column.columnDef.cell, c.getContext())}</td>
                  ))}
                </tr>
              );
            })}
            {bottom > 0 ? <tr aria-hidden="true" style={{ height: bottom }} /> : null}
          </tbody>
        </table>
      </div>
      <p className="table-foot muted">
        {all.length.toLocaleString('en-US')} shown{more ? ', more on the next page' : ''}
        {more ? (
          <button type="button" className="secondary" onClick={more.load} disabled={more.pending}>
            {more.pending ? 'Loading…' : 'Load more'}
          </button>
        ) : null}
      </p>
    </div>
  );
}
