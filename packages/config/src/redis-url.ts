// Turning a REDIS_URL into connection options for ioredis (and so BullMQ's `connection`).

/** The subset of ioredis' RedisOptions a URL can express; structurally assignable to them. */
export interface RedisConnectionOptions {
  path?: string;
  host?: string;
  port?: number;
  db?: number;
  username?: string;
  password?: string;
  tls?: Record<string, never>;
  /** `?name=…`: CLIENT SETNAME on every connection, so CLIENT LIST tells processes apart. */
  connectionName?: string;
}

function dbFrom(value: string | null | undefined, url: string): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const db = Number(value);
  if (!Number.isInteger(db) || db < 0) throw new Error(`invalid Redis database in ${redact(url)}`);
  return db;
}

function redact(url: string): string {
  return url.replace(/\/\/([^@/]*)@/, '//***@');
}

/**
 * redisOptionsFromUrl maps `unix:///abs/path/redis.sock[?db=N]` to `{ path }` (with credentials:
 * `unix://[user]:password@localhost/abs/path/redis.sock`, the host is ignored) and
 * `redis[s]://[user[:password]@]host[:port][/db]` to host, port, db and credentials.
 * Other schemes are rejected with an error that never echoes a password.
 */
export function redisOptionsFromUrl(url: string): RedisConnectionOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error(`invalid Redis URL: ${redact(url)}`);
  }
  const credentials: RedisConnectionOptions = {};
  const name = parsed.searchParams.get('name');
  if (name) credentials.connectionName = name;
  if (parsed.username) credentials.username = decodeURIComponent(parsed.username);
  if (parsed.password) credentials.password = decodeURIComponent(parsed.password);

  if (parsed.protocol === 'unix:') {
    const path = decodeURIComponent(parsed.pathname);
    if (!path.startsWith('/'))
      throw new Error(`Redis unix socket path must be absolute: ${redact(url)}`);
    const db = dbFrom(parsed.searchParams.get('db'), url);
    return { path, ...credentials, ...(db === undefined ? {} : { db }) };
  }
  if (parsed.protocol === 'redis:' || parsed.protocol === 'rediss:') {
    const db = dbFrom(parsed.pathname.slice(1) || parsed.searchParams.get('db'), url);
    return {
      host: parsed.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1',
      port: parsed.port ? Number(parsed.port) : 6379,
      ...credentials,
      ...(db === undefined ? {} : { db }),
      ...(parsed.protocol === 'rediss:' ? { tls: {} } : {}),
    };
  }
  throw new Error(`unsupported Redis URL scheme ${parsed.protocol} (use unix:, redis: or rediss:)`);
}
