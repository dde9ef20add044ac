import { Link } from '../router';
import { Page } from '../ui';

export default function NotFound() {
  return (
    <Page title="Page not found">
      <p>No page has this address. <Link href="/">Go to your projects</Link>.</p>
    </Page>
  );
}
