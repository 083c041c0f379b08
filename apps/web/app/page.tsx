import { apiStatus } from '../lib/api';

// Rendered per request: the status must be live, not frozen at build time.
export const dynamic = 'force-dynamic';

export default async function Home() {
  const status = await apiStatus();
  return (
    <main>
      <h1>Cubicle</h1>
      {status.ok ? (
        <p>
          API {status.version.version} ({status.version.api_version}) is{' '}
          <strong>{status.healthy ? 'healthy' : 'degraded'}</strong>.
        </p>
      ) : (
        <p role="alert">The API is not reachable: {status.reason}</p>
      )}
    </main>
  );
}
