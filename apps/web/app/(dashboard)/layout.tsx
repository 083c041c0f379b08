import { cookies } from 'next/headers';
import Link from 'next/link';
import type { ReactNode } from 'react';
import { requireSession } from '../../lib/session/current';
import { THEME_COOKIE, themeOf } from '../../lib/theme/theme';
import { ThemeToggle } from '../components/theme-toggle';
import { signOut } from '../login/actions';

export const dynamic = 'force-dynamic';

/** The dashboard shell: every page under it needs a session (the API key lives server-side in it). */
export default async function DashboardLayout({ children }: { children: ReactNode }) {
  const session = await requireSession();
  const theme = themeOf((await cookies()).get(THEME_COOKIE)?.value);
  return (
    <div className="shell">
      <nav className="nav">
        <span className="brand">Cubicle</span>
        <Link href="/pools">Pools</Link>
        <Link href="/claims">Claims</Link>
        <Link href="/runs">Runs</Link>
        <Link href="/profiles">Profiles</Link>
        <Link href="/snapshots">Snapshots</Link>
        <Link href="/secrets">Secrets</Link>
        {session.role === 'admin' ? <Link href="/webhooks">Webhooks</Link> : null}
        {session.role === 'admin' ? <Link href="/api-keys">API keys</Link> : null}
        {session.role === 'admin' ? <Link href="/audit">Audit log</Link> : null}
        {session.role === 'admin' ? <Link href="/usage">Usage</Link> : null}
        <Link href="/settings">Embedding</Link>
        <div className="who">
          <div>{session.tenantName ?? 'tenant'}</div>
          <div className="mono">
            {session.keyPrefix}… ({session.role})
          </div>
          <form action={signOut}>
            <button type="submit">Sign out</button>
          </form>
          <ThemeToggle initial={theme} />
        </div>
      </nav>
      <main className="content">{children}</main>
    </div>
  );
}
