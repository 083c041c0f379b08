import 'server-only';
import { redisOptionsFromUrl } from '@cubicle/config';
import { Redis } from 'ioredis';
import { getEnv } from './env';

// One connection per server process; kept on globalThis so dev reloads do not leak clients.
const holder = globalThis as typeof globalThis & { cubicleWebRedis?: Redis };

/** redis returns the process's Redis client (sessions only). */
export function redis(): Redis {
  holder.cubicleWebRedis ??= new Redis({
    ...redisOptionsFromUrl(getEnv().REDIS_URL),
    maxRetriesPerRequest: 2,
    connectTimeout: 5_000,
  });
  return holder.cubicleWebRedis;
}
