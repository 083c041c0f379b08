import { NextResponse } from 'next/server';
import { readTimeline, ReplayApiError } from '../../../../lib/api/replay';
import { claimOfToken } from '../claim-of-token';

/** GET /replay/{token}/timeline: the live replay's re-read of the shared claim's timeline. */
export async function GET(_request: Request, { params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const claimId = claimOfToken(token);
  if (!claimId) return new NextResponse('not a replay link', { status: 401 });
  try {
    const timeline = await readTimeline({ bearer: token }, claimId);
    return NextResponse.json(timeline, {
      headers: { 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' },
    });
  } catch (error) {
    const status = error instanceof ReplayApiError ? error.status : 502;
    return new NextResponse(`timeline not available (${status})`, { status });
  }
}
