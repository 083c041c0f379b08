import { redirect } from 'next/navigation';
import { apiStatus } from '../../lib/api';
import { currentSession } from '../../lib/session/current';
import { LoginForm } from './login-form';

export const dynamic = 'force-dynamic';
export const metadata = { title: 'Sign in · Cubicle' };

export default async function LoginPage({
  searchParams,
}: {
  searchParams: Promise<{ expired?: string }>;
}) {
  if (await currentSession()) redirect('/pools');
  const [status, { expired }] = await Promise.all([apiStatus(), searchParams]);
  return (
    <main className="login card">
      <h1>Sign in to Cubicle</h1>
      <p className="muted">
        Your key stays on the server: this browser only keeps a session id, and signing out deletes
        the session.
      </p>
      {expired ? (
        <p className="alert">Your key was refused by the API (revoked?). Sign in again.</p>
      ) : null}
      <LoginForm />
      <p className="muted" style={{ fontSize: '0.8rem', marginTop: '1.5rem' }}>
        {status.ok
          ? `API ${status.version.version} is ${status.healthy ? 'healthy' : 'degraded'}.`
          : `The API is not reachable: ${status.reason}`}
      </p>
    </main>
  );
}
