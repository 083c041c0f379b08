import type { ClaimEgress, EgressNarrowing } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { effectivePolicy } from '@cubicle/egress';
import type { Resources } from '../resources.js';
import { publishEgressChange } from './egress-changes.js';
import { installationOf } from './egress-installation.js';
import { storedPoolEgress } from './sandbox-egress.js';
import { claimDestinations } from '../repositories/egress-events.js';

type ClaimEgressDeps = Pick<Resources, 'db'> & Partial<Pick<Resources, 'egress' | 'events'>>;

/**
 * checkClaimEgress refuses a claim narrowing that would widen its pool's policy (422
 * `egress_widens_pool` naming the field) before the claim is taken. An unknown pool is left to
 * the claim statement, which answers not_found the usual way.
 */
export async function checkClaimEgress(
  deps: ClaimEgressDeps,
  tenantId: string,
  poolName: string,
  narrowing: EgressNarrowing,
): Promise<void> {
  const pool = await deps.db.pool.findFirst({
    where: { tenantId, name: poolName, deletedAt: null },
    select: { egress: true },
  });
  if (!pool) return;
  const installation = installationOf(deps);
  effectivePolicy(
    installation.default,
    installation.operator,
    storedPoolEgress(pool.egress),
    narrowing,
  );
}

/**
 * storeClaimEgress records a new claim's narrowing and tells egress points to reload its
 * sandbox's policy (found after the write, so a claim the worker fulfilled meanwhile is covered).
 */
export async function storeClaimEgress(
  deps: ClaimEgressDeps,
  claimId: string,
  narrowing: EgressNarrowing,
  sandboxId: string | null,
): Promise<void> {
  const row = await deps.db.claim.update({
    where: { id: claimId },
    data: { egress: narrowing },
    select: { sandboxId: true },
  });
  const sandbox = sandboxId ?? row.sandboxId;
  if (sandbox) await publishEgressChange(deps, { sandbox_id: sandbox });
}

/**
 * linkOf says whether a claim's desktop reaches the egress point: a local desktop provisioned
 * under `none` has no link and cannot gain one (its pool leaving `none` rolls only warm
 * desktops); a backend that did not say (NULL) routes every sandbox through its egress point.
 */
const linkOf = (sandbox: { egressLink: boolean | null } | null): ClaimEgress['link'] =>
  sandbox === null ? null : sandbox.egressLink === false ? 'none' : 'linked';

/**
 * getClaimEgress answers `GET /v1/claims/{id}/egress`: the claim's narrowing, the policy its
 * sandbox lives under (computed as the egress point computes it) and its destinations with
 * counts. not_found for unknown ids and other tenants' claims.
 */
export async function getClaimEgress(
  deps: ClaimEgressDeps,
  tenantId: string,
  claimId: string,
): Promise<ClaimEgress> {
  const claim = await deps.db.claim.findFirst({
    where: { id: claimId, tenantId },
    select: {
      id: true,
      egress: true,
      pool: { select: { egress: true } },
      sandbox: { select: { egressLink: true } },
    },
  });
  if (!claim) throw new AppError('not_found', `claim ${claimId} not found`);
  const installation = installationOf(deps);
  const narrowing = (claim.egress as EgressNarrowing | null) ?? null;
  return {
    narrowing,
    effective: effectivePolicy(
      installation.default,
      installation.operator,
      storedPoolEgress(claim.pool.egress),
      narrowing,
      { widening: 'drop' },
    ),
    link: linkOf(claim.sandbox),
    destinations: await claimDestinations(deps.db, claim.id),
  };
}
