import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  applyPool,
  createClaimWithSecrets,
  newKeyringSpec,
  openEnvelope,
  parseKeyring,
  secretAad,
} from '../src/index.js';
import { seedWarm, world, type World } from './setup.js';

const keyring = parseKeyring(newKeyringSpec('k1'));

// Claim-time secrets travel in the claim statement (cubicle_claim_batch): these check that a
// claim and its secrets commit together, and only together.
describe('claim-time secrets are written by the claim statement (real Postgres)', () => {
  let w: World;
  let deps: World['deps'] & { keyring: typeof keyring };
  beforeAll(async () => {
    w = await world();
    deps = { ...w.deps, keyring };
  });
  afterAll(async () => w?.close());

  const request = (body: Record<string, unknown>) =>
    CreateClaimRequest.parse({ wait_seconds: 0, ...body });
  const opened = async (claimId: string) => {
    const rows = await w.db.claimSecret.findMany({ where: { claimId }, orderBy: { name: 'asc' } });
    return rows.map((r) => [r.name, openEnvelope(keyring, r, secretAad(r.tenantId, r.name))]);
  };

  it('a burst with and without secrets: each claim holds exactly its own values', async () => {
    const { pool } = await applyPool(
      deps,
      w.tenantId,
      'burst',
      PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 20 } }),
    );
    await seedWarm(w.db, w.tenantId, pool.id, 12);
    const results = await Promise.all(
      Array.from({ length: 16 }, (_, i) =>
        createClaimWithSecrets(
          deps,
          w.tenantId,
          'burst',
          request(i % 2 === 0 ? { secrets: { A: `a-${i}`, B: `b-${i}` } } : {}),
        ),
      ),
    );
    expect(results.filter((r) => r.status === 201)).toHaveLength(12);
    expect(results.filter((r) => r.status === 202)).toHaveLength(4);
    for (const [i, r] of results.entries())
      expect(await opened(r.claim.id)).toEqual(
        i % 2 === 0
          ? [
              ['A', `a-${i}`],
              ['B', `b-${i}`],
            ]
          : [],
      );
  });

  it('a refused claim writes none of its secrets; its neighbours in the statement keep theirs', async () => {
    await applyPool(deps, w.tenantId, 'refuse', PoolSpec.parse({ image: 'img' }));
    const before = await w.db.claimSecret.count();
    // The contract refuses a NUL first; bypassing it proves the statement rolls the item back alone.
    const poisoned = { ...request({ secrets: { P: 'poison' } }), metadata: { v: 'a\u0000b' } };
    const [bad, good] = await Promise.allSettled([
      createClaimWithSecrets(deps, w.tenantId, 'refuse', poisoned),
      createClaimWithSecrets(deps, w.tenantId, 'refuse', request({ secrets: { G: 'good' } })),
    ]);
    expect(bad.status === 'rejected' && bad.reason instanceof AppError && bad.reason.code).toBe(
      'validation_failed',
    );
    expect(good.status).toBe('fulfilled');
    if (good.status === 'fulfilled')
      expect(await opened(good.value.claim.id)).toEqual([['G', 'good']]);
    expect(await w.db.claimSecret.count()).toBe(before + 1);
  });

  it('a reconnect replaces the values of names the claim has and adds new ones', async () => {
    await applyPool(deps, w.tenantId, 'named', PoolSpec.parse({ image: 'img' }));
    const first = await createClaimWithSecrets(
      deps,
      w.tenantId,
      'named',
      request({ name: 'agent-1', secrets: { A: 'old', B: 'kept' } }),
    );
    const again = await createClaimWithSecrets(
      deps,
      w.tenantId,
      'named',
      request({ name: 'agent-1', secrets: { A: 'new', C: 'added' } }),
    );
    expect(again.status).toBe(200);
    expect(again.claim.id).toBe(first.claim.id);
    expect(await opened(first.claim.id)).toEqual([
      ['A', 'new'],
      ['B', 'kept'],
      ['C', 'added'],
    ]);
  });
});
