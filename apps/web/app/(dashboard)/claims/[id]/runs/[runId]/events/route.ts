import { NextResponse } from 'next/server';
import { ApiError } from '../../../../../../../lib/api/http';
import { openRunEvents } from '../../../../../../../lib/api/runs';
import { currentSession } from '../../../../../../../lib/session/current';

const RUN_ID = /^run_[0-9a-hjkmnp-tv-z]{26}$/;

/**
 * GET /claims/{id}/runs/{runId}/events: the run's live events for the dashboard, relayed from
 * the API's SSE stream with the session's key. EventSource reconnects send Last-Event-ID, which
 * is passed on, so the page resumes after the last event it showed.
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ id: string; runId: string }> },
) {
  const { runId } = await params;
  const session = await currentSession();
  if (!session) return new NextResponse('sign in first', { status: 401 });
  if (!RUN_ID.test(runId)) return new NextResponse('not a run id', { status: 400 });
  let upstream: Response;
  try {
    upstream = await openRunEvents(
      session.apiKey,
      runId,
      request.headers.get('last-event-id'),
      request.signal,
    );
  } catch (error) {
    const status = error instanceof ApiError && error.status > 0 ? error.status : 502;
    return new NextResponse(`events unavailable (${status})`, { status });
  }
  if (!upstream.body) return new NextResponse('events unavailable', { status: 502 });
  return new NextResponse(upstream.body, {
    headers: {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      'x-accel-buffering': 'no',
    },
  });
}
