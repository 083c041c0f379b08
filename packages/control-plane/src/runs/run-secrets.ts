import type { Db } from '@cubicle/db';
import { resolveSecretNames } from '../secrets/secrets-for-run.js';
import { checkUsableBy, type ApiKeyRole } from '../secrets/usable-by.js';
import type { StreamRedactor } from '../secrets/redact.js';

/**
 * checkRunSecretNames refuses a run that names a secret the claim cannot use with the same 400
 * as secretsForRun (`details.unknown_secrets`), before anything is stored: both ask
 * resolveSecretNames. A stored secret the caller's key may not use is 403 `secret_not_usable`
 * (checkUsableBy). The API opens no value for a run; the worker does, when it starts it.
 */
export async function checkRunSecretNames(
  db: Db,
  tenantId: string,
  claimId: string,
  names: readonly string[],
  role: ApiKeyRole = 'admin',
): Promise<void> {
  checkUsableBy(role, (await resolveSecretNames(db, tenantId, claimId, names)).values());
}

/** passThrough is the redactor of a run that names no secrets. */
export const passThrough: StreamRedactor = {
  push: (chunk) => chunk,
  end: () => '',
  release: () => '',
};
