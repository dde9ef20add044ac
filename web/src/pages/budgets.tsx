/**
 * `/settings/budgets`: the organization's daily evaluation budget: the cap on charged model-judge cost per
 * UTC day and, optionally, on the number of evaluations; today's spend against it. Never set, model judges
 * are refused (the page says so). Setting it needs `evals:write`.
 */
import { useEffect, useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { useAction, useLoad } from '../api/hooks';
import { count, dollars } from '../format';
import { useSession } from '../session';
import { ErrorNote, Field, Loading, Page, Time } from '../ui';

export default function Budgets() {
  const { me } = useSession();
  const canWrite = me.scopes.includes('evals:write');
  const budget = useLoad(async () => ok(await api.GET('/api/v1/evaluation/budget')), []);
  const [usd, setUsd] = useState('');
  const [cap, setCap] = useState('');
  useEffect(() => {
    if (budget.data) {
      setUsd(String(budget.data.daily_limit_nano_usd / 1e9));
      setCap(budget.data.daily_evaluation_limit === null ? '' : String(budget.data.daily_evaluation_limit));
    }
  }, [budget.data]);
  const save = useAction(async () => {
    const r = ok(await api.PUT('/api/v1/evaluation/budget', { body: { daily_limit_nano_usd: Math.round(Number(usd) * 1e9), daily_evaluation_limit: cap === '' ? null : Number(cap) } }));
    budget.reload();
    return r;
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    void save.run();
  };
  if (budget.error) return <Page title="Evaluation budget"><ErrorNote error={budget.error} what="The budget could not be read" /></Page>;
  if (!budget.data) return <Loading />;
  const b = budget.data;
  return (
    <Page title="Evaluation budget">
      {b.budget_set ? null : <p className="error" role="note">No budget is set: model-judge evaluations are refused until one is. Free (deterministic and trajectory) evaluations run.</p>}
      <dl className="facts">
        <div><dt>Today ({b.day}, UTC)</dt><dd>{dollars(b.spent_nano_usd)} of {dollars(b.daily_limit_nano_usd)} spent on model judges</dd></div>
        <div><dt>Evaluations today</dt><dd className="num">{count(b.evaluations)}{b.daily_evaluation_limit !== null ? ` of ${count(b.daily_evaluation_limit)}` : ' (no count cap)'}</dd></div>
        <div><dt>Resets</dt><dd><Time iso={b.resets_at} /></dd></div>
        {b.updated_at ? <div><dt>Last set</dt><dd><Time iso={b.updated_at} /> by <span className="mono">{b.updated_by}</span></dd></div> : null}
      </dl>
      {canWrite ? (
        <form className="card" onSubmit={submit} aria-labelledby="budget-h">
          <h2 id="budget-h">Set the budget</h2>
          <div className="row">
            <Field label="Model-judge spend per day (USD)" hint="0 refuses every model judge"><input type="number" step="any" min={0} value={usd} onChange={(e) => setUsd(e.target.value)} required /></Field>
            <Field label="Evaluations per day" hint="empty: no count cap"><input type="number" min={1} value={cap} onChange={(e) => setCap(e.target.value)} /></Field>
          </div>
          <ErrorNote error={save.error} what="Not saved" />
          <button type="submit" disabled={save.pending}>Save budget</button>
        </form>
      ) : (
        <p className="muted">Your role does not hold <code>evals:write</code>: an owner or admin sets the budget.</p>
      )}
    </Page>
  );
}
