import { describe, expect, it } from 'vitest';
import { redisOptionsFromUrl } from './redis-url.js';

describe('redisOptionsFromUrl', () => {
  it('maps a unix socket URL to a path, with an optional db', () => {
    expect(redisOptionsFromUrl('unix:///tmp/x/redis.sock')).toEqual({ path: '/tmp/x/redis.sock' });
    expect(redisOptionsFromUrl('unix:///tmp/x/redis.sock?db=3')).toEqual({
      path: '/tmp/x/redis.sock',
      db: 3,
    });
  });

  it('carries credentials on a unix socket URL (the embedded Redis asks for a password)', () => {
    expect(redisOptionsFromUrl('unix://:pw@localhost/tmp/x/redis.sock')).toEqual({
      path: '/tmp/x/redis.sock',
      password: 'pw',
    });
    expect(redisOptionsFromUrl('unix://web:pw@localhost/tmp/x/redis.sock')).toEqual({
      path: '/tmp/x/redis.sock',
      username: 'web',
      password: 'pw',
    });
  });

  it('maps redis:// to host, port, db and credentials', () => {
    expect(redisOptionsFromUrl('redis://127.0.0.1')).toEqual({ host: '127.0.0.1', port: 6379 });
    expect(redisOptionsFromUrl('redis://app:s%40cret@cache.internal:6380/2')).toEqual({
      host: 'cache.internal',
      port: 6380,
      db: 2,
      username: 'app',
      password: 's@cret',
    });
    expect(redisOptionsFromUrl('rediss://:pw@[::1]:7000')).toEqual({
      host: '::1',
      port: 7000,
      password: 'pw',
      tls: {},
    });
  });

  it('rejects other schemes and bad databases without echoing the password', () => {
    expect(() => redisOptionsFromUrl('http://localhost')).toThrow(/unsupported Redis URL scheme/);
    expect(() => redisOptionsFromUrl('redis://:hunter2@h/x')).toThrow(/invalid Redis database/);
    expect(() => redisOptionsFromUrl('redis://:hunter2@h/x')).not.toThrow(/hunter2/);
  });
});
