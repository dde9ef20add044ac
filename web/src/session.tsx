/**
 * Who is signed in (GET /users/me) and the projects they can open (GET /projects), for every page that
 * needs a person. Not signed in: the page goes to /login and comes back after.
 */
import { createContext, useContext, useEffect, type ReactNode } from 'react';
import { api, ok } from './api/client';
import { useLoad } from './api/hooks';
import { navigate, useLocation } from './router';
import { ErrorNote, Loading } from './ui';
import type { components } from './api/schema';

type Me = NonNullable<Awaited<ReturnType<typeof loadMe>>>;
type Project = { id: string; name: string; sampling_rate: number; created_at: string };

async function loadMe() {
  return ok(await api.GET('/api/v1/users/me'));
}

async function loadProjects(): Promise<Project[]> {
  const all: Project[] = [];
  let cursor: string | undefined;
  // A person sees few projects; every page of them is read (the cursor is the API's).
  for (let i = 0; i < 50; i++) {
    const page = ok(await api.GET('/api/v1/projects', { params: { query: { limit: 200, ...(cursor ? { cursor } : {}) } } }));
    all.push(...(page.projects as Project[]));
    cursor = (page.next_cursor as string | null | undefined) ?? undefined;
    if (!cursor) break;
  }
  return all;
}

export interface SessionValue {
  me: Me;
  projects: Project[];
  reloadProjects: () => void;
}

const Ctx = createContext<SessionValue | null>(null);

export function useSession(): SessionValue {
  const v = useContext(Ctx);
  if (!v) throw new Error('useSession outside <SignedIn>');
  return v;
}

export function SignedIn({ children }: { children: ReactNode }) {
  const { href } = useLocation();
  const me = useLoad(loadMe, []);
  const projects = useLoad(loadProjects, [me.data?.id]);
  const signedOut = me.error?.status === 401;
  useEffect(() => {
    if (signedOut) navigate(`/login?next=${encodeURIComponent(href)}`, { replace: true });
  }, [signedOut, href]);
  if (me.error && !signedOut) return <ErrorNote error={me.error} what="Who you are could not be read" />;
  if (projects.error) return <ErrorNote error={projects.error} what="Your projects could not be read" />;
  if (!me.data || !projects.data) return <Loading />;
  return <Ctx.Provider value={{ me: me.data, projects: projects.data, reloadProjects: projects.reload }}>{children}</Ctx.Provider>;
}

export type { Project, components };
