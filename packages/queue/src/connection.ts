import { redisOptionsFromUrl } from '@cubicle/config';
import { Redis } from 'ioredis';

/**
 * createQueueConnection opens the ioredis connection BullMQ needs: `maxRetriesPerRequest: null`
 * so blocking commands are not cut short while Redis restarts.
 */
export function createQueueConnection(redisUrl: string): Redis {
  return new Redis({ ...redisOptionsFromUrl(redisUrl), maxRetriesPerRequest: null });
}
