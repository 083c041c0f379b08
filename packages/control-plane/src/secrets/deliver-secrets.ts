import type { Deps } from '../context.js';
import { guestAttachChannel } from '../guest-calls/guest-call-messages.js';

/** The facts of a claim that decide how its secrets reach its desktop. */
export interface ClaimForDelivery {
  id: string;
  status: string;
  sandboxId: string | null;
}

/**
 * requestSecretsDelivery asks the worker to bring a claim's desktop in line with its secrets.
 * An active claim gets a `secrets.sync` job on its sandbox's own queue, so every guest call
 * queued after this one (a shell, a run) already sees the files; the attach message makes a
 * worker serve that queue at once. A pending claim gets `secrets.deliver`, which waits for it to
 * become active. Payloads carry ids only: the worker reads and decrypts the values itself.
 * `attach: false` (the claim's own answer) leaves serving the queue to the sandbox's first
 * guest call or the worker's periodic scan, so that starting a queue worker does not compete
 * with the burst of claims for CPU; the job waits in order on the queue either way.
 */
export async function requestSecretsDelivery(
  deps: Deps,
  tenantId: string,
  claim: ClaimForDelivery,
  options: { attach?: boolean; names?: string[] } = {},
): Promise<void> {
  if (claim.status === 'active' && claim.sandboxId) {
    await deps.queues.enqueue('secrets.sync', {
      tenant_id: tenantId,
      claim_id: claim.id,
      sandbox_id: claim.sandboxId,
      ...(options.names ? { names: options.names } : {}),
    });
    if (deps.events && options.attach !== false)
      await deps.events.publisher
        .publish(guestAttachChannel(deps.events.prefix), claim.sandboxId)
        .catch(() => undefined);
  } else if (claim.status === 'pending') {
    await deps.queues.enqueue(
      'secrets.deliver',
      { tenant_id: tenantId, claim_id: claim.id },
      { delayMs: 200 },
    );
  }
}
