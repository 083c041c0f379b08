import Link from 'next/link';
import { api } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';
import { AutoRefresh } from '../../components/auto-refresh';
import { TtlCountdown } from '../../components/ttl-countdown';
import { ClaimControls } from './claim-controls';

export const metadata = { title: 'Claims · Cubicle' };

const FILTERS = ['active', 'pending', 'released'] as const;

export default async function ClaimsPage({
  searchParams,
}: {
  searchParams: Promise<{ status?: string; cursor?: string }>;
}) {
  const session = await requireSession();
  const query = await searchParams;
  const status = FILTERS.find((s) => s === query.status) ?? 'active';
  const claims = await api(session, (c) =>
    c.request('listClaims', {
      query: { status, limit: 50, ...(query.cursor ? { cursor: query.cursor } : {}) },
    }),
  );
  return (
    <>
      <AutoRefresh seconds={5} />
      <h1>Claims</h1>
      <p>
        {FILTERS.map((f) => (
          <Link key={f} href={`/claims?status=${f}`} style={{ marginRight: '1rem' }}>
            {f === status ? <strong>{f}</strong> : f}
          </Link>
        ))}
      </p>
      {claims.data.length === 0 ? (
        <p className="muted">No {status} claims. Claim a desktop from the Pools page.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Claim</th>
              <th>Pool</th>
              <th>Status</th>
              <th>TTL left</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {claims.data.map((claim) => (
              <tr key={claim.id} data-claim={claim.id}>
                <td>
                  <Link href={`/claims/${claim.id}`}>{claim.name}</Link>
                  <div className="muted mono">{claim.id}</div>
                </td>
                <td>{claim.pool}</td>
                <td>
                  <span className={`badge ${claim.status}`}>{claim.status}</span>
                  {claim.release_reason ? (
                    <div className="muted">{claim.release_reason}</div>
                  ) : null}
                </td>
                <td>
                  {claim.status === 'released' ? (
                    '—'
                  ) : (
                    <TtlCountdown expiresAt={claim.expires_at} />
                  )}
                </td>
                <td>
                  <ClaimControls claim={claim} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {claims.next_cursor ? (
        <p>
          <Link href={`/claims?status=${status}&cursor=${encodeURIComponent(claims.next_cursor)}`}>
            Older →
          </Link>
        </p>
      ) : null}
    </>
  );
}
