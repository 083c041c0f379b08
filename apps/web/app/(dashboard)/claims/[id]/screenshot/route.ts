import { NextResponse } from 'next/server';
import { rawCall } from '../../../../../lib/api/http';
import { currentSession } from '../../../../../lib/session/current';

const CLAIM_ID = /^clm_[0-9a-hjkmnp-tv-z]{26}$/;

/** GET /claims/{id}/screenshot: the desktop as PNG, fetched with the session's key (never the browser's). */
export async function GET(_request: Request, { params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const session = await currentSession();
  if (!session) return new NextResponse('sign in first', { status: 401 });
  if (!CLAIM_ID.test(id)) return new NextResponse('not a claim id', { status: 400 });
  const upstream = await rawCall(session.apiKey, `/v1/claims/${id}/screenshot?max_dimension=1280`);
  if (!upstream.ok) {
    return new NextResponse(`screenshot failed (${upstream.status})`, { status: upstream.status });
  }
  return new NextResponse(upstream.body, {
    headers: { 'content-type': 'image/png', 'cache-control': 'no-store' },
  });
}
