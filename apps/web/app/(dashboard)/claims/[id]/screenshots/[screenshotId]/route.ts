import { NextResponse } from 'next/server';
import { ApiError, cubicleFor } from '../../../../../../lib/api/http';
import { currentSession } from '../../../../../../lib/session/current';

const CLAIM_ID = /^clm_[0-9a-hjkmnp-tv-z]{26}$/;
const SCREENSHOT_ID = /^p[0-9a-zA-Z]{1,31}$/;

/**
 * GET /claims/{id}/screenshots/{screenshotId}: a screenshot an action quoted, as kept by the
 * API, fetched with the session's key (never the browser's) for the timeline's thumbnails.
 */
export async function GET(
  _request: Request,
  { params }: { params: Promise<{ id: string; screenshotId: string }> },
) {
  const { id, screenshotId } = await params;
  const session = await currentSession();
  if (!session) return new NextResponse('sign in first', { status: 401 });
  if (!CLAIM_ID.test(id) || !SCREENSHOT_ID.test(screenshotId))
    return new NextResponse('not a claim or screenshot id', { status: 400 });
  let png: Uint8Array;
  try {
    png = await cubicleFor(session.apiKey)
      .claims.handle({ id } as never)
      .actionScreenshot(screenshotId);
  } catch (error) {
    const status = error instanceof ApiError && error.status > 0 ? error.status : 502;
    return new NextResponse(`screenshot not available (${status})`, { status });
  }
  // A kept screenshot never changes; only this signed-in browser may keep it.
  return new NextResponse(png as BodyInit, {
    headers: { 'content-type': 'image/png', 'cache-control': 'private, max-age=3600' },
  });
}
