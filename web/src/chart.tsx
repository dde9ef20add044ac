/**
 * Time series charts: uPlot (canvas; 100,000 points draw in a few milliseconds). Series arrive as the API
 * answers them (points per series, each with its own timestamps); they are joined on one time axis, a
 * time a series has no point at is a gap, never a zero. Colors follow the theme's CSS variables.
 * The uPlot instance is kept on its element (`__uplot`) so the browser tests read the drawn data itself.
 * A table of the same numbers is one click away (screen readers, copying).
 */
import { useEffect, useRef, useState } from 'react';
import uPlot, { type AlignedData, type Options } from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface Series {
  label: string;
  points: { t: number; v: number }[];
}

/** A band drawn between two series (a forecast's lower and upper bound), by their indexes in `series`. */
export interface Band {
  lower: number;
  upper: number;
}

const PALETTE = ['#3b82c4', '#e07b39', '#3fa34d', '#b04fc0', '#c9a227', '#2aa1a8', '#d1495b', '#6b7280'];

/** Joins series on the union of their times (seconds); a missing point is null (a gap). */
export function align(series: Series[]): AlignedData {
  const times = [...new Set(series.flatMap((s) => s.points.map((p) => p.t)))].sort((a, b) => a - b);
  const index = new Map(times.map((t, i) => [t, i]));
  const columns = series.map((s) => {
    const col: (number | null)[] = new Array(times.length).fill(null);
    for (const p of s.points) col[index.get(p.t)!] = p.v;
    return col;
  });
  return [times.map((t) => t / 1000), ...columns] as AlignedData;
}

function cssVar(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888';
}

export function TimeChart({ series, unit, bands = [], label, height = 320 }: { series: Series[]; unit?: string; bands?: Band[]; label: string; height?: number }) {
  const el = useRef<HTMLDivElement>(null);
  const [asTable, setAsTable] = useState(false);
  const data = align(series);
  const theme = document.documentElement.dataset.theme;
  useEffect(() => {
    const node = el.current;
    if (!node || asTable) return;
    const axis = { stroke: cssVar('--muted'), grid: { stroke: cssVar('--border'), width: 1 }, ticks: { stroke: cssVar('--border') } };
    const opts: Options = {
      width: node.clientWidth || 800,
      height,
      scales: { x: { time: true } },
      axes: [axis, { ...axis, label: unit, size: 60 }],
      series: [
        {},
        ...series.map((s, i) => ({
          label: s.label,
          stroke: PALETTE[i % PALETTE.length],
          width: 1.5,
          spanGaps: false,
          points: { show: s.points.length < 60 },
        })),
      ],
      bands: bands.map((b) => ({ series: [b.upper + 1, b.lower + 1] as [number, number], fill: 'rgba(59,130,196,0.15)' })),
      legend: { live: true },
    };
    const u = new uPlot(opts, data, node);
    (node as HTMLDivElement & { __uplot?: uPlot }).__uplot = u;
    const resize = new ResizeObserver(() => u.setSize({ width: node.clientWidth || 800, height }));
    resize.observe(node);
    return () => {
      resize.disconnect();
      u.destroy();
    };
    // Redraw when the numbers, the theme or the view change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [JSON.stringify(data), theme, asTable, height, unit]);
  const points = series.reduce((n, s) => n + s.points.length, 0);
  return (
    <figure className="chart" aria-label={label}>
      <div className="chart-tools">
        <span className="muted">{series.length} series, {points.toLocaleString('en-US')} points</span>
        <button type="button" className="link" onClick={() => setAsTable(!asTable)}>{asTable ? 'Show as chart' : 'Show as table'}</button>
      </div>
      {asTable ? <ChartTable series={series} /> : <div ref={el} className="chart-canvas" data-testid="time-chart" role="img" aria-label={`${label}: ${series.length} series`} />}
    </figure>
  );
}

function ChartTable({ series }: { series: Series[] }) {
  const rows = series.flatMap((s) => s.points.slice(0, 2000).map((p) => ({ s: s.label, ...p })));
  const cut = series.some((s) => s.points.length > 2000);
  return (
    <div className="scroller" style={{ maxHeight: 320 }} tabIndex={0} role="region" aria-label="Chart data">
      <table>
        <thead><tr><th scope="col">Series</th><th scope="col">Time</th><th scope="col">Value</th></tr></thead>
        <tbody>
          {rows.map((r, i) => (
            <tr key={i}><td>{r.s}</td><td><time dateTime={new Date(r.t).toISOString()}>{new Date(r.t).toLocaleString()}</time></td><td className="num">{r.v}</td></tr>
          ))}
        </tbody>
      </table>
      {cut ? <p className="muted">The first 2,000 points of each series are listed; the chart draws them all.</p> : null}
    </div>
  );
}
