/**
 * `/p/{p}`: the project at a glance. Each panel reads its own route, so one the person may not read says
 * why (the API's message) while the others still show. Sums are of what the API answered; a part it
 * could not measure makes the sum "unavailable", never a smaller number.
 */
import { api, ok } from '../api/client';
import { useLoad } from '../api/hooks';
import type { components } from '../api/schema';
import { count, enumWords } from '../format';
import { Link, useInterval } from '../router';
import { DataTable, type Column } from '../table';
import { Cost, ErrorNote, Loading, Page, Status, Time, Unavailable } from '../ui';

type FleetAgent = components['schemas']['FleetAgent'];
const FLEET_PAGES = 10; // 2,000 agents; past that the panel says it stopped.

async function loadFleet(project: string): Promise<{ agents: FleetAgent[]; truncated: boolean }> {
  const agents: FleetAgent[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < FLEET_PAGES; i++) {
    const page = ok(await api.GET('/api/v1/fleet', { params: { query: { project_id: project, limit: 200, ...(cursor ? { cursor } : {}) } } }));
    agents.push(...page.agents);
    cursor = page.next_cursor ?? undefined;
    if (!cursor) return { agents, truncated: false };
  }
  return { agents, truncated: true };
}

function add(into: Record<string, number>, from: Record<string, number>) {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

const SEVERITIES = ['CRITICAL', 'HIGH', 'MEDIUM', 'LOW'].map((s) => `REVIEW_SIGNAL_SEVERITY_${s}`);
const severityWord = (s: string) => s.replace(/^REVIEW_SIGNAL_SEVERITY_/, '').toLowerCase();

export default function Overview({ params }: { params: Record<string, string> }) {
  const project = params.project;
  const fleet = useLoad(() => loadFleet(project), [project]);
  const usage = useLoad(async () => ok(await api.GET('/api/v1/llm/usage', { params: { query: { project_id: project, since: '24h' } } })), [project]);
  const pending = useLoad(
    async () => ok(await api.GET('/api/v1/quarantines', { params: { query: { project_id: project, status: ['pending'], limit: 200 } } })),
    [project],
  );
  useInterval(() => {
    fleet.reload();
    usage.reload();
    pending.reload();
  }, 30_000);

  const runs: Record<string, number> = {};
  const signals: Record<string, number> = {};
  let runTotal = 0;
  let signalTotal = 0;
  let runsUnavailable = false;
  for (const a of fleet.data?.agents ?? []) {
    if (a.runs_24h) {
      runTotal += a.runs_24h.runs;
      add(runs, a.runs_24h.by_status);
    } else runsUnavailable = true;
    signalTotal += a.open_signals.total;
    add(signals, a.open_signals.by_severity);
  }

  const columns: Column<FleetAgent>[] = [
    {
      id: 'name',
      header: 'Agent',
      cell: ({ row }) => (
        <>
          <Link href={`/p/${project}/agents/${row.original.asset_id}`}>{row.original.name}</Link> {row.original.shadow ? <span className="badge status-shadow" title="seen in telemetry, not registered in the inventory">shadow</span> : null}
        </>
      ),
    },
    { id: 'risk', header: 'Risk tier', cell: ({ row }) => enumWords(row.original.risk_tier, 'RISK_TIER') },
    { id: 'approval', header: 'Approval', cell: ({ row }) => <Status value={enumWords(row.original.approval_state, 'APPROVAL_STATE')} /> },
    {
      id: 'runs',
      header: 'Runs, 24 h',
      cell: ({ row }) => (row.original.runs_24h ? <span className="num">{count(row.original.runs_24h.runs)}</span> : <Unavailable why="the run telemetry could not be read" />),
    },
    { id: 'last', header: 'Last run', cell: ({ row }) => (row.original.runs_24h ? <Time iso={row.original.runs_24h.last_run_at} /> : <Unavailable why="the run telemetry could not be read" />) },
    { id: 'signals', header: 'Open signals', cell: ({ row }) => <span className="num">{count(row.original.open_signals.total)}</span> },
    {
      id: 'contained',
      header: 'Containments',
      cell: ({ row }) =>
        row.original.containments.length ? (
          row.original.containments.map((c) => (
            <Link key={c.quarantine_id} href={`/p/${project}/containments/${c.quarantine_id}`}><Status value={`${c.action} ${c.status}`} /></Link>
          ))
        ) : (
          <Link href={`/p/${project}/containments?asset_id=${encodeURIComponent(row.original.asset_id)}`}>contain…</Link>
        ),
    },
  ];

  return (
    <Page title="Overview" actions={<span className="muted">refreshes every 30 s</span>}>
      <div className="panels">
        <section className="card panel" aria-labelledby="runs-h">
          <h2 id="runs-h">Agent runs, last 24 h</h2>
          {fleet.data ? (
            runsUnavailable ? (
              <Unavailable why="the run telemetry of some agents could not be read" />
            ) : (
              <>
                <p className="big num" data-testid="runs-24h">{count(runTotal)}</p>
                <ul className="by">
                  {Object.entries(runs).sort((a, b) => b[1] - a[1]).map(([status, n]) => (
                    <li key={status}><Status value={status} /> <span className="num">{count(n)}</span></li>
                  ))}
                </ul>
                <Link href={`/p/${project}/runs?since=24h`}>See the runs</Link>
              </>
            )
          ) : fleet.error ? <ErrorNote error={fleet.error} /> : <Loading />}
        </section>
        <section className="card panel" aria-labelledby="cost-h">
          <h2 id="cost-h">Model cost, last 24 h</h2>
          {usage.data ? (
            <>
              <p className="big" data-testid="cost-24h"><Cost nanos={usage.data.totals.cost_nanos} reason={usage.data.totals.cost_unavailable_reason} /></p>
              <p className="muted">
                {count(usage.data.totals.model_calls)} model calls, {count(usage.data.totals.input_tokens)} input and {count(usage.data.totals.output_tokens)} output tokens
              </p>
            </>
          ) : usage.error ? <ErrorNote error={usage.error} /> : <Loading />}
        </section>
        <section className="card panel" aria-labelledby="signals-h">
          <h2 id="signals-h"><Link href={`/p/${project}/signals`}>Open review signals</Link></h2>
          {fleet.data ? (
            <>
              <p className="big num" data-testid="signals-open">{count(signalTotal)}</p>
              <ul className="by">
                {SEVERITIES.filter((s) => signals[s]).concat(Object.keys(signals).filter((s) => !SEVERITIES.includes(s))).map((s) => (
                  <li key={s}><span className={`badge severity-${severityWord(s)}`}>{severityWord(s)}</span> <span className="num">{count(signals[s])}</span></li>
                ))}
              </ul>
            </>
          ) : fleet.error ? <ErrorNote error={fleet.error} /> : <Loading />}
        </section>
        <section className="card panel" aria-labelledby="pending-h">
          <h2 id="pending-h">Containments awaiting approval</h2>
          {pending.data ? (
            <>
              <p className="big num" data-testid="containments-pending">{count(pending.data.quarantines.length)}{pending.data.next_cursor ? '+' : ''}</p>
              <ul className="plain">
                {pending.data.quarantines.slice(0, 5).map((q) => (
                  <li key={q.id}><Link href={`/p/${project}/containments/${q.id}`}>{q.action.replace(/_/g, ' ')}</Link>: {q.reason} <Time iso={q.requested_at} /></li>
                ))}
              </ul>
            </>
          ) : pending.error ? <ErrorNote error={pending.error} /> : <Loading />}
        </section>
        <section className="card panel" aria-labelledby="ingest-h">
          <h2 id="ingest-h">Ingest rates</h2>
          <Unavailable why="the API publishes no ingest-rate route yet" />
        </section>
      </div>
      <h2>Agents</h2>
      {fleet.error ? <ErrorNote error={fleet.error} what="The agents could not be read" /> : null}
      {fleet.data ? (
        <>
          {fleet.data.truncated ? <p className="muted">Showing the first {count(fleet.data.agents.length)} agents.</p> : null}
          <DataTable rows={fleet.data.agents} columns={columns} rowKey={(a) => a.asset_id} label="Agents of this project" empty="No agent has been seen in this project yet: send an agent run (see the README's quickstart)." />
        </>
      ) : fleet.loading ? <Loading /> : null}
    </Page>
  );
}
