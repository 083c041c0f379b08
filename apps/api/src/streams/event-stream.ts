import type { FastifyReply, FastifyRequest } from 'fastify';

/** SSE comment lines keep idle streams open through proxies. */
const KEEPALIVE_MS = 15_000;

/** EventStream is one open Server-Sent Events response. */
export interface EventStream {
  /** Aborted when the client goes away or the server starts shutting down. */
  signal: AbortSignal;
  /** write sends text and, when the client reads slower than we write, waits for it to drain. */
  write(text: string): Promise<void>;
  /** end stops the keepalives and finishes the response. */
  end(): void;
}

/**
 * openEventStream takes the reply over as a Server-Sent Events stream: headers that keep proxies
 * from buffering or caching it, a comment line every 15 s while idle, and a signal that aborts
 * when the client leaves or `closing` aborts (shutdown). The caller writes frames and calls end.
 */
export function openEventStream(
  request: FastifyRequest,
  reply: FastifyReply,
  closing: AbortSignal,
): EventStream {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    'x-request-id': request.id,
  });
  res.flushHeaders();
  const gone = new AbortController();
  const stop = () => gone.abort();
  res.on('close', stop);
  closing.addEventListener('abort', stop, { once: true });
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  return {
    signal: gone.signal,
    async write(text) {
      if (res.write(text) || gone.signal.aborted) return;
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          gone.signal.removeEventListener('abort', done);
          resolve();
        };
        res.on('drain', done);
        gone.signal.addEventListener('abort', done);
      });
    },
    end() {
      clearInterval(keepalive);
      closing.removeEventListener('abort', stop);
      res.end();
    },
  };
}

/** sseFrame writes one event; `id` lets a reconnecting EventSource resume after it. */
export function sseFrame(id: number | string, event: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}
