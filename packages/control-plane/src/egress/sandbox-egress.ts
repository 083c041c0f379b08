import { createHash } from 'node:crypto';
import type { EgressChange, EgressNarrowing, EgressPolicy } from '@cubicle/contract/api';
import { effectivePolicy, type EgressPolicySource, type SandboxEgress } from '@cubicle/egress';
import type { Subscriber } from '../context.js';
import type { Resources } from '../resources.js';
import { subscribeEgressChanges } from './egress-changes.js';
import { loadInjections } from './egress-credentials.js';
import { installationOf } from './egress-installation.js';
import { readSandboxEgress } from '../repositories/egress-events.js';

/** A pool's stored policy: {} (the column's default) follows the installation default. */
export const storedPoolEgress = (value: unknown): EgressPolicy | null =>
  value && typeof value === 'object' && Object.keys(value).length > 0
    ? (value as EgressPolicy)
    : null;

type EgressDeps = Pick<Resources, 'db'> & Partial<Pick<Resources, 'egress' | 'keyring'>>;

/**
 * loadSandboxEgress computes the policy a sandbox lives under now: its pool's (or the
 * installation default) narrowed by the claim holding it, leniently (a narrowing accepted under an
 * earlier pool policy never widens the current one). null for a sandbox that is gone (deleted,
 * failed or unknown): the egress point then enforces `none`.
 */
export async function loadSandboxEgress(
  deps: EgressDeps,
  sandboxId: string,
): Promise<SandboxEgress | null> {
  const row = await readSandboxEgress(deps.db, sandboxId);
  if (!row || row.state === 'deleted' || row.state === 'failed') return null;
  const installation = installationOf(deps);
  const policy = effectivePolicy(
    installation.default,
    installation.operator,
    storedPoolEgress(row.pool_egress),
    (row.claim_egress as EgressNarrowing | null) ?? null,
    { widening: 'drop' },
  );
  // Credentials are injected only for a claimed sandbox with network (a warm one serves no
  // tenant's work yet), and only by a process holding the keyring (the worker's point).
  const bound =
    row.claim_id && policy.mode !== 'none' && deps.keyring
      ? await loadInjections({ db: deps.db, keyring: deps.keyring }, row.tenant_id)
      : { injections: [], fingerprint: '' };
  return {
    sandboxId: row.id,
    backendRef: row.backend_ref,
    tenantId: row.tenant_id,
    poolId: row.pool_id,
    claimId: row.claim_id,
    version: createHash('sha256')
      .update(JSON.stringify(policy))
      .update(bound.fingerprint)
      .digest('hex')
      .slice(0, 16),
    policy,
    injections: bound.injections,
  };
}

/**
 * egressPolicySource is the control plane's EgressPolicySource for an egress point in a process
 * that has the database (the worker on the local backend, the egress Deployment on Kubernetes).
 * `subscriber` must be a Redis connection used for subscriptions only.
 */
export function egressPolicySource(
  deps: EgressDeps & { subscriber: Subscriber; prefix: string },
): EgressPolicySource {
  const listeners = new Set<(change: EgressChange) => void>();
  let subscribed: Promise<void> | null = null;
  return {
    load: (sandboxId) => loadSandboxEgress(deps, sandboxId),
    async subscribe(listener) {
      listeners.add(listener);
      subscribed ??= subscribeEgressChanges(deps.subscriber, deps.prefix, (change) => {
        for (const l of listeners) l(change);
      });
      await subscribed;
      return async () => {
        listeners.delete(listener);
      };
    },
  };
}
