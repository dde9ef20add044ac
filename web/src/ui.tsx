/** Small shared pieces of every page. */
import type { ReactNode } from 'react';
import type { ApiFailure } from './api/client';
import { COST_UNAVAILABLE, dollars, localTime } from './format';

/** The API's refusal, in its words, where it happened. */
export function ErrorNote({ error, what }: { error: ApiFailure | undefined; what?: string }) {
  if (!error) return null;
  return (
    <div className="error" role="alert">
      {what ? <strong>{what}: </strong> : null}
      {error.message} <code className="muted">({error.code}{error.status ? `, ${error.status}` : ''})</code>
    </div>
  );
}

export function Loading({ what = 'Loading' }: { what?: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      {what}…
    </p>
  );
}

/** Something not measured or not shown: says why, never a blank or a zero. */
export function Unavailable({ why }: { why: string }) {
  return <span className="unavailable" title={why}>unavailable: {why}</span>;
}

export function Withheld({ why = 'withheld by the content policy or your scopes' }: { why?: string }) {
  return <span className="withheld">withheld ({why})</span>;
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span className="muted">—</span>;
  return <time dateTime={iso} title={iso}>{localTime(iso)}</time>;
}

export function Cost({ nanos, reason }: { nanos?: number | null; reason?: string | null }) {
  if (nanos !== undefined && nanos !== null) return <span className="num">{dollars(nanos)}</span>;
  return <Unavailable why={reason ? (COST_UNAVAILABLE[reason] ?? reason) : 'not reported'} />;
}

export function Status({ value }: { value: string | null | undefined }) {
  if (!value) return <span className="badge">unknown</span>;
  return <span className={`badge status-${value}`}>{value.replace(/_/g, ' ')}</span>;
}

export function Page({ title, actions, children }: { title: ReactNode; actions?: ReactNode; children: ReactNode }) {
  return (
    <section className="page" aria-labelledby="page-title">
      <header className="page-head">
        <h1 id="page-title">{title}</h1>
        {actions ? <div className="actions">{actions}</div> : null}
      </header>
      {children}
    </section>
  );
}

export function Field({ label, children, hint }: { label: string; children: ReactNode; hint?: string }) {
  return (
    <label className="field">
      <span>{label}</span>
      {children}
      {hint ? <small className="muted">{hint}</small> : null}
    </label>
  );
}

/** One step or span on its run's or trace's time axis (`origin` and `total` in ms): a bar in a table cell. */
export function TimelineBar({ origin, total, startedAt, durationMs, error }: { origin: number; total: number; startedAt: string; durationMs: number; error: boolean }) {
  const left = ((Date.parse(startedAt) - origin) / total) * 100;
  const width = Math.max(0.5, (durationMs / total) * 100);
  return (
    <td className="timeline" aria-hidden="true">
      <span className={`bar ${error ? 'bar-error' : ''}`} style={{ left: `${Math.min(99.5, left)}%`, width: `${Math.min(100 - left, width)}%` }} />
    </td>
  );
}
