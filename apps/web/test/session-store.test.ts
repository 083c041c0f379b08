import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createTestRedisNamespace,
  redisOptionsFromUrl,
  type TestRedisNamespace,
} from '../../../test/harness/index.js';
import { seal, sessionKeyId, unseal } from '../lib/session/seal';
import { SessionStore, type SessionData } from '../lib/session/store';

const data: SessionData = {
  apiKey: 'cbk_0123456789abcdefghijklmnopqrstuv',
  keyPrefix: 'cbk_01234567',
  role: 'admin',
  tenantName: 'acme',
  createdAt: new Date().toISOString(),
};

describe('dashboard sessions in real Redis', () => {
  let ns: TestRedisNamespace;
  let redis: Redis;
  let store: SessionStore;
  const secret = randomBytes(32);

  beforeAll(async () => {
    ns = createTestRedisNamespace();
    redis = new Redis({ ...redisOptionsFromUrl(ns.url), maxRetriesPerRequest: 2 });
    store = new SessionStore({ redis, prefix: ns.prefix, secret, ttlSeconds: 60 });
  });
  afterAll(async () => {
    await ns.cleanup();
    redis.disconnect();
  });

  it('stores the key sealed under a hash of the cookie, with the TTL, and reads it back', async () => {
    const id = await store.create(data);
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const keys = await redis.keys(`${ns.prefix}session:*`);
    expect(keys).toEqual([`${ns.prefix}session:${sessionKeyId(id)}`]);
    expect(keys[0]).not.toContain(id);
    const raw = (await redis.get(keys[0]!))!;
    expect(raw).not.toContain(data.apiKey);
    expect(raw).not.toContain('cbk_');
    const ttl = await redis.ttl(keys[0]!);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
    expect(await store.get(id)).toEqual(data);
  });

  it('answers null for unknown, malformed and destroyed sessions', async () => {
    const id = await store.create(data);
    expect(await store.get(`${id.slice(0, -1)}${id.endsWith('A') ? 'B' : 'A'}`)).toBeNull();
    expect(await store.get('../../etc')).toBeNull();
    expect(await store.get('')).toBeNull();
    await store.destroy(id);
    expect(await store.get(id)).toBeNull();
    expect(await redis.exists(`${ns.prefix}session:${sessionKeyId(id)}`)).toBe(0);
    await store.destroy(id);
  });

  it('refuses a sealed value moved to another session or opened with another secret', async () => {
    const a = await store.create(data);
    const b = await store.create({ ...data, role: 'member' });
    const keyA = `${ns.prefix}session:${sessionKeyId(a)}`;
    const keyB = `${ns.prefix}session:${sessionKeyId(b)}`;
    await redis.set(keyB, (await redis.get(keyA))!);
    expect(await store.get(b)).toBeNull();
    const other = new SessionStore({
      redis,
      prefix: ns.prefix,
      secret: randomBytes(32),
      ttlSeconds: 60,
    });
    expect(await other.get(a)).toBeNull();
  });
});

describe('seal', () => {
  const secret = randomBytes(32);
  it('round-trips and detects tampering', () => {
    const sealed = seal(secret, 'hello', 'bind');
    expect(unseal(secret, sealed, 'bind')).toBe('hello');
    expect(unseal(secret, sealed, 'other')).toBeNull();
    const [v, iv, body, tag] = sealed.split('.');
    const flipped = `${body![0] === 'A' ? 'B' : 'A'}${body!.slice(1)}`;
    expect(unseal(secret, [v, iv, flipped, tag].join('.'), 'bind')).toBeNull();
    expect(unseal(secret, 'v0.a.b.c', 'bind')).toBeNull();
  });
});
