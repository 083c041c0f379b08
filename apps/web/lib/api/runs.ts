import 'server-only';
import { getEnv } from '../env';

/**
 * openRunEvents opens a run's Server-Sent Events stream on the API with the session's key (the
 * browser never holds it); `lastEventId` resumes after that seq. No timeout: the stream lasts
 * as long as the run, and ends when the browser goes away (`signal`).
 */
export function openRunEvents(
  apiKey: string,
  runId: string,
  lastEventId: string | null,
  signal: AbortSignal,
): Promise<Response> {
  return fetch(`${getEnv().CUBICLE_API_URL}/v1/runs/${runId}/events/stream`, {
    headers: {
      authorization: `Bearer ${apiKey}`,
      accept: 'text/event-stream',
      ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
    },
    cache: 'no-store',
    signal,
  });
}
