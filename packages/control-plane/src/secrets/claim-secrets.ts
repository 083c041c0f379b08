import type { ClaimSecrets, SecretRef } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId, sqlOf } from '@cubicle/db';
import { nowOf } from '../context.js';
import type { Deps, SecretsDeps } from '../resources.js';
import { isClaimLive, whyClaimIsNotLive } from '../lifecycle/claim-liveness.js';
import { sealEnvelope, secretAad, type Envelope } from '../crypto/envelope.js';
import { insertClaimSecret } from '../repositories/secrets-claim.js';
import { checkSecretValue, CLAIM_SECRETS_MAX } from './check-secret-value.js';
import { requestSecretsDelivery } from './deliver-secrets.js';
import { recentSecrets } from './log-redaction.js';
import { latestStoredEnvelopes } from './stored-secrets.js';
import { checkUsableBy, type ApiKeyRole } from './usable-by.js';

/** A secret ready to store: its name and its sealed value. */
export interface SealedSecret {
  name: string;
  envelope: Envelope;
}

/**
 * sealClaimSecrets checks and seals what a claim request carries (`secrets` values,
 * `stored_secrets` names) before the claim is taken, so a refusal (413 for a value over the
 * limit, 400 naming unknown stored secrets) changes nothing. Stored secrets are copied sealed:
 * their envelopes are bound to tenant and name, which the claim's copy shares. A member key
 * naming a stored secret usable by admins only is 403 `secret_not_usable` (checkUsableBy).
 */
export async function sealClaimSecrets(
  deps: SecretsDeps,
  tenantId: string,
  request: { secrets?: ClaimSecrets | undefined; stored_secrets?: string[] | undefined },
  role: ApiKeyRole = 'admin',
): Promise<SealedSecret[]> {
  const given = Object.entries(request.secrets ?? {});
  const stored = [...new Set(request.stored_secrets ?? [])];
  const both = stored.filter((n) => request.secrets && n in request.secrets);
  if (both.length > 0)
    throw new AppError(
      'validation_failed',
      `given both as a value and stored: ${both.join(', ')}`,
      {
        names: both,
      },
    );
  if (given.length + stored.length > CLAIM_SECRETS_MAX)
    throw new AppError('validation_failed', `a claim holds at most ${CLAIM_SECRETS_MAX} secrets`);
  for (const [name, value] of given) checkSecretValue(name, value);
  recentSecrets.remember(
    tenantId,
    given.map(([name, value]) => ({ name, value })),
  );
  const sealed: SealedSecret[] = given.map(([name, value]) => ({
    name,
    envelope: sealEnvelope(deps.keyring, value, secretAad(tenantId, name)),
  }));
  if (stored.length > 0) {
    const found = await latestStoredEnvelopes(deps, tenantId, stored);
    const unknown = stored.filter((n) => !found.has(n));
    if (unknown.length > 0)
      throw new AppError('validation_failed', `unknown stored secret: ${unknown.join(', ')}`, {
        unknown_secrets: unknown,
      });
    checkUsableBy(
      role,
      stored.map((name) => ({ name, usable_by: found.get(name)!.usableBy })),
    );
    for (const name of stored) sealed.push({ name, envelope: found.get(name)!.envelope });
  }
  return sealed;
}

const toRef = (row: { id: string; claimId: string; name: string; createdAt: Date }): SecretRef => ({
  id: row.id,
  claim_id: row.claimId,
  name: row.name,
  created_at: row.createdAt.toISOString(),
});

async function claimOf(deps: Deps, tenantId: string, claimId: string) {
  const claim = await deps.db.claim.findFirst({
    where: { id: claimId, tenantId },
    select: { id: true, status: true, sandboxId: true, expiresAt: true },
  });
  if (!claim) throw new AppError('not_found', 'no such claim');
  return claim;
}

/**
 * addClaimSecret attaches one secret to an active claim (201 SecretRef, never the value); a name
 * the claim already has is 409 `already_exists`. Its file reaches the desktop before any guest
 * call queued after this one.
 */
export async function addClaimSecret(
  deps: SecretsDeps,
  tenantId: string,
  claimId: string,
  input: { name: string; value: string },
): Promise<SecretRef> {
  checkSecretValue(input.name, input.value);
  recentSecrets.remember(tenantId, [input]);
  const claim = await claimOf(deps, tenantId, claimId);
  const now = nowOf(deps);
  if (!isClaimLive(claim, now))
    throw new AppError('claim_not_active', `the claim is ${whyClaimIsNotLive(claim)}`);
  const envelope = sealEnvelope(deps.keyring, input.value, secretAad(tenantId, input.name));
  // Only while the claim is live, holding its row (FOR SHARE) against a release: the release's
  // trigger deletes the claim's secrets, and a row inserted after it would outlive the claim.
  const row = await sqlOf(deps.db).row(
    insertClaimSecret,
    claimId,
    tenantId,
    now,
    newId('secret'),
    input.name,
    Buffer.from(envelope.ciphertext),
    Buffer.from(envelope.nonce),
    Buffer.from(envelope.wrappedKey),
    envelope.keyId,
  );
  if (!row) throw new AppError('claim_not_active', 'the claim is no longer active');
  if (!row.inserted)
    throw new AppError('already_exists', `the claim already has a secret ${input.name}`);
  await requestSecretsDelivery(deps, tenantId, claim);
  return toRef({ id: row.id, claimId, name: row.name, createdAt: row.created_at });
}

/** listClaimSecrets lists a claim's secrets by name (never values), oldest first. */
export async function listClaimSecrets(
  deps: Deps,
  tenantId: string,
  claimId: string,
): Promise<{ data: SecretRef[]; next_cursor: null }> {
  await claimOf(deps, tenantId, claimId);
  const rows = await deps.db.claimSecret.findMany({
    where: { tenantId, claimId },
    select: { id: true, claimId: true, name: true, createdAt: true },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return { data: rows.map(toRef), next_cursor: null };
}

/**
 * deleteClaimSecret forgets a claim's secret and has its file removed from the desktop before
 * any guest call queued after this one runs (the sync job rewrites the directory to the claim's
 * remaining secrets).
 */
export async function deleteClaimSecret(
  deps: Deps,
  tenantId: string,
  claimId: string,
  secretId: string,
): Promise<void> {
  const claim = await claimOf(deps, tenantId, claimId);
  const { count } = await deps.db.claimSecret.deleteMany({
    where: { id: secretId, claimId, tenantId },
  });
  if (count === 0) throw new AppError('not_found', 'no such secret');
  await requestSecretsDelivery(deps, tenantId, claim);
}
