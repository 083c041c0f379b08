import { NextResponse } from 'next/server';
import { proxyMedia } from '../../../../../../lib/api/replay';
import { currentSession } from '../../../../../../lib/session/current';

const CLAIM_ID = /^clm_[0-9a-hjkmnp-tv-z]{26}$/;

/** GET /claims/{id}/replay/media: the claim's video with Range, fetched with the session's key. */
export async function GET(request: Request, { params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const session = await currentSession();
  if (!session) return new NextResponse('sign in first', { status: 401 });
  if (!CLAIM_ID.test(id)) return new NextResponse('not a claim id', { status: 400 });
  return proxyMedia({ bearer: session.apiKey }, id, request);
}
