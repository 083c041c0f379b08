import 'server-only';
import { cubicleFor } from './http';

/**
 * openRunEvents opens a run's Server-Sent Events stream on the API with the session's key (the
 * browser never holds it); `lastEventId` resumes after that seq. No timeout: the stream lasts
 * as long as the run, and ends when the browser goes away (`signal`). The relay passes the raw
 * stream on, so this is the SDK's transport (path, key, error envelope) without its iterator.
 */
export function openRunEvents(
  apiKey: string,
  runId: string,
  lastEventId: string | null,
  signal: AbortSignal,
): Promise<Response> {
  return cubicleFor(apiKey).transport.send(
    'streamRunEvents',
    {
      params: { run_id: runId },
      headers: lastEventId ? { 'last-event-id': lastEventId } : {},
    },
    { signal, timeoutMs: Infinity, retry: false },
    'text/event-stream',
  );
}
