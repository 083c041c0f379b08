import type { ApiKeyRole, StoredSecretUsableBy } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';

export type { ApiKeyRole };

/**
 * checkUsableBy refuses, with 403 `secret_not_usable` naming them, the stored secrets a key of
 * `role` may not name: an admin key uses every one, a member key only those written with
 * `usable_by: "members"`. Claim secrets (no setting: `null`) belong to the claim's holder and are
 * always usable. Called before anything is stored or taken, so a refusal changes nothing.
 */
export function checkUsableBy(
  role: ApiKeyRole,
  resolved: Iterable<{ name: string; usable_by: StoredSecretUsableBy | string | null }>,
): void {
  if (role === 'admin') return;
  const refused = [...resolved]
    .filter((r) => r.usable_by !== null && r.usable_by !== 'members')
    .map((r) => r.name);
  if (refused.length > 0)
    throw new AppError('secret_not_usable', `usable by admin keys only: ${refused.join(', ')}`, {
      secrets: refused,
    });
}
