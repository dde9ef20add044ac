/**
 * A histogram metric as a heatmap: time across, bucket (by upper bound) up, the count of each cell as its
 * color (log scale, so a few slow requests still show beside many fast ones). Drawn on one canvas; the
 * cells (as the API answered them) are kept on the element (`__cells`) for the browser tests, and the
 * hovered cell is named in words.
 */
import { useEffect, useRef, useState } from 'react';

export interface Cell {
  timestamp: string;
  upper_bound: number;
  upper_bound_infinite: boolean;
  count: number | string;
}

const boundLabel = (c: Pick<Cell, 'upper_bound' | 'upper_bound_infinite'>) => (c.upper_bound_infinite ? `> ${c.upper_bound}` : `≤ ${c.upper_bound}`);

export function Heatmap({ cells, unit, label }: { cells: Cell[]; unit?: string; label: string }) {
  const el = useRef<HTMLCanvasElement>(null);
  const [hover, setHover] = useState<string | null>(null);
  const times = [...new Set(cells.map((c) => c.timestamp))].sort();
  const bounds = [...new Map(cells.map((c) => [`${c.upper_bound_infinite}:${c.upper_bound}`, c])).values()].sort(
    (a, b) => Number(a.upper_bound_infinite) - Number(b.upper_bound_infinite) || a.upper_bound - b.upper_bound,
  );
  const key = (c: Pick<Cell, 'upper_bound' | 'upper_bound_infinite'>) => `${c.upper_bound_infinite}:${c.upper_bound}`;
  const yIndex = new Map(bounds.map((b, i) => [key(b), i]));
  const xIndex = new Map(times.map((t, i) => [t, i]));
  const max = Math.max(1, ...cells.map((c) => Number(c.count)));
  const width = 900;
  const height = Math.max(120, Math.min(360, bounds.length * 18));
  useEffect(() => {
    const canvas = el.current;
    if (!canvas) return;
    (canvas as HTMLCanvasElement & { __cells?: Cell[] }).__cells = cells;
    const g = canvas.getContext('2d');
    if (!g) return;
    g.clearRect(0, 0, width, height);
    const w = width / Math.max(1, times.length);
    const h = height / Math.max(1, bounds.length);
    for (const c of cells) {
      const n = Number(c.count);
      if (n <= 0) continue;
      const x = xIndex.get(c.timestamp)!;
      const y = yIndex.get(key(c))!;
      const a = 0.15 + 0.85 * (Math.log1p(n) / Math.log1p(max));
      g.fillStyle = `rgba(224, 123, 57, ${a.toFixed(3)})`;
      g.fillRect(x * w, height - (y + 1) * h, Math.ceil(w), Math.ceil(h));
    }
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [cells]);
  const onMove = (e: React.MouseEvent<HTMLCanvasElement>) => {
    const r = e.currentTarget.getBoundingClientRect();
    const x = Math.floor(((e.clientX - r.left) / r.width) * times.length);
    const y = bounds.length - 1 - Math.floor(((e.clientY - r.top) / r.height) * bounds.length);
    const c = cells.find((c) => c.timestamp === times[x] && yIndex.get(key(c)) === y);
    setHover(c ? `${new Date(c.timestamp).toLocaleString()}: ${c.count} in ${boundLabel(c)}${unit ? ` ${unit}` : ''}` : null);
  };
  return (
    <figure className="chart" aria-label={label}>
      <div className="chart-tools">
        <span className="muted">{times.length} time buckets × {bounds.length} histogram buckets</span>
        <span aria-live="polite">{hover}</span>
      </div>
      <div className="heatmap">
        <div className="heatmap-y muted" aria-hidden="true">
          <span>{bounds.length ? boundLabel(bounds[bounds.length - 1]) : ''}</span>
          <span>{bounds.length ? boundLabel(bounds[0]) : ''}</span>
        </div>
        <canvas ref={el} width={width} height={height} data-testid="heatmap" role="img" aria-label={`${label}: counts per time and bucket`} onMouseMove={onMove} onMouseLeave={() => setHover(null)} />
      </div>
      {times.length ? (
        <div className="heatmap-x muted" aria-hidden="true"><span>{new Date(times[0]).toLocaleString()}</span><span>{new Date(times[times.length - 1]).toLocaleString()}</span></div>
      ) : null}
    </figure>
  );
}
