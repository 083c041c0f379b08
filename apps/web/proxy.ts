import { NextResponse, type NextRequest } from 'next/server';
import { introspectReplayLink } from './lib/api/replay';
import { introspectTicket, type TicketInfo } from './lib/api/viewer';
import { embedCsp } from './lib/csp';
import { TICKET_INFO_HEADER } from './lib/ticket-header';

/**
 * proxy runs before /embed/{ticket}: it asks the API what the ticket allows and answers with the
 * CSP frame-ancestors of the ticket's tenant — a header only a response can carry, hence here
 * and not in the page. The page gets the same answer through a request header, so a page load
 * costs one introspection.
 */
export async function proxy(request: NextRequest) {
  if (request.nextUrl.pathname.startsWith('/replay/')) return replayProxy(request);
  const ticket = decodeURIComponent(request.nextUrl.pathname.split('/')[2] ?? '');
  let info: TicketInfo | { state: 'unavailable' };
  try {
    info = await introspectTicket(ticket);
  } catch {
    info = { state: 'unavailable' };
  }
  const forwarded = new Headers(request.headers);
  forwarded.set(TICKET_INFO_HEADER, Buffer.from(JSON.stringify(info)).toString('base64url'));
  const response = NextResponse.next({ request: { headers: forwarded } });
  response.headers.set(
    'content-security-policy',
    embedCsp('embed_origins' in info ? info.embed_origins : []),
  );
  // The ticket is in the URL: never send it on as a referrer, never cache the page.
  response.headers.set('referrer-policy', 'no-referrer');
  response.headers.set('cache-control', 'no-store');
  response.headers.set('x-robots-tag', 'noindex');
  return response;
}

/**
 * replayProxy gives a shared replay page (/replay/{token}) the same frame-ancestors as the live
 * view, from the link's tenant; the page itself asks the API what the link shows.
 */
async function replayProxy(request: NextRequest) {
  const token = decodeURIComponent(request.nextUrl.pathname.split('/')[2] ?? '');
  let origins: string[] = [];
  try {
    const info = await introspectReplayLink(token);
    if ('embed_origins' in info) origins = info.embed_origins;
  } catch {
    // Unreachable API: only 'self' may frame the page's error message.
  }
  const response = NextResponse.next();
  response.headers.set('content-security-policy', embedCsp(origins));
  response.headers.set('referrer-policy', 'no-referrer');
  response.headers.set('cache-control', 'no-store');
  response.headers.set('x-robots-tag', 'noindex');
  return response;
}

export const config = { matcher: ['/embed/:ticket', '/replay/:token'] };
