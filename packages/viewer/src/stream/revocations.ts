import { viewerChannel, type ViewerRevocation } from '@cubicle/control-plane';
import type { Db } from '@cubicle/db';
import type { LiveStreams } from './live-streams.js';

/** Subscriber is the part of an ioredis client in subscriber mode that this needs. */
export interface Subscriber {
  subscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
}

/**
 * listenForRevocations closes this process's streams when any process (API: DELETE of a
 * ticket or a claim; worker: reclaim) announces a revocation. Every API process subscribes, so
 * a stream closes wherever it is open. Malformed messages are ignored.
 */
export async function listenForRevocations(
  subscriber: Subscriber,
  prefix: string,
  streams: LiveStreams,
): Promise<void> {
  const channel = viewerChannel(prefix);
  subscriber.on('message', (from, message) => {
    if (from !== channel) return;
    let event: ViewerRevocation;
    try {
      event = JSON.parse(message) as ViewerRevocation;
    } catch {
      return;
    }
    if (event.kind === 'ticket' && typeof event.ticket_id === 'string')
      streams.closeTicket(
        event.ticket_id,
        event.reason === 'handoff_ended' ? 'handoff_ended' : 'revoked',
      );
    else if (event.kind === 'claim' && typeof event.claim_id === 'string')
      streams.closeClaim(event.claim_id, 'ended');
  });
  await subscriber.subscribe(channel);
}

/**
 * recheckStreams is the safety net under pub/sub (which drops messages while a subscriber
 * reconnects): it reads the state of every ticket with an open stream in one query and closes
 * those revoked, of ended claims, or gone. Run it every few seconds.
 */
export async function recheckStreams(db: Db, streams: LiveStreams): Promise<number> {
  const ids = streams.openTicketIds();
  if (ids.length === 0) return 0;
  const rows = await db.viewerTicket.findMany({
    where: { id: { in: ids } },
    select: { id: true, revokedAt: true, claim: { select: { status: true } } },
  });
  const byId = new Map(rows.map((r) => [r.id, r]));
  let closed = 0;
  for (const id of ids) {
    const row = byId.get(id);
    if (row && row.claim.status !== 'released' && !row.revokedAt) continue;
    streams.closeTicket(id, row?.claim.status === 'released' ? 'ended' : 'revoked');
    closed++;
  }
  return closed;
}
