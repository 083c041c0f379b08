import { createHash } from 'node:crypto';
import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addClaimSecret,
  applyPool,
  createClaimWithSecrets,
  newKeyringSpec,
  parseKeyring,
  putStoredSecret,
  releaseClaim,
} from '../src/index.js';
import { sealClaimSecrets } from '../src/secrets/claim-secrets.js';
import { seedWarm, world, type World } from './setup.js';

const keyring = parseKeyring(newKeyringSpec('k1'));
const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: unknown) => (e instanceof AppError ? e.code : String(e)),
  );

/** Issue 30 §4 at the database: what a dump holds about secrets, and who may use stored ones. */
describe('secrets and what is kept (real Postgres)', () => {
  let w: World;
  let deps: World['deps'] & { keyring: typeof keyring };
  const request = (body: Record<string, unknown>) =>
    CreateClaimRequest.parse({ wait_seconds: 0, ...body });
  beforeAll(async () => {
    w = await world();
    deps = { ...w.deps, keyring };
    const { pool } = await applyPool(
      deps,
      w.tenantId,
      'kept',
      PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 20 } }),
    );
    await seedWarm(w.db, w.tenantId, pool.id, 8);
  });
  afterAll(async () => w?.close());

  it("a claim's sealed secrets are deleted when it ends, by any path; none can be added after", async () => {
    const released = await createClaimWithSecrets(
      deps,
      w.tenantId,
      'kept',
      request({ secrets: { A: 'value-a-1' } }),
    );
    const expired = await createClaimWithSecrets(
      deps,
      w.tenantId,
      'kept',
      request({ secrets: { B: 'value-b-1' } }),
    );
    await addClaimSecret(deps, w.tenantId, released.claim.id, { name: 'LATE', value: 'late-1' });
    expect(await w.db.claimSecret.count({ where: { claimId: released.claim.id } })).toBe(2);
    // The API's release (cubicle_end_claim)…
    await releaseClaim(deps, w.tenantId, released.claim.id);
    expect(await w.db.claimSecret.count({ where: { claimId: released.claim.id } })).toBe(0);
    // …and any other writer of the end (expiry, a fixture): the trigger follows the status.
    await w.db.claim.update({
      where: { id: expired.claim.id },
      data: { status: 'released', releasedAt: new Date(), releaseReason: 'ttl_expired' },
    });
    expect(await w.db.claimSecret.count({ where: { claimId: expired.claim.id } })).toBe(0);
    expect(
      await codeOf(addClaimSecret(deps, w.tenantId, released.claim.id, { name: 'X', value: 'x' })),
    ).toBe('claim_not_active');
    expect(await w.db.claimSecret.count({ where: { claimId: released.claim.id } })).toBe(0);
  });

  it('stored secrets are usable by admin keys unless opened to members: 403 secret_not_usable', async () => {
    const admin = await putStoredSecret(deps, w.tenantId, 'ADMIN_ONLY', 'admin-only-value');
    expect(admin.usable_by).toBe('admins');
    const open = await putStoredSecret(deps, w.tenantId, 'SHARED', 'shared-value', 'members');
    expect(open.usable_by).toBe('members');
    // A new version without the setting keeps it.
    expect((await putStoredSecret(deps, w.tenantId, 'SHARED', 'shared-value-2')).usable_by).toBe(
      'members',
    );
    const before = await w.db.claim.count();
    const refused = await sealClaimSecrets(
      deps,
      w.tenantId,
      { stored_secrets: ['SHARED', 'ADMIN_ONLY'] },
      'member',
    ).catch((e: unknown) => e);
    expect(refused).toMatchObject({
      code: 'secret_not_usable',
      details: { secrets: ['ADMIN_ONLY'] },
    });
    expect(
      await codeOf(
        createClaimWithSecrets(
          deps,
          w.tenantId,
          'kept',
          request({ stored_secrets: ['ADMIN_ONLY'] }),
          undefined,
          'member',
        ),
      ),
    ).toBe('secret_not_usable');
    expect(await w.db.claim.count()).toBe(before);
    expect(
      await codeOf(
        createClaimWithSecrets(
          deps,
          w.tenantId,
          'kept',
          request({ stored_secrets: ['SHARED'] }),
          undefined,
          'member',
        ),
      ),
    ).toBe('ok');
    expect(
      await codeOf(
        createClaimWithSecrets(
          deps,
          w.tenantId,
          'kept',
          request({ stored_secrets: ['ADMIN_ONLY'] }),
          undefined,
          'admin',
        ),
      ),
    ).toBe('ok');
  });

  it('the idempotency row holds a keyed hash without the secret values; retries still match', async () => {
    const scope = 'POST /v1/pools/kept/claims';
    const body = request({ secrets: { PIN: '123456' }, metadata: { job: 'idem' } });
    const first = await createClaimWithSecrets(deps, w.tenantId, 'kept', body, {
      key: 'k-pin',
      scope,
    });
    const row = await w.db.idempotencyKey.findFirstOrThrow({ where: { key: 'k-pin' } });
    // Was a bare SHA-256 of the body with PIN in it: 10^6 guesses recovered the value.
    expect(row.requestHash).toMatch(/^h1:[0-9a-f]{64}$/);
    const guesses = ['123456', '123457'].map((pin) =>
      createHash('sha256')
        .update(JSON.stringify({ ...body, secrets: { PIN: pin } }))
        .digest('hex'),
    );
    expect(guesses.some((g) => row.requestHash.includes(g))).toBe(false);
    const retry = await createClaimWithSecrets(deps, w.tenantId, 'kept', body, {
      key: 'k-pin',
      scope,
    });
    expect(retry.claim.id).toBe(first.claim.id);
    expect(
      await codeOf(
        createClaimWithSecrets(deps, w.tenantId, 'kept', request({ metadata: { job: 'other' } }), {
          key: 'k-pin',
          scope,
        }),
      ),
    ).toBe('idempotency_key_reused');
  });
});
