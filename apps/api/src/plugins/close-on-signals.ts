import type { FastifyInstance } from 'fastify';

/**
 * closeOnSignals makes SIGTERM/SIGINT one `app.close()`: preClose hooks end live streams with a
 * close frame (viewer WebSockets 1001, run SSE/WebSocket streams), the listener stops accepting
 * and in-flight requests finish, then the onClose hooks close what the app opened in reverse
 * order (queues, Redis, Postgres). The process exits 0 once that is done, 1 when it takes longer
 * than `graceMs` (Kubernetes' terminationGracePeriodSeconds must be longer).
 */
export function closeOnSignals(app: FastifyInstance, options: { graceMs: number }): void {
  let closing: Promise<void> | undefined;
  const shutdown = (signal: NodeJS.Signals) => {
    closing ??= (async () => {
      app.log.info({ signal }, 'shutting down');
      const force = setTimeout(() => {
        app.log.error({ graceMs: options.graceMs }, 'shutdown took too long; exiting');
        process.exit(1);
      }, options.graceMs);
      force.unref();
      // A keep-alive connection busy when the close began turns idle once its response is sent
      // and would hold server.close() for the keep-alive timeout: close such connections as they idle.
      const idleSweep = setInterval(() => app.server.closeIdleConnections(), 100);
      try {
        await app.close();
      } catch (err) {
        app.log.error({ err }, 'shutdown failed');
        process.exit(1);
      }
      clearInterval(idleSweep);
      app.log.info('shut down');
      process.exit(0);
    })();
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
