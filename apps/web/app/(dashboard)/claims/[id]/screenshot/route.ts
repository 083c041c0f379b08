import { NextResponse } from 'next/server';
import { ApiError, cubicleFor } from '../../../../../lib/api/http';
import { currentSession } from '../../../../../lib/session/current';

const CLAIM_ID = /^clm_[0-9a-hjkmnp-tv-z]{26}$/;

/** GET /claims/{id}/screenshot: the desktop as PNG, fetched with the session's key (never the browser's). */
export async function GET(_request: Request, { params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const session = await currentSession();
  if (!session) return new NextResponse('sign in first', { status: 401 });
  if (!CLAIM_ID.test(id)) return new NextResponse('not a claim id', { status: 400 });
  let png: Uint8Array;
  try {
    png = await cubicleFor(session.apiKey)
      .claims.handle({ id } as never)
      .screenshot({ max_dimension: 1280 });
  } catch (error) {
    const status = error instanceof ApiError && error.status > 0 ? error.status : 502;
    return new NextResponse(`screenshot failed (${status})`, { status });
  }
  return new NextResponse(png as BodyInit, {
    headers: { 'content-type': 'image/png', 'cache-control': 'no-store' },
  });
}
