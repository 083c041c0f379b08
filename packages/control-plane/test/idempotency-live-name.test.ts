import { CreateClaimRequest, PoolSpec } from '@cubicle/contract/api';
import { AppError } from '@cubicle/contract/errors';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { applyPool, createClaim } from '../src/index.js';
import { seedWarm, world, type World } from './setup.js';

const req = (input: Record<string, unknown>) =>
  CreateClaimRequest.parse({ wait_seconds: 0, ...input });
const codeOf = (p: Promise<{ status: number; claim: { id: string } }>) =>
  p.then(
    (r) => `ok:${r.status}`,
    (e: unknown) => (e instanceof AppError ? e.code : String(e)),
  );

// The claim's live-name index fires inside the claim statement before the key's row is written,
// so "a live claim has this name" used to win over "this key was used with another body".
describe('Idempotency-Key with a live claim name (real Postgres)', () => {
  let w: World;
  const scope = 'POST /v1/pools/named/claims';
  beforeAll(async () => {
    w = await world();
    const { pool } = await applyPool(w.deps, w.tenantId, 'named', PoolSpec.parse({ image: 'img' }));
    await seedWarm(w.db, w.tenantId, pool.id, 6);
  });
  afterAll(async () => w?.close());

  it('key first, then the same key with another body naming the live claim: 409', async () => {
    const first = await createClaim(w.deps, w.tenantId, 'named', req({ name: 'alpha' }), {
      key: 'k-alpha',
      scope,
    });
    expect(first.status).toBe(201);
    // Another body that names the live claim: still the key's other body.
    expect(
      await codeOf(
        createClaim(
          w.deps,
          w.tenantId,
          'named',
          req({ name: 'alpha', metadata: { other: 'body' } }),
          { key: 'k-alpha', scope },
        ),
      ),
    ).toBe('idempotency_key_reused');
    // The same body again is the first answer, status included (not a 200 reconnect).
    const retry = await createClaim(w.deps, w.tenantId, 'named', req({ name: 'alpha' }), {
      key: 'k-alpha',
      scope,
    });
    expect(retry).toMatchObject({ status: 201, claim: { id: first.claim.id } });
  });

  it('key first on another claim, then the same key naming a different live claim: 409', async () => {
    const other = await createClaim(w.deps, w.tenantId, 'named', req({ name: 'beta' }));
    expect(other.status).toBe(201);
    const first = await createClaim(w.deps, w.tenantId, 'named', req({ name: 'gamma' }), {
      key: 'k-gamma',
      scope,
    });
    expect(first.status).toBe(201);
    expect(
      await codeOf(
        createClaim(w.deps, w.tenantId, 'named', req({ name: 'beta' }), { key: 'k-gamma', scope }),
      ),
    ).toBe('idempotency_key_reused');
  });

  it('reconnect first (the key answers 200), then the same key with another body: 409', async () => {
    const live = await createClaim(w.deps, w.tenantId, 'named', req({ name: 'delta' }));
    const reconnect = await createClaim(w.deps, w.tenantId, 'named', req({ name: 'delta' }), {
      key: 'k-delta',
      scope,
    });
    expect(reconnect).toMatchObject({ status: 200, claim: { id: live.claim.id } });
    expect(
      await codeOf(
        createClaim(w.deps, w.tenantId, 'named', req({ name: 'delta', ttl_seconds: 60 }), {
          key: 'k-delta',
          scope,
        }),
      ),
    ).toBe('idempotency_key_reused');
    expect(
      await codeOf(
        createClaim(w.deps, w.tenantId, 'named', req({ metadata: { x: '1' } }), {
          key: 'k-delta',
          scope,
        }),
      ),
    ).toBe('idempotency_key_reused');
    const again = await createClaim(w.deps, w.tenantId, 'named', req({ name: 'delta' }), {
      key: 'k-delta',
      scope,
    });
    expect(again).toMatchObject({ status: 200, claim: { id: live.claim.id } });
  });

  it('concurrent reconnects under one key and two bodies: one answers, the other is 409', async () => {
    const live = await createClaim(w.deps, w.tenantId, 'named', req({ name: 'epsilon' }));
    const outcomes = await Promise.all([
      codeOf(
        createClaim(w.deps, w.tenantId, 'named', req({ name: 'epsilon', metadata: { a: '1' } }), {
          key: 'k-eps',
          scope,
        }),
      ),
      codeOf(
        createClaim(w.deps, w.tenantId, 'named', req({ name: 'epsilon', metadata: { a: '2' } }), {
          key: 'k-eps',
          scope,
        }),
      ),
    ]);
    expect(outcomes.sort()).toEqual(['idempotency_key_reused', 'ok:200']);
    expect(live.status).toBe(201);
  });
});
