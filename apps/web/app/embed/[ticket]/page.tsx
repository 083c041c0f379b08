import type { Metadata } from 'next';
import { headers } from 'next/headers';
import { streamUrlOf, type TicketInfo } from '../../../lib/api/viewer';
import { TICKET_INFO_HEADER } from '../../../lib/ticket-header';
import { EmbedViewer } from './embed-viewer';

export const dynamic = 'force-dynamic';
export const metadata: Metadata = { title: 'Cubicle live view', robots: 'noindex' };

type Info = TicketInfo | { state: 'unavailable' };

/** infoFromProxy reads what proxy.ts learnt from the API for this very request. */
async function infoFromProxy(): Promise<Info> {
  const raw = (await headers()).get(TICKET_INFO_HEADER);
  if (!raw) return { state: 'unavailable' };
  try {
    return JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as Info;
  } catch {
    return { state: 'unavailable' };
  }
}

/**
 * The embeddable viewer: the desktop alone, scaled to the frame, view-only whatever the ticket
 * (embedding is for watching; control happens in the dashboard), or a plain state message.
 */
export default async function EmbedPage({ params }: { params: Promise<{ ticket: string }> }) {
  const { ticket } = await params;
  const info = await infoFromProxy();
  if (info.state !== 'active') return <EmbedViewer ticket={ticket} initialState={info.state} />;
  return (
    <EmbedViewer
      ticket={ticket}
      initialState="active"
      streamUrl={streamUrlOf(info, ticket)}
      expiresAt={info.expires_at}
    />
  );
}
