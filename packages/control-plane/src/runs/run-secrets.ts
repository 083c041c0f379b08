import { AppError } from '@cubicle/contract/errors';
import type { Db } from '@cubicle/db';
import type { StreamRedactor } from '../secrets/redact.js';

/**
 * checkRunSecretNames refuses a run that names a secret the claim cannot use — neither the
 * claim's own nor the tenant's stored secret of that name — with the same 400 as secretsForRun
 * (`details.unknown_secrets`), before anything is stored. It reads names only: the API never
 * decrypts a value for a run; the worker does, when it starts it (secretsForRun).
 */
export async function checkRunSecretNames(
  db: Db,
  tenantId: string,
  claimId: string,
  names: readonly string[],
): Promise<void> {
  const wanted = [...new Set(names)];
  if (wanted.length === 0) return;
  const [own, stored] = await Promise.all([
    db.claimSecret.findMany({
      where: { tenantId, claimId, name: { in: wanted } },
      select: { name: true },
    }),
    db.tenantSecret.findMany({
      where: { tenantId, name: { in: wanted } },
      select: { name: true },
      distinct: ['name'],
    }),
  ]);
  const known = new Set([...own, ...stored].map((r) => r.name));
  const unknown = wanted.filter((n) => !known.has(n));
  if (unknown.length > 0)
    throw new AppError(
      'validation_failed',
      `unknown secret${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
      { unknown_secrets: unknown },
    );
}

/** passThrough is the redactor of a run that names no secrets. */
export const passThrough: StreamRedactor = { push: (chunk) => chunk, end: () => '' };
