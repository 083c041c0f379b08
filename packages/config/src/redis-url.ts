/** RedisConnection is the subset of ioredis options a Redis URL can express. */
export interface RedisConnection {
  path?: string;
  host?: string;
  port?: number;
  db?: number;
  username?: string;
  password?: string;
  tls?: Record<string, never>;
}

/**
 * redisConnectionFromUrl accepts `redis://[user:password@]host:port[/db]`, `rediss://…` and
 * `unix:///path/to/redis.sock` (the embedded default and the test harness use a private unix
 * socket). The result plugs into ioredis and BullMQ's `connection`.
 */
export function redisConnectionFromUrl(url: string): RedisConnection {
  const parsed = new URL(url);
  if (parsed.protocol === 'unix:') return { path: decodeURIComponent(parsed.pathname) };
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') {
    throw new Error(`unsupported Redis URL scheme ${parsed.protocol}`);
  }
  const db = parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0;
  if (!Number.isInteger(db) || db < 0) throw new Error('Redis URL database must be a non-negative integer');
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 6379,
    db,
    ...(parsed.username ? { username: decodeURIComponent(parsed.username) } : {}),
    ...(parsed.password ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
  };
}
