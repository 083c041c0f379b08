import type { WebSocket } from '@fastify/websocket';

/** Above this much unsent data the sender waits for the client to read. */
const MAX_BUFFERED_BYTES = 1024 * 1024;
const POLL_MS = 10;

/**
 * sendJsonFrames sends each value as one JSON text frame, then waits while more than 1 MiB is
 * still unsent (ws has no drain event), so a slow reader slows its own stream and never grows
 * this process's memory. It returns early once `signal` aborts.
 */
export async function sendJsonFrames(
  socket: WebSocket,
  values: readonly unknown[],
  signal: AbortSignal,
): Promise<void> {
  for (const value of values) socket.send(JSON.stringify(value));
  while (socket.bufferedAmount > MAX_BUFFERED_BYTES && !signal.aborted)
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
}
