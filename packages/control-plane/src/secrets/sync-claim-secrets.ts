import { AppError } from '@cubicle/contract/errors';
import type { JobPayload } from '@cubicle/contract/jobs';
import { sqlPoolOf } from '@cubicle/db';
import { nowOf } from '../context.js';
import { openEnvelope, secretAad } from '../crypto/envelope.js';
import { findLiveGuest } from '../guest/find-live-guest.js';
import { guestClientOf } from '../guest/guest-client.js';
import type { WorkerDeps } from '../sandboxes/provision-sandbox.js';
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
  const client = await sqlPoolOf(deps.db).connect();
  try {
    await client.query('BEGIN');
    await client.query({
      name: 'cubicle_lock_claim_secrets_v1',
      text: "SELECT pg_advisory_xact_lock(hashtextextended('claim_secrets:' || $1, 0))",
      values: [target.claimId],
    });
    // Looked up on the locked connection: the claim's guest, only while the claim is live and
    // still holds this sandbox.
    const lookup = await findLiveGuest(client, { ...target, now: nowOf(deps) }, true);
    if (lookup.kind !== 'live') return { skipped: 'claim_not_active' };
    const guest = guestClientOf(deps.keyring, lookup.guest);
    const { rows } = await client.query<{
      name: string;
      ciphertext: Buffer;
      nonce: Buffer;
      wrapped_key: Buffer;
    }>({
      name: 'cubicle_secrets_sync_rows_v1',
      text: `SELECT name, ciphertext, nonce, wrapped_key FROM claim_secrets
             WHERE claim_id = $1 AND tenant_id = $2 ORDER BY name`,
      values: [target.claimId, target.tenantId],
    });
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
  } finally {
    // Only a lock was taken: ending the transaction releases it, whatever happened.
    await client.query('ROLLBACK').catch(() => undefined);
    client.release();
  }
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
  const { rows } = await sqlPoolOf(deps.db).query<{ id: string; tenant_id: string }>({
    name: 'cubicle_claim_with_secrets_of_sandbox_v2',
    text: `SELECT c.id, c.tenant_id FROM claims c
           WHERE c.sandbox_id = $1 AND cubicle_claim_is_live(c.status, c.expires_at, $2)
             AND EXISTS (SELECT 1 FROM claim_secrets cs WHERE cs.claim_id = c.id)`,
    values: [sandboxId, nowOf(deps)],
  });
  const claim = rows[0];
  if (!claim) return { skipped: 'no_secrets' };
  return deliverClaimSecrets(
    deps,
    { tenantId: claim.tenant_id, claimId: claim.id, sandboxId },
    'skip',
  );
}
