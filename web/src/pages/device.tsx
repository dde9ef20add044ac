import { useEffect, useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { useAction, useLoad } from '../api/hooks';
import { setQuery, useLocation } from '../router';
import { ErrorNote, Field, Loading, Time } from '../ui';

/**
 * Approving a device code (`svc login`): the code is typed, or arrives in the link's `user_code`. The page
 * shows who asks for what before the signed-in person approves or denies.
 */
export default function Device() {
  const { query } = useLocation();
  const code = query.get('user_code') ?? '';
  const [typed, setTyped] = useState(code);
  useEffect(() => setTyped(code), [code]);
  const request = useLoad(async () => (code ? ok(await api.GET('/api/v1/oauth/device', { params: { query: { user_code: code } } })) : null), [code]);
  const [outcome, setOutcome] = useState<string | null>(null);
  const approve = useAction(async () => ok(await api.POST('/api/v1/oauth/device/approve', { body: { user_code: code } })));
  const deny = useAction(async () => ok(await api.POST('/api/v1/oauth/device/deny', { body: { user_code: code } })));
  const look = (e: FormEvent) => {
    e.preventDefault();
    setOutcome(null);
    setQuery({ user_code: typed.trim() });
  };
  return (
    <div className="card narrow">
      <h1>Connect a device</h1>
      <form onSubmit={look}>
        <Field label="Code shown by your device" hint="For example ABCD-EFGH, as `svc login` prints it.">
          <input value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" spellCheck={false} required autoFocus={!code} />
        </Field>
        <button type="submit" className="secondary">Look up</button>
      </form>
      {code && request.loading ? <Loading /> : null}
      <ErrorNote error={request.error} what="This code" />
      {outcome ? <p className="ok" role="status">{outcome}</p> : null}
      {request.data && !outcome ? (
        <div className="device-request">
          <p>
            <strong>{request.data.client.client_name}</strong> asks to act as you ({request.data.person.role}) with these scopes:
          </p>
          <ul className="scopes">
            {request.data.requested_scopes.map((s: string) => (
              <li key={s}><code>{s}</code>{request.data!.grantable_scopes.includes(s) ? null : <span className="muted"> (your role does not hold it: not granted)</span>}</li>
            ))}
          </ul>
          <p className="muted">The code expires <Time iso={request.data.expires_at} />.</p>
          <ErrorNote error={approve.error ?? deny.error} />
          <div className="actions">
            <button type="button" disabled={approve.pending} onClick={async () => (await approve.run()) && setOutcome('Approved: your device is signed in. You can close this page.')}>Approve</button>
            <button type="button" className="secondary" disabled={deny.pending} onClick={async () => (await deny.run()) && setOutcome('Denied: the device was not signed in.')}>Deny</button>
          </div>
        </div>
      ) : null}
    </div>
  );
}
