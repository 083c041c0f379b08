import type { Db } from './client.js';
import { sqlOf, statement } from './sql.js';

const ping = statement<never, []>('cubicle_ping_v1', 'SELECT 1');

/**
 * pingDatabase runs the smallest statement there is: the health probes' and the start-up's proof
 * that the database answers. It throws when it does not.
 */
export async function pingDatabase(db: Db): Promise<void> {
  await sqlOf(db).exec(ping);
}
