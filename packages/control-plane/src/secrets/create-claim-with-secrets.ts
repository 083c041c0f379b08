import type { CreateClaimRequest } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId } from '@cubicle/db';
import type { Deps } from '../resources.js';
import { createClaim, type CreateClaimResult } from '../claims/create-claim.js';
import { idempotencyHashKey, type IdempotencyInput } from '../idempotency/idempotency.js';
import type { Keyring } from '../crypto/keyring.js';
import { sealClaimSecrets } from './claim-secrets.js';
import type { ApiKeyRole } from './usable-by.js';

/**
 * createClaimWithSecrets is createClaim for a request that may carry `secrets` or
 * `stored_secrets`. Without them it is createClaim itself. With them, the values are checked and
 * sealed first (a refusal takes no claim), then the claim is taken on the same fast path (a warm
 * sandbox: no provisioning, no cold start) with the sealed values written by the same statement
 * (cubicle_claim_batch): one round trip, and a claim never commits without its secrets.
 * A replayed or reconnected claim takes the request's secrets too (a name it has is replaced;
 * a released claim takes none). Nothing is queued: the worker writes them
 * into the desktop through its guest driver before the sandbox's first guest call and at each
 * run's start, never through a pod spec, label, cloud-init or argv. `role` is the caller's key's:
 * a stored secret it may not use is 403 `secret_not_usable` before anything is taken.
 */
export async function createClaimWithSecrets(
  deps: Deps & { keyring?: Keyring | undefined },
  tenantId: string,
  poolName: string,
  request: CreateClaimRequest,
  idempotency?: Omit<IdempotencyInput, 'body'>,
  role: ApiKeyRole = 'admin',
): Promise<CreateClaimResult> {
  // Retries are recognised across replicas and restarts by a hash keyed from the keyring.
  if (idempotency && deps.keyring)
    idempotency = { ...idempotency, hashKey: idempotencyHashKey(deps.keyring) };
  const hasSecrets =
    Object.keys(request.secrets ?? {}).length > 0 || (request.stored_secrets?.length ?? 0) > 0;
  if (!hasSecrets) return createClaim(deps, tenantId, poolName, request, idempotency);
  if (!deps.keyring)
    throw new AppError('service_unavailable', 'secrets need CUBICLE_KEYRING in the API process');
  const sealed = await sealClaimSecrets(
    { ...deps, keyring: deps.keyring },
    tenantId,
    request,
    role,
  );
  return createClaim(
    deps,
    tenantId,
    poolName,
    request,
    idempotency,
    sealed.map((s) => ({ id: newId('secret'), name: s.name, envelope: s.envelope })),
  );
}
