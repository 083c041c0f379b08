import { EGRESS_CHANGED_CHANNEL, EgressChange } from '@cubicle/contract/api';
import type { Subscriber } from '../context.js';
import type { Resources } from '../resources.js';

/** egressChannel is the deployment's channel for policy changes (prefix-scoped like the viewer's). */
export const egressChannel = (prefix: string) => `${prefix}:${EGRESS_CHANGED_CHANNEL}`;

/**
 * publishEgressChange tells every egress point that effective policies may have changed: all of
 * a pool's sandboxes, or one sandbox's. Points reload and reapply within milliseconds. It never
 * throws: the change is committed; a lost message leaves a point on the old policy until its
 * next reload (a point reloads everything after reconnecting).
 */
export async function publishEgressChange(
  deps: Partial<Pick<Resources, 'events'>>,
  change: EgressChange,
): Promise<void> {
  if (!deps.events) return;
  try {
    await deps.events.publisher.publish(egressChannel(deps.events.prefix), JSON.stringify(change));
  } catch {
    // Best effort by design (see above).
  }
}

/**
 * subscribeEgressChanges calls `listener` with each change published under `prefix`; malformed
 * messages are skipped. `subscriber` must be a connection dedicated to subscriptions.
 */
export async function subscribeEgressChanges(
  subscriber: Subscriber,
  prefix: string,
  listener: (change: EgressChange) => void,
): Promise<void> {
  const channel = egressChannel(prefix);
  subscriber.on('message', (from, message) => {
    if (from !== channel) return;
    let parsed: ReturnType<typeof EgressChange.safeParse>;
    try {
      parsed = EgressChange.safeParse(JSON.parse(message));
    } catch {
      return;
    }
    if (parsed.success) listener(parsed.data);
  });
  await subscriber.subscribe(channel);
}
