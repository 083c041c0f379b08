import type { Readable } from 'node:stream';

/**
 * collectOutput keeps the first `maxBytes` of a stream and keeps reading (and dropping) the
 * rest, so a chatty program is never blocked on a full pipe and its output is flagged as cut.
 */
export function collectOutput(stream: Readable, maxBytes: number) {
  const chunks: Buffer[] = [];
  let kept = 0;
  let truncated = false;
  stream.on('data', (chunk: Buffer) => {
    const room = maxBytes - kept;
    if (chunk.length > room) truncated = true;
    if (room <= 0) return;
    const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
    chunks.push(part);
    kept += part.length;
  });
  stream.on('error', () => undefined);
  return {
    result: (encoding: 'utf8' | 'base64') => ({
      text: Buffer.concat(chunks).toString(encoding),
      truncated,
    }),
  };
}
