import { endSession } from '../../lib/session/current';

/** GET /session-expired: the API refused the session's key; forget the session, then sign in again. */
export async function GET() {
  await endSession();
  // A relative Location: behind `next start`, request.url names localhost, not the host the
  // browser used, and the session cookie belongs to the latter.
  return new Response(null, { status: 303, headers: { location: '/login?expired=1' } });
}
