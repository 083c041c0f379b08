/** The request header carrying proxy.ts's ticket introspection to the embed page (proxy always overwrites it). */
export const TICKET_INFO_HEADER = 'x-cubicle-ticket-info';
