import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { newId } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPool, createClaim } from '../src/index.js';
import { decideClaim } from '../src/lifecycle/claim-batch.js';
import { seedWarm, world, type World } from './setup.js';

// Claims are group-committed: those arriving in one event-loop turn share one statement. These
// bodies bypass the contract (which refuses them with a 400 first) to prove the batch itself
// cannot fail one tenant's claims for another's input.
const POISONS = { nul: 'a\u0000b', loneHigh: 'x\ud800', loneLow: '\udc00y' };

const outcome = (p: Promise<{ status: number }>) =>
  p.then(
    (r) => `ok:${r.status}`,
    (e: unknown) => (e instanceof AppError ? e.code : `error:${String(e)}`),
  );

describe('a claim batch isolates its items (real Postgres)', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  });
  afterAll(async () => w?.close());

  it('poisoned claims mixed into a burst of another tenant: 0 of theirs fail, each poison is a 400', async () => {
    const { pool } = await applyPool(
      w.deps,
      w.tenantId,
      'victim',
      PoolSpec.parse({ image: 'img', autoscaling: { min: 0, initial: 0, max: 30 } }),
    );
    await seedWarm(w.db, w.tenantId, pool.id, 30);
    await applyPool(w.deps, w.otherTenantId, 'hostile', PoolSpec.parse({ image: 'img' }));
    const req = (metadata: Record<string, string>) => ({
      ...CreateClaimRequest.parse({ wait_seconds: 0 }),
      metadata,
    });

    // Interleave: every tenth claim of the burst is a poisoned one of the other tenant, both as a
    // value and as a key, so each batch the burst forms holds some.
    const victims: Promise<string>[] = [];
    const poisoned: Promise<string>[] = [];
    const poisons = Object.values(POISONS);
    for (let i = 0; i < 100; i++) {
      victims.push(outcome(createClaim(w.deps, w.tenantId, 'victim', req({ n: String(i) }))));
      if (i % 10 === 0) {
        const poison = poisons[(i / 10) % poisons.length]!;
        const metadata = i % 20 === 0 ? { v: poison } : { [poison]: 'v' };
        poisoned.push(outcome(createClaim(w.deps, w.otherTenantId, 'hostile', req(metadata))));
      }
    }
    const victimOutcomes = await Promise.all(victims);
    const poisonOutcomes = await Promise.all(poisoned);

    expect(victimOutcomes.filter((o) => !o.startsWith('ok:'))).toEqual([]);
    expect(victimOutcomes.filter((o) => o === 'ok:201')).toHaveLength(30);
    expect(victimOutcomes.filter((o) => o === 'ok:202')).toHaveLength(70);
    expect(poisonOutcomes).toEqual(poisonOutcomes.map(() => 'validation_failed'));
    expect(await w.db.claim.count({ where: { tenantId: w.otherTenantId } })).toBe(0);
    expect(await w.db.claim.count({ where: { tenantId: w.tenantId, poolId: pool.id } })).toBe(100);
  });

  it('a poisoned item in one statement is refused alone, as an outcome with its SQLSTATE', async () => {
    await applyPool(w.deps, w.tenantId, 'direct', PoolSpec.parse({ image: 'img' }));
    const item = (metadata: Record<string, string>) => ({
      claimId: newId('claim'),
      tenantId: w.tenantId,
      poolName: 'direct',
      name: `direct-${newId('claim').slice(-8)}`,
      named: true,
      metadata,
      ttlSeconds: null,
      now: new Date(),
    });
    const results = await Promise.all([
      decideClaim(w.deps, item({ a: '1' })),
      decideClaim(w.deps, item({ a: POISONS.nul })),
      decideClaim(w.deps, item({ a: '2' })),
      decideClaim(w.deps, item({ a: POISONS.loneHigh })),
      decideClaim(w.deps, item({ a: '3' })),
    ]);
    expect(results.map((r) => r.kind)).toEqual([
      'pending',
      'refused',
      'pending',
      'refused',
      'pending',
    ]);
    for (const r of results) if (r.kind === 'refused') expect(r.code, r.message).toMatch(/^22/);
  });

  it('items travel one per line: line breaks inside an item stay inside it', async () => {
    await applyPool(w.deps, w.tenantId, 'lines', PoolSpec.parse({ image: 'img' }));
    const texts = ['a\nb', '\r\n', 'x\u2028y\u2029z', '\n'];
    const results = await Promise.all(
      texts.map((text, i) =>
        decideClaim(w.deps, {
          claimId: newId('claim'),
          tenantId: w.tenantId,
          poolName: 'lines',
          name: `line-${i}\n`,
          named: true,
          metadata: { text, [`k${text}`]: text },
          ttlSeconds: null,
          now: new Date(),
        }),
      ),
    );
    expect(results.map((r) => r.kind)).toEqual(texts.map(() => 'pending'));
    const rows = await w.db.claim.findMany({
      where: { tenantId: w.tenantId, pool: { name: 'lines' } },
      select: { name: true, metadata: true },
    });
    expect(rows.map((r) => [r.name, r.metadata]).sort()).toEqual(
      texts.map((text, i) => [`line-${i}\n`, { text, [`k${text}`]: text }]).sort(),
    );
  });
});
