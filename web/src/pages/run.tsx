/**
 * `/p/{p}/runs/{run_id}`: one run. Its steps as a tree on a timeline (GET /agent-runs/{id}/graph), tokens
 * and cost per step, and the chosen step's recorded content from its span (GET /traces/{run_id}: a run is
 * its trace). Content the policy or the reader's scopes keep back says so: a key the API left out is
 * named in `withheld_attribute_keys`, a value kept as metadata only is its size marker.
 */
import { api, ok } from '../api/client';
import { useLoad } from '../api/hooks';
import { count, duration, isoMicros, operation } from '../format';
import { Link, setQuery, useLocation } from '../router';
import { Cost, ErrorNote, Loading, Page, Status, Time, TimelineBar, Unavailable } from '../ui';
import { StepContent } from './run-content';

export default function Run({ params }: { params: Record<string, string> }) {
  const { project, run: runId } = params;
  const { query } = useLocation();
  const graph = useLoad(async () => ok(await api.GET('/api/v1/agent-runs/{run_id}/graph', { params: { path: { run_id: runId }, query: { project_id: project } } })), [project, runId]);
  if (graph.error) return <Page title="Agent run"><ErrorNote error={graph.error} what="This run could not be read" /></Page>;
  if (!graph.data) return <Loading what="Loading the run" />;
  const { run, steps, counts, action_receipts } = graph.data;
  const start = Date.parse(run.started_at);
  const span = Math.max(1, Date.parse(run.ended_at) - start);
  const depth = new Map<string, number>();
  const byId = new Map(steps.map((s) => [s.step_id, s]));
  const depthOf = (id: string, seen = 0): number => {
    if (depth.has(id)) return depth.get(id)!;
    const parent = byId.get(id)?.parent_step_id;
    const d = parent && byId.has(parent) && seen < 64 ? depthOf(parent, seen + 1) + 1 : 0;
    depth.set(id, d);
    return d;
  };
  // The steps as a tree: each parent followed by its children, by start time (a step whose parent is not in the run is a root).
  const children = new Map<string, typeof steps>();
  const roots: typeof steps = [];
  for (const s of steps) {
    const parent = s.parent_step_id && byId.has(s.parent_step_id) ? s.parent_step_id : null;
    if (parent) children.set(parent, [...(children.get(parent) ?? []), s]);
    else roots.push(s);
  }
  const byStart = (a: (typeof steps)[number], b: (typeof steps)[number]) => isoMicros(a.started_at) - isoMicros(b.started_at) || a.step_id.localeCompare(b.step_id);
  const ordered: typeof steps = [];
  const visit = (list: typeof steps) => {
    for (const s of [...list].sort(byStart)) {
      if (ordered.includes(s)) continue;
      ordered.push(s);
      visit(children.get(s.step_id) ?? []);
    }
  };
  visit(roots);
  const selected = steps.find((s) => s.step_id === query.get('step')) ?? null;
  const tokens = (n: number | undefined) => (n === undefined ? <span className="muted">—</span> : <span className="num">{count(n)}</span>);

  return (
    <Page title={<>Run <span className="mono">{run.run_id}</span></>} actions={<Link href={`/p/${project}/runs`}>All runs</Link>}>
      <dl className="facts">
        <div><dt>Agent</dt><dd>{run.agent_name ?? <span className="muted">unnamed</span>}</dd></div>
        <div><dt>Status</dt><dd><Status value={run.status ?? 'not stated'} />{run.terminal_reason ? <span className="muted"> {run.terminal_reason}</span> : null}</dd></div>
        <div><dt>Started</dt><dd><Time iso={run.started_at} /></dd></div>
        <div><dt>Duration</dt><dd>{duration(run.duration_ms)}</dd></div>
        <div><dt>Steps</dt><dd className="num">{count(run.step_count)} ({count(run.error_steps)} with errors)</dd></div>
        <div><dt>Model calls</dt><dd className="num">{count(run.model_calls)}</dd></div>
        <div><dt>Tool calls</dt><dd className="num">{count(run.tool_calls)}</dd></div>
        <div><dt>Cost</dt><dd data-testid="run-cost"><Cost nanos={run.cost_nanos} reason={run.cost_unavailable_reason} /></dd></div>
        <div><dt>Service</dt><dd>{run.service_name ?? <span className="muted">—</span>}{run.environment ? ` (${run.environment})` : ''}</dd></div>
        <div><dt>Session</dt><dd>{run.session_key ? <Link href={`/p/${project}/sessions/${encodeURIComponent(run.session_key)}`}>{run.session_key}</Link> : <span className="muted">none</span>}</dd></div>
      </dl>

      <h2>Steps</h2>
      <p className="muted">
        {Object.entries(counts.by_canonical_operation).map(([op, n]) => `${operation(op)} ${n}`).join(' · ')}
      </p>
      <div className="table-wrap">
        <table className="steps" aria-label="Steps of this run">
          <thead>
            <tr>
              <th scope="col">Step</th>
              <th scope="col">Operation</th>
              <th scope="col">Outcome</th>
              <th scope="col" className="timeline-h">Timeline ({duration(span)})</th>
              <th scope="col">Duration</th>
              <th scope="col">Input tokens</th>
              <th scope="col">Output tokens</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {ordered.map((s) => {
              const isModel = s.input_tokens !== undefined || s.output_tokens !== undefined || s.model !== undefined;
              return (
                <tr key={s.step_id} aria-selected={selected?.step_id === s.step_id} className={selected?.step_id === s.step_id ? 'selected' : undefined}>
                  <td style={{ paddingLeft: `${0.5 + depthOf(s.step_id) * 1.1}rem` }}>
                    <button type="button" className="link" onClick={() => setQuery({ step: s.step_id })} aria-label={`Show step ${s.name}`}>{s.name}</button>
                    {s.tool_name ? <span className="muted"> tool {s.tool_name}</span> : null}
                    {s.model ? <span className="muted"> {s.model}</span> : null}
                  </td>
                  <td>{operation(s.canonical_operation)}</td>
                  <td>{s.outcome ? <Status value={operation(s.outcome)} /> : <span className="muted">unset</span>}</td>
                  <TimelineBar origin={start} total={span} startedAt={s.started_at} durationMs={s.duration_ms} error={s.outcome === 'OUTCOME_ERROR'} />
                  <td className="num">{duration(s.duration_ms)}</td>
                  <td>{tokens(s.input_tokens)}</td>
                  <td>{tokens(s.output_tokens)}</td>
                  <td>{isModel ? <Cost nanos={s.cost_nanos} reason={s.cost_unavailable_reason} /> : <span className="muted">—</span>}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>

      {selected ? (
        <section className="card" aria-labelledby="step-h">
          <h2 id="step-h">Step {selected.name}</h2>
          <dl className="facts">
            <div><dt>Step id</dt><dd className="mono">{selected.step_id}</dd></div>
            <div><dt>Span status</dt><dd>{selected.span_status}{selected.span_status_message ? `: ${selected.span_status_message}` : ''}</dd></div>
            <div><dt>Provider</dt><dd>{selected.provider ?? <span className="muted">—</span>}</dd></div>
            <div><dt>Instrumented</dt><dd>{selected.instrumented ? 'yes' : 'no'}</dd></div>
          </dl>
          <h3>Attributes</h3>
          <table className="kv">
            <tbody>
              {Object.entries(selected.attributes).map(([k, v]) => (
                <tr key={k}><th scope="row" className="mono">{k}</th><td className="mono">{String(v)}</td></tr>
              ))}
            </tbody>
          </table>
          <h3>Recorded content</h3>
          <StepContent project={project} runId={runId} stepId={selected.step_id} />
        </section>
      ) : (
        <p className="muted">Choose a step to see its attributes and recorded content.</p>
      )}

      <h2>Action receipts</h2>
      {action_receipts.length ? (
        <ul className="plain">
          {action_receipts.map((r) => (
            <li key={r.action_id}><span className="mono">{r.action_id}</span> <Status value={r.final_state} /> <span className="muted">{r.entry_count} entries, <Time iso={r.occurred_at} /></span></li>
          ))}
        </ul>
      ) : (
        <p className="muted">No action receipt names this run.</p>
      )}
      {counts.instrumented_steps < counts.steps ? <p className="muted">Some steps were not instrumented: <Unavailable why="their spans did not say what they did" /></p> : null}
    </Page>
  );
}
