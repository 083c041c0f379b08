// The embedded postgres under .cubicle/ for one-off commands (`npm run db:migrate`,
// `npm run cubicle`): the running one of `npm start` is adopted and left running; otherwise one
// is started for the command, holding the data-dir lock, and stopped after.
import { join } from 'node:path';
import { ensureDatabase, loadEmbedded, migrateDatabase } from './data.mjs';
import { acquireLock, currentHolder } from './lock.mjs';

/**
 * withEmbeddedDatabase runs `fn(url)` with the URL of the embedded `cubicle` database, created
 * and migrated first. `step(name, fn)` and `log(line)` report progress the caller's way.
 */
export async function withEmbeddedDatabase(root, command, { step, log }, fn) {
  const dataRoot = join(root, '.cubicle');
  const embedded = await loadEmbedded(root);
  const dataDir = join(dataRoot, 'postgres');
  const holder = currentHolder(dataRoot);
  // Any server on the data dir without a live holder is a leftover of a dead supervisor and is
  // restarted under our control.
  const releaseLock = holder ? () => {} : acquireLock(dataRoot, command);
  const reaper = embedded.startReaper();
  try {
    const server = await step('postgres', () =>
      embedded.startPostgres({ dataDir, ifRunning: holder ? 'reuse' : 'restart', log }),
    );
    if (!server.isReused) reaper.watch(server);
    try {
      const url = server.url('cubicle');
      await step('migrations', async () => {
        await ensureDatabase(root, url, log);
        await migrateDatabase(root, url, log);
      });
      return await fn(url);
    } finally {
      if (!server.isReused) await step('stop postgres', () => server.stop());
    }
  } finally {
    reaper.close();
    releaseLock();
  }
}
