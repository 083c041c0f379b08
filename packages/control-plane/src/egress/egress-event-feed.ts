import { EgressEvent } from '@cubicle/contract/api';
import type { Subscriber } from '../context.js';
import type { Resources } from '../resources.js';

/** The deployment's channel carrying every claim's egress event lines (filtered per stream). */
export const egressEventsChannel = (prefix: string) => `${prefix}:egress:events`;

/**
 * publishEgressEvent pushes a line (new, or its count raised) to the live streams of its claim in
 * every API process. Best effort: the event page is the record.
 */
export async function publishEgressEvent(
  deps: Partial<Pick<Resources, 'events'>>,
  event: EgressEvent,
): Promise<void> {
  if (!deps.events) return;
  await deps.events.publisher
    .publish(egressEventsChannel(deps.events.prefix), JSON.stringify(event))
    .catch(() => undefined);
}

/**
 * EgressEventFeed is one process's subscription to egress event lines, fanned out to the streams
 * following each claim: one Redis subscription however many streams are open.
 */
export class EgressEventFeed {
  private readonly followers = new Map<string, Set<(event: EgressEvent) => void>>();
  private started: Promise<void> | null = null;

  constructor(
    private readonly subscriber: Subscriber,
    private readonly prefix: string,
  ) {}

  /** follow calls `listener` with each line of the claim until the returned stop is called. */
  async follow(claimId: string, listener: (event: EgressEvent) => void): Promise<() => void> {
    this.started ??= this.start();
    await this.started;
    const set = this.followers.get(claimId) ?? new Set();
    set.add(listener);
    this.followers.set(claimId, set);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.followers.delete(claimId);
    };
  }

  private async start(): Promise<void> {
    const channel = egressEventsChannel(this.prefix);
    this.subscriber.on('message', (from, message) => {
      if (from !== channel) return;
      let parsed: ReturnType<typeof EgressEvent.safeParse>;
      try {
        parsed = EgressEvent.safeParse(JSON.parse(message));
      } catch {
        return;
      }
      if (!parsed.success) return;
      for (const listener of this.followers.get(parsed.data.claim_id) ?? []) listener(parsed.data);
    });
    await this.subscriber.subscribe(channel);
  }
}
