import type { Db } from '@cubicle/db';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createApiKey,
  createKeyVerifier,
  createTenant,
  generateApiKey,
  revokeApiKey,
} from '../src/index.js';
import { databaseFixture } from './tenancy-fixture.js';

describe('key verifier', () => {
  let fx: Awaited<ReturnType<typeof databaseFixture>>;
  let db: Db;
  let tenantId: string;
  beforeAll(async () => {
    fx = await databaseFixture();
    db = fx.db;
    tenantId = (await createTenant(db, { name: 'Acme', quotas: { requests_per_minute: 77 } })).id;
  });
  afterAll(async () => fx?.close());

  /** A verifier on a clock the test moves. */
  function clocked(options: { cacheTtlMs?: number; touchIntervalMs?: number } = {}) {
    const clock = { t: Date.now() };
    const verifier = createKeyVerifier(db, { ...options, now: () => clock.t });
    return { verifier, clock };
  }

  it('returns the caller context for a valid key and null for anything else', async () => {
    const key = await createApiKey(db, { tenantId, name: 'a', role: 'member' });
    const { verifier } = clocked();
    expect(await verifier.verify(key.key)).toEqual({
      tenantId,
      apiKeyId: key.id,
      role: 'member',
      keyPrefix: key.prefix,
      requestsPerMinute: 77,
    });
    expect(await verifier.verify(generateApiKey().key)).toBeNull();
    expect(await verifier.verify('garbage')).toBeNull();
    await verifier.settle();
  });

  it('keeps trusting a key revoked elsewhere for at most the cache TTL; evict stops it at once', async () => {
    const key = await createApiKey(db, { tenantId, name: 'b', role: 'admin' });
    const { verifier, clock } = clocked({ cacheTtlMs: 5_000 });
    expect(await verifier.verify(key.key)).not.toBeNull();
    await revokeApiKey(db, tenantId, key.id);
    clock.t += 4_999;
    expect(await verifier.verify(key.key)).not.toBeNull(); // the documented window
    clock.t += 2;
    expect(await verifier.verify(key.key)).toBeNull();

    const other = await createApiKey(db, { tenantId, name: 'c', role: 'admin' });
    expect(await verifier.verify(other.key)).not.toBeNull();
    await revokeApiKey(db, tenantId, other.id);
    verifier.evict(other.id);
    expect(await verifier.verify(other.key)).toBeNull();
    await verifier.settle();
  });

  it('shares one lookup between concurrent checks of a key the cache does not hold', async () => {
    const key = await createApiKey(db, { tenantId, name: 'burst', role: 'member' });
    const { verifier, clock } = clocked({ cacheTtlMs: 5_000 });
    const burst = await Promise.all(Array.from({ length: 32 }, () => verifier.verify(key.key)));
    expect(burst.every((c) => c?.apiKeyId === key.id)).toBe(true);
    expect(verifier.stats().lookups).toBe(1);
    // After a quiet spell longer than the TTL the next burst again costs one lookup.
    clock.t += 60_000;
    await Promise.all(Array.from({ length: 32 }, () => verifier.verify(key.key)));
    expect(verifier.stats()).toEqual({ lookups: 2, hits: 0 });
    await verifier.settle();
  });

  it('refreshes a key in use before its entry expires, and a refresh that finds it revoked drops it', async () => {
    const key = await createApiKey(db, { tenantId, name: 'steady', role: 'member' });
    const { verifier, clock } = clocked({ cacheTtlMs: 5_000 });
    expect(await verifier.verify(key.key)).not.toBeNull();
    clock.t += 3_000; // past half the TTL: answered from the cache, refreshed behind it
    expect(await verifier.verify(key.key)).not.toBeNull();
    await verifier.settle();
    expect(verifier.stats()).toEqual({ lookups: 2, hits: 1 });
    clock.t += 4_000; // past the first entry's expiry, within the refreshed one's
    expect(await verifier.verify(key.key)).not.toBeNull();
    await verifier.settle();
    expect(verifier.stats()).toEqual({ lookups: 3, hits: 2 });

    await revokeApiKey(db, tenantId, key.id);
    clock.t += 3_000;
    expect(await verifier.verify(key.key)).not.toBeNull(); // within the TTL of the last lookup
    await verifier.settle(); // that use refreshed the entry and found the key revoked
    expect(await verifier.verify(key.key)).toBeNull();
    expect(verifier.stats().lookups).toBe(5);
  });

  it('does not cache a key whose lookup was running when it was evicted', async () => {
    const key = await createApiKey(db, { tenantId, name: 'racing', role: 'member' });
    const { verifier } = clocked({ cacheTtlMs: 60_000 });
    const running = verifier.verify(key.key);
    verifier.evict(key.id);
    expect(await running).not.toBeNull();
    await verifier.verify(key.key);
    expect(verifier.stats()).toEqual({ lookups: 2, hits: 0 });
    await verifier.settle();
  });

  it('never caches unknown keys: a key created after a failed lookup works at once', async () => {
    const { verifier } = clocked({ cacheTtlMs: 60_000 });
    const generated = generateApiKey();
    expect(await verifier.verify(generated.key)).toBeNull();
    await db.apiKey.create({
      data: {
        id: `key_${'1'.repeat(26)}`,
        tenantId,
        name: 'late',
        role: 'member',
        prefix: generated.prefix,
        hash: generated.hash,
      },
    });
    expect(await verifier.verify(generated.key)).not.toBeNull();
    await verifier.settle();
  });

  it('writes last_used_at at most once per interval per key', async () => {
    const key = await createApiKey(db, { tenantId, name: 'd', role: 'member' });
    const { verifier, clock } = clocked({ cacheTtlMs: 0, touchIntervalMs: 60_000 });
    const lastUsed = async () =>
      (await db.apiKey.findUniqueOrThrow({ where: { id: key.id } })).lastUsedAt;

    await verifier.verify(key.key);
    await verifier.settle();
    const first = await lastUsed();
    expect(first?.getTime()).toBe(clock.t);

    clock.t += 30_000;
    await verifier.verify(key.key);
    await verifier.settle();
    expect((await lastUsed())?.getTime()).toBe(first?.getTime());

    clock.t += 31_000;
    await verifier.verify(key.key);
    await verifier.settle();
    expect((await lastUsed())?.getTime()).toBe(clock.t);

    // A second replica (fresh verifier) that just started also respects the interval.
    const replica = createKeyVerifier(db, { cacheTtlMs: 0, now: () => clock.t + 1_000 });
    await replica.verify(key.key);
    await replica.settle();
    expect((await lastUsed())?.getTime()).toBe(clock.t);
  });
});
