// The last word on local desktops when `npm start` stops: whatever desktop of this installation
// still runs (started by a worker that crashed, or adopted by one and never stopped) is destroyed
// through the local backend, so nothing of the stack outlives Ctrl-C.
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * stopInstallationDesktops destroys every desktop the local backend lists for the installation
 * whose database is `databaseUrl` (its scope), through the backend's own list()/destroy(), and
 * answers how many it destroyed. Call it after the worker stopped, so none starts behind it.
 */
export async function stopInstallationDesktops(root, databaseUrl) {
  const { createLocalBackend, localBackendScope } = await import(
    pathToFileURL(join(root, 'packages/backends/dist/index.js')).href
  );
  const backend = createLocalBackend({ scope: localBackendScope(databaseUrl) });
  const ids = await backend.list();
  // A few at a time: each destroy waits for its process group to go.
  const queue = [...ids];
  const failures = [];
  await Promise.all(
    Array.from({ length: Math.min(4, queue.length) }, async () => {
      for (let id = queue.shift(); id; id = queue.shift()) {
        await backend.destroy(id).catch((error) => failures.push(`${id}: ${error.message}`));
      }
    }),
  );
  if (failures.length > 0)
    throw new Error(`could not stop ${failures.length} desktop(s): ${failures.join('; ')}`);
  return ids.length;
}
