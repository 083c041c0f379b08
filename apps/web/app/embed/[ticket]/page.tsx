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
 * The embeddable viewer: the desktop alone, scaled to the frame, or a plain state message. It is
 * view-only whatever the ticket, except with `?mode=control` for a control ticket bound to a
 * handoff (a human taking over from an agent): then keyboard and pointer go to the desktop, for
 * as long as the handoff lasts (the server closes the stream when it ends).
 */
export default async function EmbedPage({
  params,
  searchParams,
}: {
  params: Promise<{ ticket: string }>;
  searchParams: Promise<{ mode?: string | string[] }>;
}) {
  const { ticket } = await params;
  const { mode } = await searchParams;
  const info = await infoFromProxy();
  if (info.state !== 'active') return <EmbedViewer ticket={ticket} initialState={info.state} />;
  return (
    <EmbedViewer
      ticket={ticket}
      initialState="active"
      streamUrl={streamUrlOf(info, ticket)}
      expiresAt={info.expires_at}
      isControl={mode === 'control' && info.mode === 'control' && Boolean(info.handoff_id)}
    />
  );
}
