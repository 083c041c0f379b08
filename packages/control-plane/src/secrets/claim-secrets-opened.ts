import type { Publisher } from '../context.js';
import type { NamedSecret } from './redact.js';

/** Workers hear here that a claim's secrets changed (message: JSON `{tenant_id, claim_id}`). */
export const claimSecretsChannel = (prefix: string) => `${prefix}:claim-secrets`;

export type ClaimSecretsListener = (
  tenantId: string,
  claimId: string,
  secrets: readonly NamedSecret[],
) => void;

const listeners = new Set<ClaimSecretsListener>();

/**
 * onClaimSecretsOpened tells `listener` of every set of a claim's secrets this process is about
 * to write into a desktop (the run supervisor widens its live runs' redaction with them).
 * Returns the function that stops it.
 */
export function onClaimSecretsOpened(listener: ClaimSecretsListener): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/**
 * announceClaimSecrets runs before a claim's secrets reach its desktop: listeners of this process
 * hear the values at once (a run held here redacts a value before any process of the sandbox can
 * read its file), other workers hear the claim's id on Redis and read the values themselves.
 * Across workers that leaves the time of one message and one query; values never go to Redis.
 */
export async function announceClaimSecrets(
  events: { publisher: Publisher; prefix: string } | undefined,
  tenantId: string,
  claimId: string,
  secrets: readonly NamedSecret[],
): Promise<void> {
  for (const listener of listeners) listener(tenantId, claimId, secrets);
  if (events)
    await events.publisher
      .publish(
        claimSecretsChannel(events.prefix),
        JSON.stringify({ tenant_id: tenantId, claim_id: claimId }),
      )
      .catch(() => undefined);
}
