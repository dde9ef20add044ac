/**
 * `/p/{p}/policy`: the project's content policy, the grid of what may happen to each class of recorded
 * content at each boundary (store at ingest, read, export, transfer to a model judge): allow, keep only its
 * size (allow metadata), or deny. Saved whole, at the version it was read at (another person's change in
 * between is the API's 409, shown, and nothing is overwritten). Writing needs `governance:write`.
 */
import { useEffect, useState } from 'react';
import { api, ok } from '../api/client';
import { useAction, useLoad } from '../api/hooks';
import type { paths } from '../api/schema';
import { useSession } from '../session';
import { ErrorNote, Loading, Page, Time } from '../ui';

type Rule = paths['/api/v1/projects/{projectId}/content-policy']['get']['responses'][200]['content']['application/json']['rules'][number];
const CLASSES: Rule['content_class'][] = ['model_transcript', 'tool_arguments', 'memory_item', 'replay_dom', 'person_properties', 'group_properties'];
const SINKS: Rule['sink'][] = ['store', 'read', 'export', 'judge_transfer'];
const DECISIONS: [Rule['decision'], string][] = [
  ['deny', 'deny'],
  ['allow_metadata', 'size only'],
  ['allow', 'allow'],
];
const words = (s: string) => s.replace(/_/g, ' ');

export default function Policy({ params }: { params: Record<string, string> }) {
  const project = params.project;
  const { me } = useSession();
  const canWrite = me.scopes.includes('governance:write');
  const policy = useLoad(async () => ok(await api.GET('/api/v1/projects/{projectId}/content-policy', { params: { path: { projectId: project } } })), [project]);
  const [grid, setGrid] = useState<Record<string, Rule['decision']>>({});
  useEffect(() => {
    if (policy.data) setGrid(Object.fromEntries(policy.data.rules.map((r) => [`${r.content_class}:${r.sink}`, r.decision])));
  }, [policy.data]);
  const save = useAction(async () => {
    const rules = CLASSES.flatMap((c) => SINKS.map((s) => ({ content_class: c, sink: s, decision: grid[`${c}:${s}`] ?? 'deny' })));
    const saved = ok(await api.PUT('/api/v1/projects/{projectId}/content-policy', { params: { path: { projectId: project } }, body: { rules, expected_version: policy.data!.version } }));
    policy.reload();
    return saved;
  });
  if (policy.error) return <Page title="Content policy"><ErrorNote error={policy.error} what="The policy could not be read" /></Page>;
  if (!policy.data) return <Loading />;
  const p = policy.data;
  const changed = p.rules.some((r) => grid[`${r.content_class}:${r.sink}`] !== r.decision);
  return (
    <Page title="Content policy">
      <p>
        {p.version === 0 ? (
          <>This project has no policy yet: every cell is <strong>deny</strong>, so no recorded content is stored or shown.</>
        ) : (
          <>Version {p.version}, changed <Time iso={p.updated_at} /> by {p.updated_by?.user_id === me.id ? 'you' : p.updated_by?.user_id ? `person ${p.updated_by.user_id.slice(0, 8)}` : `API key ${p.updated_by?.api_key_id?.slice(0, 8)}`}.</>
        )}{' '}
        Reading content also needs the <code>agents:content:read</code> scope.
      </p>
      <div className="table-wrap">
        <table aria-label="Content policy grid">
          <thead>
            <tr>
              <th scope="col">Content class</th>
              {SINKS.map((s) => <th key={s} scope="col">{words(s)}</th>)}
            </tr>
          </thead>
          <tbody>
            {CLASSES.map((c) => (
              <tr key={c}>
                <th scope="row">{words(c)}</th>
                {SINKS.map((s) => {
                  const cell = `${c}:${s}`;
                  return (
                    <td key={s}>
                      {canWrite ? (
                        <select aria-label={`${words(c)} at ${words(s)}`} value={grid[cell] ?? 'deny'} onChange={(e) => setGrid({ ...grid, [cell]: e.target.value as Rule['decision'] })}>
                          {DECISIONS.map(([d, label]) => <option key={d} value={d}>{label}</option>)}
                        </select>
                      ) : (
                        <span className={`badge decision-${grid[cell]}`}>{DECISIONS.find(([d]) => d === grid[cell])?.[1]}</span>
                      )}
                    </td>
                  );
                })}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ErrorNote error={save.error} what="Not saved" />
      {canWrite ? (
        <div className="actions">
          <button type="button" disabled={!changed || save.pending} onClick={() => void save.run()}>Save the policy</button>
          {changed ? <span className="muted">unsaved changes</span> : null}
        </div>
      ) : (
        <p className="muted">Your role does not hold <code>governance:write</code>: you can read the policy, not change it.</p>
      )}
      <p className="muted">Size only keeps the key with a marker of its size in bytes; deny leaves the key out and names it as withheld.</p>
    </Page>
  );
}
