import type { SecretInjection, StoredSecret, StoredSecretUsableBy } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId, Prisma, sqlOf } from '@cubicle/db';
import type { Deps } from '../resources.js';
import { sealEnvelope, secretAad, type Envelope } from '../crypto/envelope.js';
import type { Keyring } from '../crypto/keyring.js';
import { insertStoredSecretVersion, selectStoredSecrets } from '../repositories/secrets-stored.js';
import { publishEgressChange } from '../egress/egress-changes.js';
import { checkSecretValue } from './check-secret-value.js';
import { recentSecrets } from './log-redaction.js';

/**
 * putStoredSecret writes a new version of a tenant's stored secret (the first is version 1) and
 * answers its name and version, never the value. Concurrent writers each get their own version:
 * a unique (tenant, name, version) collision is retried with the next number. `usableBy` says
 * which keys may name it (StoredSecretUsableBy); omitted, the previous version's setting stays
 * (`admins` for a first version), so rotating a value never widens or narrows who uses it.
 * `inject` binds it to hosts at egress (null unbinds; omitted keeps the previous binding); when
 * a binding is in force before or after, egress points reload the tenant's sandboxes, so a
 * rotated or unbound credential takes effect on running claims at once.
 */
export async function putStoredSecret(
  deps: Deps & { keyring: Keyring },
  tenantId: string,
  name: string,
  value: string,
  usableBy?: StoredSecretUsableBy,
  inject?: SecretInjection | null,
): Promise<StoredSecret> {
  checkSecretValue(name, value);
  recentSecrets.remember(tenantId, [{ name, value }]);
  const envelope = sealEnvelope(deps.keyring, value, secretAad(tenantId, name));
  for (let attempt = 0; ; attempt++) {
    try {
      const row = (await sqlOf(deps.db).row(
        insertStoredSecretVersion,
        tenantId,
        name,
        newId('secret'),
        Buffer.from(envelope.ciphertext),
        Buffer.from(envelope.nonce),
        Buffer.from(envelope.wrappedKey),
        envelope.keyId,
        usableBy ?? null,
        inject ? JSON.stringify(inject) : null,
        inject === undefined,
      ))!;
      if (row.inject || row.prev_inject)
        await publishEgressChange(deps, { tenant_id: tenantId });
      return {
        name,
        version: row.version,
        created_at: (row.first ?? row.created_at).toISOString(),
        updated_at: row.created_at.toISOString(),
        usable_by: row.usable_by,
        inject: row.inject ?? null,
      };
    } catch (err) {
      const e = err as { code?: string; meta?: { code?: string } };
      const code = e.code ?? e.meta?.code;
      if (attempt < 5 && (code === '23505' || /23505|unique/i.test(String(err)))) continue;
      throw err;
    }
  }
}

/** listStoredSecrets lists the tenant's stored secrets: names, newest version, dates. */
export async function listStoredSecrets(
  deps: Deps,
  tenantId: string,
): Promise<{ data: StoredSecret[]; next_cursor: null }> {
  const rows = await sqlOf(deps.db).rows(selectStoredSecrets, tenantId);
  return {
    data: rows.map((r) => ({
      name: r.name,
      version: Number(r.version),
      created_at: r.first.toISOString(),
      updated_at: r.last.toISOString(),
      usable_by: r.usable_by,
      inject: r.inject ?? null,
    })),
    next_cursor: null,
  };
}

/**
 * deleteStoredSecret deletes every version; 404 when the tenant has none of that name. A bound
 * secret stops being injected at once (egress points reload the tenant's sandboxes).
 */
export async function deleteStoredSecret(
  deps: Deps,
  tenantId: string,
  name: string,
): Promise<void> {
  const bound = await deps.db.tenantSecret.count({
    where: { tenantId, name, inject: { not: Prisma.DbNull } },
  });
  const { count } = await deps.db.tenantSecret.deleteMany({ where: { tenantId, name } });
  if (count === 0) throw new AppError('not_found', `no stored secret ${name}`);
  if (bound > 0) await publishEgressChange(deps, { tenant_id: tenantId });
}

/**
 * latestStoredEnvelopes reads the newest sealed version of each named stored secret that exists,
 * with who may use it.
 */
export async function latestStoredEnvelopes(
  deps: Deps,
  tenantId: string,
  names: readonly string[],
): Promise<Map<string, { envelope: Envelope; usableBy: string }>> {
  const rows = await deps.db.tenantSecret.findMany({
    where: { tenantId, name: { in: [...names] } },
    orderBy: { version: 'desc' },
    distinct: ['name'],
    select: {
      name: true,
      ciphertext: true,
      nonce: true,
      wrappedKey: true,
      keyId: true,
      usableBy: true,
    },
  });
  return new Map(
    rows.map((r) => [
      r.name,
      {
        envelope: {
          ciphertext: new Uint8Array(r.ciphertext),
          nonce: new Uint8Array(r.nonce),
          wrappedKey: new Uint8Array(r.wrappedKey),
          keyId: r.keyId,
        },
        usableBy: r.usableBy,
      },
    ]),
  );
}
