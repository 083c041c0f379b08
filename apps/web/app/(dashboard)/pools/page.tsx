import Link from 'next/link';
import { api } from '../../../lib/api/client';
import { requireSession } from '../../../lib/session/current';
import { ActionForm } from '../../components/action-form';
import { AutoRefresh } from '../../components/auto-refresh';
import { claimFromPool } from './actions';
import { AutoscalingForm } from './autoscaling-form';
import { PrimeForm, PrimeSummary } from './prime-form';

export const metadata = { title: 'Pools · Cubicle' };

const COUNT_NAMES = ['warm', 'claimed', 'provisioning', 'releasing', 'failed'] as const;

export default async function PoolsPage() {
  const session = await requireSession();
  const pools = await api(session, (c) => c.request('listPools', { query: { limit: 200 } }));
  return (
    <>
      <AutoRefresh seconds={3} />
      <h1>Pools</h1>
      {pools.data.length === 0 ? (
        <p className="muted">
          No pools yet. Create one with <code>PUT /v1/pools/&#123;name&#125;</code>.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Pool</th>
              <th>Sandboxes (live)</th>
              <th>Autoscaling (min · initial · max) · prime</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {pools.data.map((pool) => (
              <tr key={pool.id} data-pool={pool.name}>
                <td>
                  <Link href={`/pools/${pool.name}`} aria-label={`Insights of pool ${pool.name}`}>
                    <strong>{pool.name}</strong>
                  </Link>{' '}
                  <span className={`badge ${pool.state}`}>{pool.state}</span>
                  <div className="muted mono">
                    {pool.backend} · {pool.image} · TTL {pool.claim_ttl_seconds}s
                  </div>
                  <div className="prime-summary">
                    <PrimeSummary prime={pool.prime} />
                  </div>
                </td>
                <td className="counts">
                  {COUNT_NAMES.map((name) => (
                    <span key={name} data-count={name}>
                      {name} <strong>{pool.counts[name]}</strong>
                    </span>
                  ))}
                </td>
                <td>
                  <AutoscalingForm pool={pool} />
                  <PrimeForm pool={pool} />
                </td>
                <td>
                  {pool.state === 'active' ? (
                    <ActionForm
                      action={claimFromPool}
                      submit="Claim a desktop"
                      pending="Claiming…"
                      buttonClass="primary"
                    >
                      <input type="hidden" name="pool" value={pool.name} />
                    </ActionForm>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
