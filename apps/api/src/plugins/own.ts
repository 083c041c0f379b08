import type { FastifyInstance } from 'fastify';

/**
 * own makes the app the owner of something it opened: `close` runs in an `onClose` hook, so
 * `app.close()` closes it after the listener stopped and every request finished, and in reverse
 * order of registration (what was opened first, Postgres, closes last). Each close is logged as
 * `{ closed: name }`, the record a rolling update's test reads the shutdown order from.
 */
export function own(app: FastifyInstance, name: string, close: () => Promise<unknown> | unknown) {
  app.addHook('onClose', async () => {
    await close();
    app.log.info({ closed: name }, `${name} closed`);
  });
}
