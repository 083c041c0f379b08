import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { Plugin, type PluginName } from './plugin-names.js';

/**
 * routeGroup makes a group of contract routes a named plugin. A group reads the app's connections
 * and mounts authenticated routes, so it depends on the connections and identity plugins (plus
 * `needs`). It is not encapsulated: its routes get the app's hooks, error handler and audit like
 * every other route.
 */
export function routeGroup<Options extends object = Record<never, never>>(
  name: PluginName,
  mount: (app: FastifyInstance, options: Options) => void | Promise<void>,
  needs: PluginName[] = [],
) {
  return fp<Options>(
    async (app, options) => {
      await mount(app, options);
    },
    { name, dependencies: [Plugin.connections, Plugin.identity, ...needs] },
  );
}
