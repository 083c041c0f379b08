import type { CreateClaimRequest } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import type { Deps } from '../context.js';
import { createClaim, type CreateClaimResult } from '../claims/create-claim.js';
import type { IdempotencyInput } from '../idempotency/idempotency.js';
import type { Keyring } from '../crypto/keyring.js';
import { sealClaimSecrets, storeClaimSecrets } from './claim-secrets.js';

/**
 * createClaimWithSecrets is createClaim for a request that may carry `secrets` or
 * `stored_secrets`. Without them it is createClaim itself. With them, the values are checked and
 * sealed first (a refusal takes no claim), the claim is taken on the same fast path (a warm
 * sandbox: no provisioning, no cold start), then the sealed values are stored in one statement
 * and their delivery is queued on the sandbox's own queue. The desktop receives them through its
 * guest driver, never through a pod spec, label, cloud-init or argv.
 */
export async function createClaimWithSecrets(
  deps: Deps & { keyring?: Keyring | undefined },
  tenantId: string,
  poolName: string,
  request: CreateClaimRequest,
  idempotency?: Omit<IdempotencyInput, 'body'>,
): Promise<CreateClaimResult> {
  const hasSecrets =
    Object.keys(request.secrets ?? {}).length > 0 || (request.stored_secrets?.length ?? 0) > 0;
  if (!hasSecrets) return createClaim(deps, tenantId, poolName, request, idempotency);
  if (!deps.keyring)
    throw new AppError('service_unavailable', 'secrets need CUBICLE_KEYRING in the API process');
  const sealed = await sealClaimSecrets({ ...deps, keyring: deps.keyring }, tenantId, request);
  const result = await createClaim(deps, tenantId, poolName, request, idempotency);
  await storeClaimSecrets(deps, tenantId, result.claim, sealed);
  return result;
}
