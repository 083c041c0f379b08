import { NextResponse } from 'next/server';
import { proxyMedia } from '../../../../lib/api/replay';
import { claimOfToken } from '../claim-of-token';

/** GET /replay/{token}/media: the shared claim's video with Range; the token is the credential. */
export async function GET(request: Request, { params }: { params: Promise<{ token: string }> }) {
  const { token } = await params;
  const claimId = claimOfToken(token);
  if (!claimId) return new NextResponse('not a replay link', { status: 401 });
  const response = await proxyMedia({ bearer: token }, claimId, request);
  response.headers.set('referrer-policy', 'no-referrer');
  return response;
}
