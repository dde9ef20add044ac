/**
 * The page table: each path is a shareable URL. Pages load on first use (one chunk each), so the first
 * page stays small. Pages of a project live under /p/{project}; the shell shows its navigation.
 */
import { Suspense, lazy, useEffect, type ComponentType, type LazyExoticComponent } from 'react';
import { Link, match, navigate, useLocation } from './router';
import { SignedIn, useSession } from './session';
import { Loading } from './ui';
import { setTheme, savedTheme } from './theme';
import { api } from './api/client';

type PageProps = { params: Record<string, string> };
type Route = { path: string; page: LazyExoticComponent<ComponentType<PageProps>>; public?: boolean; bare?: boolean };

const page = (load: () => Promise<{ default: ComponentType<PageProps> }>) => lazy(load);

export const ROUTES: Route[] = [
  { path: '/login', page: page(() => import('./pages/login')), public: true, bare: true },
  { path: '/invitations/:token', page: page(() => import('./pages/invitation')), public: true, bare: true },
  { path: '/device', page: page(() => import('./pages/device')), bare: true },
  { path: '/', page: page(() => import('./pages/home')) },
  { path: '/p/:project', page: page(() => import('./pages/overview')) },
  { path: '/p/:project/metrics', page: page(() => import('./pages/metrics')) },
  { path: '/p/:project/traces', page: page(() => import('./pages/traces')) },
  { path: '/p/:project/traces/:trace', page: page(() => import('./pages/trace')) },
  { path: '/p/:project/logs', page: page(() => import('./pages/logs')) },
  { path: '/p/:project/runs', page: page(() => import('./pages/runs')) },
  { path: '/p/:project/runs/:run', page: page(() => import('./pages/run')) },
  { path: '/p/:project/sessions/:session', page: page(() => import('./pages/session')) },
  { path: '/p/:project/agents', page: page(() => import('./pages/agents')) },
  { path: '/p/:project/agents/:asset', page: page(() => import('./pages/agent')) },
  { path: '/p/:project/signals', page: page(() => import('./pages/signals')) },
  { path: '/p/:project/policy', page: page(() => import('./pages/policy')) },
  { path: '/p/:project/containments', page: page(() => import('./pages/containments')) },
  { path: '/p/:project/containments/:id', page: page(() => import('./pages/containment')) },
  { path: '/settings/keys', page: page(() => import('./pages/keys')) },
  { path: '/settings/members', page: page(() => import('./pages/members')) },
  { path: '/settings/projects', page: page(() => import('./pages/projects')) },
  { path: '/settings/pricing', page: page(() => import('./pages/pricing')) },
  { path: '/settings/budgets', page: page(() => import('./pages/budgets')) },
];

const NotFound = page(() => import('./pages/not-found'));

function resolve(path: string): { route: Route | null; params: Record<string, string> } {
  for (const route of ROUTES) {
    const params = match(route.path, path);
    if (params) return { route, params };
  }
  return { route: null, params: {} };
}

export function App() {
  const { path } = useLocation();
  const { route, params } = resolve(path);
  const Page = route?.page ?? NotFound;
  const body = (
    <Suspense fallback={<Loading />}>
      <Page params={params} />
    </Suspense>
  );
  if (route?.public) return <main className="bare">{body}</main>;
  return <SignedIn>{route?.bare ? <main className="bare">{body}</main> : <Shell project={params.project}>{body}</Shell>}</SignedIn>;
}

const PROJECT_NAV: [string, string][] = [
  ['', 'Overview'],
  ['/metrics', 'Metrics'],
  ['/traces', 'Traces'],
  ['/logs', 'Logs'],
  ['/runs', 'Agent runs'],
  ['/agents', 'Agents'],
  ['/signals', 'Signals'],
  ['/containments', 'Containments'],
  ['/policy', 'Content policy'],
];

const SETTINGS_NAV: [string, string][] = [
  ['/settings/keys', 'API keys'],
  ['/settings/members', 'Members'],
  ['/settings/projects', 'Projects'],
  ['/settings/pricing', 'Prices'],
  ['/settings/budgets', 'Budget'],
];

function Shell({ project, children }: { project?: string; children: React.ReactNode }) {
  const { me, projects } = useSession();
  const { path } = useLocation();
  const current = project ?? localStorage.getItem('svc.project') ?? projects[0]?.id;
  useEffect(() => {
    if (project) localStorage.setItem('svc.project', project);
  }, [project]);
  const signOut = async () => {
    await api.POST('/api/v1/auth/logout');
    navigate('/login');
  };
  return (
    <div className="shell">
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <Link href="/" className="brand">svc</Link>
        <label className="project-pick">
          <span className="sr-only">Project</span>
          <select value={current ?? ''} onChange={(e) => navigate(`/p/${e.target.value}`)} aria-label="Project">
            {projects.map((p) => (
              <option key={p.id} value={p.id}>{p.name}</option>
            ))}
          </select>
        </label>
        <nav aria-label="Project pages" className="nav">
          {current
            ? PROJECT_NAV.map(([suffix, label]) => {
                const href = `/p/${current}${suffix}`;
                const active = suffix === '' ? path === href : path.startsWith(href);
                return (
                  <Link key={suffix} href={href} aria-current={active ? 'page' : undefined}>{label}</Link>
                );
              })
            : null}
          {SETTINGS_NAV.map(([href, label]) => (
            <Link key={href} href={href} aria-current={path.startsWith(href) ? 'page' : undefined}>{label}</Link>
          ))}
        </nav>
        <div className="who">
          <span title={me.email}>{me.name}</span>
          <button type="button" className="link" onClick={() => setTheme(savedTheme() === 'dark' ? 'light' : 'dark')} aria-label="Switch between light and dark theme">Theme</button>
          <button type="button" className="link" onClick={signOut}>Sign out</button>
        </div>
      </header>
      <main id="main">{children}</main>
    </div>
  );
}
