import { redisOptionsFromUrl } from '@cubicle/config';
import { Redis, type RedisOptions } from 'ioredis';

export function createRedis(url: string, extra: RedisOptions = {}): Redis {
  return new Redis({ ...redisOptionsFromUrl(url), lazyConnect: true, ...extra });
}
