import { AppError } from '@cubicle/contract/errors';
import type { Db } from '@cubicle/db';
import { openEnvelope, secretAad } from '../crypto/envelope.js';
import type { Keyring } from '../crypto/keyring.js';
import { recentSecrets } from './log-redaction.js';
import type { NamedSecret } from './redact.js';

/** SecretsContext is what reading or writing secret values needs: the database and the keyring. */
export interface SecretsContext {
  db: Db;
  keyring: Keyring;
}

/**
 * secretsForRun decrypts the secrets a run (or delivery) names, in the order named: a claim's
 * own secret first, else the tenant's stored secret of that name (its newest version). Names
 * that are neither are refused together with 400 `validation_failed`, `details.unknown_secrets`
 * listing them; a claim of another tenant is 404. Values live only in the returned array: never
 * put them in a job payload, a log line or an error.
 */
export async function secretsForRun(
  ctx: SecretsContext,
  tenantId: string,
  claimId: string,
  names: readonly string[],
): Promise<NamedSecret[]> {
  const claim = await ctx.db.claim.findFirst({
    where: { id: claimId, tenantId },
    select: { id: true },
  });
  if (!claim) throw new AppError('not_found', 'no such claim');
  const wanted = [...new Set(names)];
  if (wanted.length === 0) return [];
  const [own, stored] = await Promise.all([
    ctx.db.claimSecret.findMany({
      where: { tenantId, claimId, name: { in: wanted } },
      select: { name: true, ciphertext: true, nonce: true, wrappedKey: true },
    }),
    ctx.db.tenantSecret.findMany({
      where: { tenantId, name: { in: wanted } },
      select: { name: true, version: true, ciphertext: true, nonce: true, wrappedKey: true },
      orderBy: { version: 'desc' },
      distinct: ['name'],
    }),
  ]);
  const byName = new Map<string, (typeof own)[number]>();
  for (const row of stored) byName.set(row.name, row);
  for (const row of own) byName.set(row.name, row); // the claim's own secret wins
  const unknown = wanted.filter((n) => !byName.has(n));
  if (unknown.length > 0)
    throw new AppError(
      'validation_failed',
      `unknown secret${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
      { unknown_secrets: unknown },
    );
  const secrets = wanted.map((name) => ({
    name,
    value: openEnvelope(ctx.keyring, byName.get(name)!, secretAad(tenantId, name)),
  }));
  recentSecrets.remember(secrets);
  return secrets;
}
