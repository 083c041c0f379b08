// No 'server-only' marker: proxy.ts (outside the React server layer) imports this too.
import {
  ViewerTicketString,
  type ViewerTicketIntrospection,
  type ViewerTicketState,
} from '@cubicle/contract/api';
import { ApiError, cubicleFor } from './http';

/** TicketState: `invalid` is ours (the API answered 401 invalid_ticket: forged, malformed, unknown). */
export type TicketState = ViewerTicketState | 'invalid';

export type TicketInfo = ViewerTicketIntrospection | { state: 'invalid' };

/** introspectTicket asks the API (no key: the ticket is the credential) what a ticket allows now. */
export async function introspectTicket(ticket: string): Promise<TicketInfo> {
  // Not even shaped like a ticket: not worth a round trip.
  if (!ViewerTicketString.safeParse(ticket).success) return { state: 'invalid' };
  try {
    return await cubicleFor(null).viewerTickets.introspect(ticket);
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 400))
      return { state: 'invalid' };
    throw error;
  }
}

/**
 * streamUrlOf returns the WebSocket URL the browser opens: the API's stream_url, with the ticket
 * added should the API ever leave it out.
 */
export function streamUrlOf(info: ViewerTicketIntrospection, ticket: string): string {
  const url = new URL(info.stream_url);
  if (!url.searchParams.has('ticket')) url.searchParams.set('ticket', ticket);
  return url.toString();
}
