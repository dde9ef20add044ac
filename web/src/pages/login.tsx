import { useState, type FormEvent } from 'react';
import { api, ok } from '../api/client';
import { useAction } from '../api/hooks';
import { navigate, useLocation } from '../router';
import { ErrorNote, Field } from '../ui';

/** Where a sign-in goes on: `next` when it is a page of this UI, else home. */
export function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}

export default function Login() {
  const { query } = useLocation();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const signIn = useAction(async () => ok(await api.POST('/api/v1/auth/login', { body: { email, password } })));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    if (await signIn.run()) navigate(safeNext(query.get('next')), { replace: true });
  };
  return (
    <form className="card narrow" onSubmit={submit} aria-labelledby="login-title">
      <h1 id="login-title">Sign in to svc</h1>
      <Field label="Email">
        <input type="email" autoComplete="username" required value={email} onChange={(e) => setEmail(e.target.value)} autoFocus />
      </Field>
      <Field label="Password">
        <input type="password" autoComplete="current-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
      </Field>
      <ErrorNote error={signIn.error} what="Not signed in" />
      <button type="submit" disabled={signIn.pending}>{signIn.pending ? 'Signing in…' : 'Sign in'}</button>
      <p className="muted">No account? Ask an owner or admin of your organization for an invitation link.</p>
    </form>
  );
}
