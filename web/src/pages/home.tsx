import { useEffect } from 'react';
import { navigate } from '../router';
import { useSession } from '../session';
import { Page } from '../ui';

/** `/`: the project opened last in this browser, else the first one. */
export default function Home() {
  const { projects } = useSession();
  const last = localStorage.getItem('svc.project');
  const target = projects.find((p) => p.id === last) ?? projects[0];
  useEffect(() => {
    if (target) navigate(`/p/${target.id}`, { replace: true });
  }, [target]);
  if (target) return null;
  return (
    <Page title="No project yet">
      <p>Your organization has no project you can open. An owner or admin can create one with <code>svc projects create</code>.</p>
    </Page>
  );
}
