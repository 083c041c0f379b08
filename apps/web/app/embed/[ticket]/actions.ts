'use server';

import { introspectTicket, type TicketState } from '../../../lib/api/viewer';

/** ticketState tells the embed page why its stream closed (the ticket is the only credential). */
export async function ticketState(ticket: string): Promise<TicketState | 'unavailable'> {
  try {
    return (await introspectTicket(String(ticket))).state;
  } catch {
    return 'unavailable';
  }
}
