import type { IncomingMessage } from 'node:http';

/** Bounds on what an answered request may still send before its connection is cut anyway. */
export interface DrainBounds {
  maxBytes: number;
  maxMs: number;
}

/**
 * Generous for a client that started uploading before it was told no (a 10 MB upload on loopback
 * drains in milliseconds), short of letting one hold a connection and a core indefinitely.
 */
export const DEFAULT_DRAIN_BOUNDS: DrainBounds = { maxBytes: 64 * 1024 * 1024, maxMs: 10_000 };

/**
 * drainRequestBody reads and discards what is left of a request's body and resolves true once
 * the whole request has arrived, false when the client sent more than `maxBytes`, took longer than
 * `maxMs`, or went away. An answer sent before the body was read (413 `payload_too_large` is
 * decided on the first bytes, or on Content-Length alone) must wait for this when the connection
 * closes after it: closing a socket with input still unread makes the kernel reset the
 * connection, and a client still sending sees EPIPE or ECONNRESET instead of the answer.
 */
export function drainRequestBody(
  raw: IncomingMessage,
  bounds: DrainBounds = DEFAULT_DRAIN_BOUNDS,
): Promise<boolean> {
  const isWhole = () => raw.complete || raw.readableEnded;
  if (isWhole() || raw.destroyed) return Promise.resolve(isWhole());
  return new Promise((resolve) => {
    let bytes = 0;
    const finish = (isWhole: boolean) => {
      clearTimeout(timer);
      raw.off('data', onData);
      raw.off('end', onEnd);
      raw.off('close', onEnd);
      raw.off('error', onEnd);
      resolve(isWhole);
    };
    const onData = (chunk: Buffer) => {
      bytes += chunk.length;
      if (bytes > bounds.maxBytes) finish(false);
    };
    const onEnd = () => finish(isWhole());
    const timer = setTimeout(() => finish(false), bounds.maxMs);
    raw.on('data', onData);
    raw.on('end', onEnd);
    raw.on('close', onEnd);
    raw.on('error', onEnd);
    // The body parser may have stopped reading at the limit, or never started (Content-Length).
    raw.resume();
  });
}
