import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiFailure } from './client';

export interface Loaded<T> {
  data: T | undefined;
  error: ApiFailure | undefined;
  loading: boolean;
  reload: () => void;
}

function asFailure(e: unknown): ApiFailure {
  if (e instanceof ApiFailure) return e;
  return new ApiFailure(0, 'network_error', e instanceof Error ? `the service could not be reached: ${e.message}` : String(e));
}

/** Loads `fn()` when `deps` change; the newest answer wins (an older one arriving late is dropped). */
export function useLoad<T>(fn: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiFailure; loading: boolean }>({ loading: true });
  const seq = useRef(0);
  const run = useCallback(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => mine === seq.current && setState({ data, loading: false }),
      (e) => mine === seq.current && setState({ error: asFailure(e), loading: false }),
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);
  useEffect(run, [run]);
  return { data: state.data, error: state.error, loading: state.loading, reload: run };
}

/** Runs an action (a write): its pending state and its failure, kept until the next attempt. */
export function useAction<A extends unknown[], T>(fn: (...args: A) => Promise<T>) {
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<ApiFailure | undefined>();
  const run = async (...args: A): Promise<T | undefined> => {
    setPending(true);
    setError(undefined);
    try {
      return await fn(...args);
    } catch (e) {
      setError(asFailure(e));
      return undefined;
    } finally {
      setPending(false);
    }
  };
  return { run, pending, error };
}
