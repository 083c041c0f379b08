import { NextResponse } from 'next/server';
import { readTimeline, ReplayApiError } from '../../../../../../lib/api/replay';
import { currentSession } from '../../../../../../lib/session/current';

const CLAIM_ID = /^clm_[0-9a-hjkmnp-tv-z]{26}$/;

/** GET /claims/{id}/replay/timeline: the live replay's re-read of the timeline (session's key). */
export async function GET(_request: Request, { params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const session = await currentSession();
  if (!session) return new NextResponse('sign in first', { status: 401 });
  if (!CLAIM_ID.test(id)) return new NextResponse('not a claim id', { status: 400 });
  try {
    const timeline = await readTimeline({ bearer: session.apiKey }, id);
    return NextResponse.json(timeline, { headers: { 'cache-control': 'no-store' } });
  } catch (error) {
    const status = error instanceof ReplayApiError ? error.status : 502;
    return new NextResponse(`timeline not available (${status})`, { status });
  }
}
