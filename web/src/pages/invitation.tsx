import { useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { useAction } from '../api/hooks';
import { navigate } from '../router';
import { ErrorNote, Field } from '../ui';

/** Accepting an invitation: a new person sets a name and password; someone with an account gives theirs. */
export default function Invitation({ params }: { params: Record<string, string> }) {
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const [hasAccount, setHasAccount] = useState(false);
  const [done, setDone] = useState<{ email: string } | null>(null);
  const accept = useAction(async () =>
    ok(await api.POST('/api/v1/invitations/accept', { body: { token: params.token, password, ...(hasAccount ? {} : { name }) } })),
  );
  const signIn = useAction(async (email: string) => ok(await api.POST('/api/v1/auth/login', { body: { email, password } })));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const r = await accept.run();
    if (!r) return;
    setDone({ email: r.user.email });
    if (await signIn.run(r.user.email)) navigate('/', { replace: true });
  };
  return (
    <form className="card narrow" onSubmit={submit} aria-labelledby="inv-title">
      <h1 id="inv-title">Accept your invitation</h1>
      <fieldset className="choice">
        <legend>Do you already have an svc account?</legend>
        <label><input type="radio" name="has" checked={!hasAccount} onChange={() => setHasAccount(false)} /> No, create one</label>
        <label><input type="radio" name="has" checked={hasAccount} onChange={() => setHasAccount(true)} /> Yes</label>
      </fieldset>
      {hasAccount ? null : (
        <Field label="Your name">
          <input required autoComplete="name" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
      )}
      <Field label={hasAccount ? 'Your password' : 'Choose a password'} hint={hasAccount ? undefined : 'At least 12 characters.'}>
        <input type="password" required autoComplete={hasAccount ? 'current-password' : 'new-password'} value={password} onChange={(e) => setPassword(e.target.value)} />
      </Field>
      <ErrorNote error={accept.error} what="The invitation was not accepted" />
      <ErrorNote error={signIn.error} what={done ? `Accepted as ${done.email}, but signing in failed` : undefined} />
      <button type="submit" disabled={accept.pending || signIn.pending}>Accept and sign in</button>
    </form>
  );
}
