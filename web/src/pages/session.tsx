/**
 * `/p/{p}/sessions/{key}`: one session (a conversation): its totals (GET /agent-sessions/{key}) and its
 * turns, newest first, each with its runs (GET /agent-turns), paged with the API's cursor.
 */
import { useState } from 'react';
import { api, ok } from '../api/client';
import { useAction, useLoad } from '../api/hooks';
import type { components } from '../api/schema';
import { count, duration } from '../format';
import { Link } from '../router';
import { Cost, ErrorNote, Loading, Page, Status, Time } from '../ui';

type Turn = components['schemas']['AgentTurn'];

export default function Session({ params }: { params: Record<string, string> }) {
  const { project, session: key } = params;
  const session = useLoad(async () => ok(await api.GET('/api/v1/agent-sessions/{session_key}', { params: { path: { session_key: key }, query: { project_id: project } } })), [project, key]);
  const fetchTurns = async (cursor?: string) => ok(await api.GET('/api/v1/agent-turns', { params: { query: { project_id: project, session_key: key, limit: 50, ...(cursor ? { cursor } : {}) } } }));
  const turns = useLoad(() => fetchTurns(), [project, key]);
  const [extra, setExtra] = useState<{ rows: Turn[]; cursor: string | null } | null>(null);
  const more = useAction(async (cursor: string) => {
    const p = await fetchTurns(cursor);
    setExtra((e) => ({ rows: [...(e?.rows ?? []), ...p.turns], cursor: p.next_cursor ?? null }));
  });
  const rows = [...(turns.data?.turns ?? []), ...(extra?.rows ?? [])];
  const cursor = extra ? extra.cursor : (turns.data?.next_cursor ?? null);
  if (session.error) return <Page title="Session"><ErrorNote error={session.error} what="This session could not be read" /></Page>;
  if (!session.data) return <Loading />;
  const s = session.data;
  return (
    <Page title={<>Session <span className="mono">{s.session_key}</span></>} actions={<Link href={`/p/${project}/runs?session_key=${encodeURIComponent(key)}`}>Its runs as a list</Link>}>
      <dl className="facts">
        <div><dt>Runs</dt><dd className="num">{count(s.run_count)}</dd></div>
        <div><dt>Turns</dt><dd className="num">{s.turn_count !== undefined ? count(s.turn_count) : <span className="muted">no run names a turn</span>}</dd></div>
        <div><dt>Started</dt><dd><Time iso={s.started_at} /></dd></div>
        <div><dt>Duration</dt><dd>{duration(s.duration_ms)}</dd></div>
        <div><dt>Cost</dt><dd data-testid="session-cost"><Cost nanos={s.cost_nanos} reason={s.cost_unavailable_reason} /></dd></div>
      </dl>
      <h2>Turns</h2>
      <ErrorNote error={turns.error ?? more.error} what="The turns could not be read" />
      {turns.data ? (
        rows.length ? (
          <>
            {rows.map((t) => (
              <section key={t.turn_id} className="card" aria-label={`Turn ${t.turn_id}`}>
                <h3>Turn <span className="mono">{t.turn_id}</span> <span className="muted"><Time iso={t.started_at} />, {duration(t.duration_ms)}, {count(t.run_count)} runs, </span><Cost nanos={t.cost_nanos} reason={t.cost_unavailable_reason} /></h3>
                <ul className="plain">
                  {t.runs.map((r) => (
                    <li key={r.run_id}>
                      <Link href={`/p/${project}/runs/${r.run_id}`} className="mono">{r.run_id.slice(0, 12)}…</Link> {r.agent_name ?? 'unnamed'} <Status value={r.status ?? 'not stated'} /> <Cost nanos={r.cost_nanos} reason={r.cost_unavailable_reason} />
                    </li>
                  ))}
                </ul>
                {t.runs_truncated ? <p className="muted">The first 50 runs of this turn are listed.</p> : null}
              </section>
            ))}
            {cursor ? <button type="button" className="secondary" disabled={more.pending} onClick={() => void more.run(cursor)}>Older turns</button> : null}
          </>
        ) : (
          <p className="muted">No run of this session names a turn (<code>svc.turn.id</code>); its runs are on the run list.</p>
        )
      ) : turns.loading ? <Loading /> : null}
    </Page>
  );
}
