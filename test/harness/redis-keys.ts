// Deleting one namespace's keys: SCAN by prefix, UNLINK in batches.
import { Redis } from 'ioredis';
import { redisOptionsFromUrl } from '@cubicle/config';

/** deleteKeysWithPrefix removes every key starting with `prefix` and returns how many it removed. */
export async function deleteKeysWithPrefix(url: string, prefix: string): Promise<number> {
  if (!/^[\w:.-]+$/.test(prefix))
    throw new Error(`refusing to delete by an unusual prefix: ${prefix}`);
  const client = new Redis({
    ...redisOptionsFromUrl(url),
    lazyConnect: true,
    maxRetriesPerRequest: 3,
  });
  await client.connect();
  let removed = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) removed += await client.unlink(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
  return removed;
}
