import { AppError } from '@cubicle/contract/errors';
import type { JobPayload } from '@cubicle/contract/jobs';
import { sqlOf } from '@cubicle/db';
import { nowOf } from '../context.js';
import { openEnvelope, secretAad } from '../crypto/envelope.js';
import { findLiveGuest } from '../guest/find-live-guest.js';
import { inPgTransaction } from '../repositories/pg-transaction.js';
import {
  lockClaimSecrets,
  selectClaimSecretsToSync,
  selectClaimWithSecretsOfSandbox,
} from '../repositories/secrets-claim.js';
import { guestClientOf } from '../guest/guest-client.js';
import type { WorkerDeps } from '../resources.js';
import { announceClaimSecrets } from './claim-secrets-opened.js';
import { recentSecrets } from './log-redaction.js';

const SYNC_TIMEOUT_MS = 20_000;

export type SecretsSyncResult =
  { names: string[] } | { skipped: 'claim_not_active' | 'no_secrets' };

/** Which claim's secrets go into which desktop. */
export interface SecretsTarget {
  tenantId: string;
  claimId: string;
  sandboxId: string;
}

/**
 * deliverClaimSecrets writes exactly the claim's current secrets into its sandbox's secrets
 * directory (the guest removes the files of any others), so additions and deletions are one
 * idempotent call. Deliveries of one claim are serialised by a Postgres advisory lock held from
 * reading the rows to the guest's answer, whichever worker process makes them (the sandbox
 * queue's `secrets.sync`, a queue's first call, a run's start): the last to write read the
 * newest rows, so a secret deleted meanwhile is never written back. `whenEmpty: 'skip'` leaves
 * the desktop alone when the claim has no secrets (nothing to write, nothing ever written). A
 * claim that is no longer live, or no longer holds the sandbox, is skipped (its desktop is
 * destroyed anyway). The guest is reached through the guest client (findLiveGuest on the locked
 * connection, guestClientOf). Errors name the sandbox and the
 * guest's code, never a value: BullMQ keeps a failed job's message in Redis.
 */
export async function deliverClaimSecrets(
  deps: WorkerDeps,
  target: SecretsTarget,
  whenEmpty: 'skip' | 'write' = 'write',
): Promise<SecretsSyncResult> {
  // Only a lock is taken: the transaction ends in a rollback, which releases it, whatever happened.
  return inPgTransaction<SecretsSyncResult>(deps.db, async (client, rollback) => {
    rollback();
    await sqlOf(client).exec(lockClaimSecrets, target.claimId);
    // Looked up on the locked connection: the claim's guest, only while the claim is live and
    // still holds this sandbox.
    const lookup = await findLiveGuest(client, { ...target, now: nowOf(deps) }, true);
    if (lookup.kind !== 'live') return { skipped: 'claim_not_active' };
    const guest = guestClientOf(deps.keyring, lookup.guest);
    const rows = await sqlOf(client).rows(
      selectClaimSecretsToSync,
      target.claimId,
      target.tenantId,
    );
    if (rows.length === 0 && whenEmpty === 'skip') return { skipped: 'no_secrets' };
    const values = rows.map((r) => ({
      name: r.name,
      value: openEnvelope(
        deps.keyring,
        { ciphertext: r.ciphertext, nonce: r.nonce, wrappedKey: r.wrapped_key },
        secretAad(target.tenantId, r.name),
      ),
    }));
    recentSecrets.remember(target.tenantId, values);
    // Runs of the claim redact the values before the desktop has their files.
    await announceClaimSecrets(deps.events, target.tenantId, target.claimId, values);
    try {
      const answer = await guest.call(
        'secrets.write',
        { exclusive: true, secrets: values },
        { timeoutMs: SYNC_TIMEOUT_MS },
      );
      return { names: answer.names };
    } catch (err) {
      // Never the guest's own message: it could echo what it was sent.
      if (err instanceof AppError)
        throw new AppError(
          err.code,
          `the secrets were not written by the guest of ${target.sandboxId} (${err.status} ${err.code})`,
        );
      throw err;
    }
  });
}

/** syncClaimSecrets performs a `secrets.sync` job (queued by an added or deleted secret). */
export function syncClaimSecrets(
  deps: WorkerDeps,
  p: JobPayload<'secrets.sync'>,
): Promise<SecretsSyncResult> {
  return deliverClaimSecrets(deps, {
    tenantId: p.tenant_id,
    claimId: p.claim_id,
    sandboxId: p.sandbox_id,
  });
}

/**
 * deliverOnAttach writes a claimed sandbox's secrets before the first call its queue serves in
 * this process: the claim request stored them without queueing anything (the warm hit stays one
 * batched INSERT more than a plain claim). A claim without secrets costs one indexed query.
 */
export async function deliverOnAttach(
  deps: WorkerDeps,
  sandboxId: string,
): Promise<SecretsSyncResult> {
  const claim = await sqlOf(deps.db).row(selectClaimWithSecretsOfSandbox, sandboxId, nowOf(deps));
  if (!claim) return { skipped: 'no_secrets' };
  return deliverClaimSecrets(
    deps,
    { tenantId: claim.tenant_id, claimId: claim.id, sandboxId },
    'skip',
  );
}
