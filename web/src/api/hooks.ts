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

/**
 * A list read page by page with the API's cursor: the first page when `deps` change, the next on
 * `more.load()` (present while the API has a next page). Pages of an older `deps` never mix in.
 */
export function usePaged<T>(
  fetchPage: (cursor?: string) => Promise<{ items: T[]; next: string | null | undefined }>,
  deps: unknown[],
): { first: Loaded<{ items: T[]; next: string | null | undefined }>; rows: T[]; more?: { load: () => void; pending: boolean }; moreError: ApiFailure | undefined } {
  const key = JSON.stringify(deps);
  const first = useLoad(() => fetchPage(), deps);
  const [extra, setExtra] = useState<{ key: string; rows: T[]; cursor: string | null } | null>(null);
  const next = useAction(async (cursor: string) => {
    const p = await fetchPage(cursor);
    setExtra((e) => ({ key, rows: [...(e?.key === key ? e.rows : []), ...p.items], cursor: p.next ?? null }));
  });
  const mine = extra?.key === key ? extra : null;
  const rows = [...(first.data?.items ?? []), ...(mine?.rows ?? [])];
  const cursor = mine ? mine.cursor : (first.data?.next ?? null);
  // A reload of the first page starts the list again.
  const reload = first.reload;
  first.reload = () => {
    setExtra(null);
    reload();
  };
  return { first, rows, more: cursor ? { load: () => void next.run(cursor), pending: next.pending } : undefined, moreError: next.error };
}
