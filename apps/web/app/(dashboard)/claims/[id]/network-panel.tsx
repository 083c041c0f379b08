import type { ClaimEgress } from '@cubicle/contract/api';
import { ActionForm } from '../../../components/action-form';
import { allowForPool } from './network-actions';
import { canAllowForPool } from './allow-rule';

interface Props {
  pool: string;
  egress: ClaimEgress;
  /** Only admins may edit a pool: members see the destinations without the allow step. */
  isAdmin: boolean;
}

const destinationOf = (d: ClaimEgress['destinations'][number]) =>
  `${d.name ?? d.ip ?? '?'}${d.port !== null ? `:${d.port}` : ''}`;

/**
 * NetworkPanel is a claim's Network tab: the policy its sandbox lives under and the destinations
 * it reached or was refused, with counts and the rule that decided. A denial for want of an allow
 * rule can be allowed for the pool in one step (an audited PUT of the pool; the running claim
 * gets it within a second when its desktop has a link; one provisioned under `none` says it has none).
 */
export function NetworkPanel({ pool, egress, isAdmin }: Props) {
  const { effective, narrowing } = egress;
  const claimHasAllowList = narrowing?.allow !== undefined;
  return (
    <section aria-labelledby="network">
      <h2 id="network">Network</h2>
      <p>
        Egress <span className="badge">{effective.mode}</span>{' '}
        <span className="muted">
          (from the {effective.mode_source}
          {narrowing ? ', narrowed by this claim' : ''})
        </span>
        {effective.allow.length > 0 ? (
          <span className="mono"> allow {effective.allow.map((r) => r.rule).join(', ')}</span>
        ) : null}
        {effective.deny.length > 0 ? (
          <span className="mono"> deny {effective.deny.map((r) => r.rule).join(', ')}</span>
        ) : null}
      </p>
      {egress.link === 'none' ? (
        <p className="muted" data-testid="egress-no-link">
          This desktop was provisioned without network (egress <span className="mono">none</span>)
          and will not gain a link: a wider pool policy reaches the pool&apos;s next claims, not
          this one.
        </p>
      ) : null}
      {egress.destinations.length === 0 ? (
        <p className="muted">No connections reported for this claim.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Destination</th>
              <th>Verdict</th>
              <th>Rule</th>
              <th>Count</th>
              <th>Last</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {egress.destinations.map((d) => (
              <tr key={`${d.verdict}|${d.name}|${d.ip}|${d.port}|${d.rule}`}>
                <td className="mono">
                  {destinationOf(d)}
                  {d.name && d.ip ? <div className="muted">{d.ip}</div> : null}
                </td>
                <td>
                  <span className={`badge ${d.verdict === 'allowed' ? 'success' : 'failure'}`}>
                    {d.verdict}
                  </span>
                </td>
                <td className="mono">{d.rule}</td>
                <td>{d.count}</td>
                <td className="mono">{d.last_at.slice(11, 19)}</td>
                <td>
                  {isAdmin &&
                  d.verdict === 'denied' &&
                  canAllowForPool(d.rule, claimHasAllowList) ? (
                    <ActionForm
                      action={allowForPool}
                      submit="Allow for this pool"
                      pending="Allowing…"
                      confirm={`Allow ${destinationOf(d)} for every claim of pool ${pool}?`}
                    >
                      <input type="hidden" name="pool" value={pool} />
                      <input type="hidden" name="name" value={d.name ?? ''} />
                      <input type="hidden" name="ip" value={d.ip ?? ''} />
                      <input type="hidden" name="port" value={d.port ?? ''} />
                    </ActionForm>
                  ) : null}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
