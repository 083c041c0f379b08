import { describe, expect, it } from 'vitest';
import { redisConnectionFromUrl } from './redis-url.js';

describe('redisConnectionFromUrl', () => {
  it('reads unix sockets, tcp with db and credentials, and tls', () => {
    expect(redisConnectionFromUrl('unix:///tmp/x%20y/redis.sock')).toEqual({ path: '/tmp/x y/redis.sock' });
    expect(redisConnectionFromUrl('redis://:p%40ss@127.0.0.1:6380/2')).toEqual({ host: '127.0.0.1', port: 6380, db: 2, password: 'p@ss' });
    expect(redisConnectionFromUrl('rediss://cache.internal')).toMatchObject({ port: 6379, db: 0, tls: {} });
  });

  it('rejects other schemes and bad database numbers', () => {
    expect(() => redisConnectionFromUrl('http://x')).toThrow(/scheme/);
    expect(() => redisConnectionFromUrl('redis://h/abc')).toThrow(/database/);
  });
});
