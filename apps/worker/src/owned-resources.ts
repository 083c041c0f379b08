import type { Logger } from 'pino';

interface Owned {
  name: string;
  close: () => Promise<unknown> | unknown;
}

/**
 * OwnedResources is the worker's counterpart of the API's Fastify onClose hooks: whatever main.ts
 * opens is registered here with its close the moment it exists, and close() runs the closes in
 * reverse order of opening (job workers stop taking jobs and finish the running ones before the
 * queues, Redis and Postgres they use go away). Each close is logged as `{ closed: name }`; one
 * failing is logged and the rest still run.
 */
export class OwnedResources {
  private readonly owned: Owned[] = [];
  private closing: Promise<void> | undefined;

  constructor(private readonly log: Logger) {}

  /** own registers `resource` with its close and returns it. */
  own<T>(name: string, resource: T, close: (resource: T) => Promise<unknown> | unknown): T {
    if (this.closing) throw new Error(`${name} opened while closing`);
    this.owned.push({ name, close: () => close(resource) });
    return resource;
  }

  /** close closes everything owned, newest first; later calls wait for the first one. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const { name, close } of this.owned.toReversed()) {
        try {
          await close();
          this.log.info({ closed: name }, `${name} closed`);
        } catch (err) {
          this.log.error({ err, resource: name }, `closing ${name} failed`);
        }
      }
    })();
    return this.closing;
  }
}

/**
 * closeOnSignals makes SIGTERM/SIGINT one close: `beforeClose` (the health endpoint reports
 * not-ready), every owned resource in reverse order, then `afterClose` (the health endpoint
 * itself, which answers probes through the drain); exit 0 once done, 1 when it takes longer than
 * `graceMs` (terminationGracePeriodSeconds must be longer).
 */
export function closeOnSignals(
  resources: OwnedResources,
  log: Logger,
  options: {
    graceMs: number;
    beforeClose?: () => void;
    afterClose?: () => Promise<unknown> | undefined;
  },
): void {
  let isClosing = false;
  const shutdown = (signal: NodeJS.Signals) => {
    if (isClosing) return;
    isClosing = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => {
      log.error({ graceMs: options.graceMs }, 'shutdown took too long; exiting');
      process.exit(1);
    }, options.graceMs).unref();
    options.beforeClose?.();
    void resources.close().then(async () => {
      await options.afterClose?.();
      log.info('shut down');
      process.exit(0);
    });
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
}
