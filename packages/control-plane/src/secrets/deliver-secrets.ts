import { nowOf } from '../context.js';
import type { Deps } from '../resources.js';
import { isClaimLive } from '../lifecycle/claim-liveness.js';
import { guestAttachChannel } from '../guest/guest-attach.js';

/** The facts of a claim that decide how its secrets reach its desktop. */
export interface ClaimForDelivery {
  id: string;
  status: string;
  expiresAt: Date;
  sandboxId: string | null;
}

/**
 * requestSecretsDelivery asks the worker to bring a live claim's desktop in line with its
 * secrets after one was added or deleted: a `secrets.sync` job on its sandbox's own queue, so
 * every guest call queued after this one (a shell, a launched app) already sees the files; the
 * attach message makes a worker serve that queue at once. Payloads carry ids only: the worker
 * reads and decrypts the values itself. A claim not active yet needs nothing: its desktop gets
 * the current set before its first guest call and at every run's start (deliverOnAttach,
 * deliverClaimSecrets); nor does one past its deadline (its desktop is about to be destroyed).
 */
export async function requestSecretsDelivery(
  deps: Deps,
  tenantId: string,
  claim: ClaimForDelivery,
): Promise<void> {
  if (!isClaimLive(claim, nowOf(deps)) || !claim.sandboxId) return;
  await deps.queues.enqueue('secrets.sync', {
    tenant_id: tenantId,
    claim_id: claim.id,
    sandbox_id: claim.sandboxId,
  });
  if (deps.events)
    await deps.events.publisher
      .publish(guestAttachChannel(deps.events.prefix), claim.sandboxId)
      .catch(() => undefined);
}
