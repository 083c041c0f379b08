import type { ViewerEvents } from '../context.js';

/**
 * ViewerRevocation names what ended: one ticket (revoked, or its handoff ended) or every ticket of
 * a claim (claim ended).
 */
export type ViewerRevocation =
  | {
      kind: 'ticket';
      ticket_id: string;
      /** Why, when it is not a plain revocation: the handoff the ticket was bound to ended. */
      reason?: 'handoff_ended';
    }
  | { kind: 'claim'; claim_id: string };

/** viewerChannel is the pub/sub channel stream proxies subscribe to. */
export const viewerChannel = (prefix: string) => `${prefix}:viewer:revocations`;

/**
 * publishViewerRevocation tells live streams to close at once. It never throws: the database
 * change (revoked_at, claim status) is already committed and is the truth; a lost message only
 * delays the close until the proxy's periodic re-check of its open streams.
 */
export async function publishViewerRevocation(
  events: ViewerEvents | undefined,
  revocation: ViewerRevocation,
): Promise<void> {
  if (!events) return;
  await events.publisher
    .publish(viewerChannel(events.prefix), JSON.stringify(revocation))
    .catch(() => undefined);
}
