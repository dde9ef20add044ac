/**
 * `/p/{p}/traces/{trace_id}`: a trace as a waterfall (GET /traces/{id}: spans in tree order with their
 * depth), each span a bar on the trace's time axis; the chosen span (`?span=`) with its attributes,
 * resource attributes and events. Attributes the content policy or the reader's scopes keep back are
 * named as withheld.
 */
import { api, ok } from '../api/client';
import { useLoad } from '../api/hooks';
import { count, duration } from '../format';
import { Link, setQuery, useLocation } from '../router';
import { ErrorNote, Loading, Page, Time, TimelineBar, Withheld } from '../ui';

function Attributes({ attrs, withheld, label }: { attrs: Record<string, unknown>; withheld?: string[]; label: string }) {
  const entries = Object.entries(attrs);
  if (!entries.length && !withheld?.length) return <p className="muted">None.</p>;
  return (
    <table className="kv" aria-label={label}>
      <tbody>
        {entries.map(([k, v]) => (
          <tr key={k}><th scope="row" className="mono">{k}</th><td className="mono">{typeof v === 'string' ? v : JSON.stringify(v)}</td></tr>
        ))}
        {(withheld ?? []).map((k) => (
          <tr key={k}><th scope="row" className="mono">{k}</th><td><Withheld /></td></tr>
        ))}
      </tbody>
    </table>
  );
}

export default function Trace({ params }: { params: Record<string, string> }) {
  const { project, trace: traceId } = params;
  const { query } = useLocation();
  const trace = useLoad(async () => ok(await api.GET('/api/v1/traces/{traceId}', { params: { path: { traceId }, query: { project_id: project } } })), [project, traceId]);
  if (trace.error) return <Page title="Trace"><ErrorNote error={trace.error} what="This trace could not be read" /></Page>;
  if (!trace.data) return <Loading what="Loading the trace" />;
  const t = trace.data;
  const start = Date.parse(t.started_at);
  const span = Math.max(1, Date.parse(t.ended_at) - start);
  const selected = t.spans.find((s) => s.span_id === query.get('span')) ?? null;
  return (
    <Page title={<>Trace <span className="mono">{t.trace_id}</span></>} actions={<><Link href={`/p/${project}/runs/${t.trace_id}`}>Open as an agent run</Link> <Link href={`/p/${project}/traces`}>All traces</Link></>}>
      <dl className="facts">
        <div><dt>Started</dt><dd><Time iso={t.started_at} /></dd></div>
        <div><dt>Duration</dt><dd>{duration(t.duration_ms)}</dd></div>
        <div><dt>Spans</dt><dd className="num">{count(t.span_count)}</dd></div>
        <div><dt>Errors</dt><dd className="num">{count(t.error_count)}</dd></div>
        <div><dt>Services</dt><dd>{t.services.join(', ') || <span className="muted">—</span>}</dd></div>
      </dl>
      <div className="table-wrap">
        <table className="steps" aria-label="Waterfall">
          <thead>
            <tr><th scope="col">Span</th><th scope="col">Service</th><th scope="col" className="timeline-h">Timeline ({duration(span)})</th><th scope="col">Duration</th><th scope="col">Status</th></tr>
          </thead>
          <tbody>
            {t.spans.map((s) => {
              return (
                <tr key={s.span_id} className={selected?.span_id === s.span_id ? 'selected' : undefined}>
                  <td style={{ paddingLeft: `${0.5 + s.depth * 1.1}rem` }}>
                    <button type="button" className="link" onClick={() => setQuery({ span: s.span_id })} aria-label={`Show span ${s.name}`}>{s.name}</button>
                    {s.orphan ? <span className="muted"> (parent not received)</span> : null}
                  </td>
                  <td>{s.service_name ?? <span className="muted">—</span>}</td>
                  <TimelineBar origin={start} total={span} startedAt={s.started_at} durationMs={s.duration_ms} error={s.status.code === 'error'} />
                  <td className="num">{duration(s.duration_ms)}</td>
                  <td>{s.status.code}{s.status.message ? <span className="muted">: {s.status.message}</span> : null}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      {selected ? (
        <section className="card" aria-labelledby="span-h">
          <h2 id="span-h">Span {selected.name}</h2>
          <dl className="facts">
            <div><dt>Span id</dt><dd className="mono">{selected.span_id}</dd></div>
            <div><dt>Kind</dt><dd>{selected.kind}</dd></div>
            <div><dt>Scope</dt><dd>{selected.scope_name ?? <span className="muted">—</span>}</dd></div>
            <div><dt>Started</dt><dd><Time iso={selected.started_at} /></dd></div>
          </dl>
          <h3>Attributes</h3>
          <Attributes attrs={selected.attributes} withheld={selected.withheld_attribute_keys} label="Span attributes" />
          <h3>Resource</h3>
          <Attributes attrs={selected.resource_attributes} label="Resource attributes" />
          <h3>Events</h3>
          {selected.events.length ? (
            selected.events.map((e, i) => (
              <div key={i} className="content-item">
                <h4>{e.name} <span className="muted"><Time iso={e.timestamp} /></span></h4>
                <Attributes attrs={e.attributes} withheld={e.withheld_attribute_keys} label={`Attributes of event ${e.name}`} />
              </div>
            ))
          ) : (
            <p className="muted">None.</p>
          )}
        </section>
      ) : (
        <p className="muted">Choose a span to see its attributes and events.</p>
      )}
    </Page>
  );
}
