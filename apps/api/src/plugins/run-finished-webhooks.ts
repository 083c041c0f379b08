import { announceRunsFinished } from '@cubicle/control-plane';
import fp from 'fastify-plugin';
import { Plugin } from './plugin-names.js';

/**
 * runFinishedWebhooksPlugin sends `run.finished` for the runs whose end this process records (a
 * queued run cancelled here ends here), from start-up until the app closes.
 */
export const runFinishedWebhooksPlugin = fp(
  async (app) => {
    const stop = announceRunsFinished(app.resources);
    app.addHook('onClose', async () => stop());
  },
  { name: Plugin.runFinishedWebhooks, dependencies: [Plugin.connections] },
);
