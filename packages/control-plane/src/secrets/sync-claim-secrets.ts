import { GuestErrorResponse, GuestRoutes, SecretsResponse } from '@cubicle/contract/guest';
import type { JobPayload } from '@cubicle/contract/jobs';
import { sqlPoolOf } from '@cubicle/db';
import { openEnvelope, secretAad } from '../crypto/envelope.js';
import { open } from '../crypto/keyring.js';
import { callGuest } from '../guest-calls/call-guest.js';
import type { WorkerDeps } from '../sandboxes/provision-sandbox.js';
import { requestSecretsDelivery } from './deliver-secrets.js';
import { recentSecrets } from './log-redaction.js';

const SYNC_TIMEOUT_MS = 20_000;

export type SecretsSyncResult = { names: string[] } | { skipped: 'claim_not_active' };

/**
 * syncClaimSecrets performs a `secrets.sync` job: it decrypts the claim's current secrets and
 * writes exactly those into the sandbox's secrets directory (the guest removes the files of any
 * others), so additions and deletions are one idempotent call. A claim that ended meanwhile is
 * skipped (its desktop is destroyed anyway). Errors name the sandbox and the guest's code, never
 * a value: BullMQ keeps a failed job's message in Redis. The result (names only) is kept too.
 */
export async function syncClaimSecrets(
  deps: WorkerDeps,
  p: JobPayload<'secrets.sync'>,
): Promise<SecretsSyncResult> {
  const { rows } = await sqlPoolOf(deps.db).query<{
    guest_endpoint: string | null;
    guest_token_ciphertext: Buffer | null;
  }>({
    name: 'cubicle_secrets_sync_sandbox_v1',
    text: `SELECT s.guest_endpoint, s.guest_token_ciphertext
           FROM sandboxes s JOIN claims c ON c.sandbox_id = s.id
           WHERE s.id = $1 AND s.tenant_id = $2 AND s.state = 'claimed'
             AND c.id = $3 AND c.status = 'active'`,
    values: [p.sandbox_id, p.tenant_id, p.claim_id],
  });
  const sandbox = rows[0];
  if (!sandbox) return { skipped: 'claim_not_active' };
  if (!sandbox.guest_endpoint || !sandbox.guest_token_ciphertext)
    throw new Error(`sandbox ${p.sandbox_id} has no guest driver endpoint`);
  const secrets = await claimSecretsWith(deps, p);
  const values = secrets.map((s) => ({
    name: s.name,
    value: openEnvelope(deps.keyring, s, secretAad(p.tenant_id, s.name)),
  }));
  recentSecrets.remember(values);
  const route = GuestRoutes['secrets.write'];
  const answer = await callGuest({
    endpoint: sandbox.guest_endpoint,
    token: open(deps.keyring, sandbox.guest_token_ciphertext, p.sandbox_id),
    method: route.method,
    path: route.path,
    body: { exclusive: true, secrets: values },
    timeoutMs: SYNC_TIMEOUT_MS,
  });
  if (answer.status !== 200) {
    const envelope = GuestErrorResponse.safeParse(answer.body);
    throw new Error(
      `the guest of ${p.sandbox_id} refused the secrets (${answer.status} ${envelope.success ? envelope.data.error.code : 'no envelope'})`,
    );
  }
  return { names: SecretsResponse.parse(answer.body).names };
}

/** How long a sync waits for the rows it was queued with (they are written as it is queued). */
const ROWS_WAIT_MS = 2_000;

/**
 * claimSecretsWith reads the claim's sealed secrets; when the job names secrets whose rows are
 * still being written, it waits for them (holding the sandbox's queue, so no later guest call
 * runs first), at most ROWS_WAIT_MS, then takes what is there.
 */
async function claimSecretsWith(deps: WorkerDeps, p: JobPayload<'secrets.sync'>) {
  const deadline = Date.now() + ROWS_WAIT_MS;
  for (;;) {
    const rows = await deps.db.claimSecret.findMany({
      where: { tenantId: p.tenant_id, claimId: p.claim_id },
      select: { name: true, ciphertext: true, nonce: true, wrappedKey: true },
      orderBy: { name: 'asc' },
    });
    const have = new Set(rows.map((r) => r.name));
    if ((p.names ?? []).every((n) => have.has(n)) || Date.now() >= deadline) return rows;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** ClaimPendingError makes BullMQ retry `secrets.deliver` until the claim is active. */
export class ClaimPendingError extends Error {
  constructor(claimId: string) {
    super(`claim ${claimId} is still pending`);
    this.name = 'ClaimPendingError';
  }
}

/**
 * deliverWhenActive performs a `secrets.deliver` job: once the pending claim is active it queues
 * `secrets.sync` on the sandbox's queue; while pending it throws so BullMQ retries it; a claim
 * that ended without a sandbox needs nothing.
 */
export async function deliverWhenActive(
  deps: WorkerDeps,
  p: JobPayload<'secrets.deliver'>,
): Promise<{ queued: boolean }> {
  const claim = await deps.db.claim.findFirst({
    where: { id: p.claim_id, tenantId: p.tenant_id },
    select: { id: true, status: true, sandboxId: true },
  });
  if (!claim || claim.status === 'released') return { queued: false };
  if (claim.status === 'pending' || !claim.sandboxId) throw new ClaimPendingError(claim.id);
  await requestSecretsDelivery(deps, p.tenant_id, claim);
  return { queued: true };
}
