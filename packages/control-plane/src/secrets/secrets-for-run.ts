import { AppError } from '@cubicle/contract/errors';
import { sqlOf, type Db } from '@cubicle/db';
import { openEnvelope, secretAad } from '../crypto/envelope.js';
import type { Keyring } from '../crypto/keyring.js';
import {
  resolveSecretNamesStatement,
  type ResolvedSecretRow,
} from '../repositories/secrets-claim.js';
import { recentSecrets } from './log-redaction.js';
import type { NamedSecret } from './redact.js';

/** SecretsContext is what reading or writing secret values needs: the database and the keyring. */
export interface SecretsContext {
  db: Db;
  keyring: Keyring;
}

/**
 * resolveSecretNames is the one rule for what a name means to a claim's run: the claim's own
 * secret of that name, else the tenant's stored secret of that name (its newest version). One
 * statement, one row per name that resolves. Names that resolve to nothing are refused together
 * with 400 `validation_failed`, `details.unknown_secrets` listing them in the order named.
 * Both the API (checkRunSecretNames, before a run is stored) and the worker (secretsForRun, when
 * it starts it) ask this, so they cannot disagree.
 */
export async function resolveSecretNames(
  db: Db,
  tenantId: string,
  claimId: string,
  names: readonly string[],
): Promise<Map<string, ResolvedSecretRow>> {
  const wanted = [...new Set(names)];
  if (wanted.length === 0) return new Map();
  const rows = await sqlOf(db).rows(resolveSecretNamesStatement, tenantId, claimId, wanted);
  const byName = new Map(rows.map((r) => [r.name, r]));
  const unknown = wanted.filter((n) => !byName.has(n));
  if (unknown.length > 0)
    throw new AppError(
      'validation_failed',
      `unknown secret${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`,
      { unknown_secrets: unknown },
    );
  return byName;
}

/**
 * secretsForRun decrypts the secrets a run names, in the order named, as resolveSecretNames
 * resolves them; a claim of another tenant is 404. Values live only in the returned array:
 * never put them in a job payload, a log line or an error.
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
  const byName = await resolveSecretNames(ctx.db, tenantId, claimId, names);
  const secrets = [...new Set(names)].map((name) => {
    const row = byName.get(name)!;
    return {
      name,
      value: openEnvelope(
        ctx.keyring,
        { ciphertext: row.ciphertext, nonce: row.nonce, wrappedKey: row.wrapped_key },
        secretAad(tenantId, name),
      ),
    };
  });
  recentSecrets.remember(tenantId, secrets);
  return secrets;
}
