// `npm run db:migrate`: migrate DATABASE_URL when given, else the embedded postgres under
// .cubicle/ (the running one of `npm start`, or one started just for this and stopped after).
import { join } from 'node:path';
import { ensureDatabase, loadEmbedded, migrateDatabase } from './data.mjs';
import { acquireLock, currentHolder } from './lock.mjs';
import { dim, say, step } from './ui.mjs';

export async function migrateCommand(root) {
  const log = (line) => say(dim(line));
  if (process.env.DATABASE_URL) {
    await step('migrate DATABASE_URL', () => migrateDatabase(root, process.env.DATABASE_URL, log));
    return;
  }
  const dataRoot = join(root, '.cubicle');
  const embedded = await loadEmbedded(root);
  const dataDir = join(dataRoot, 'postgres');
  const holder = currentHolder(dataRoot);
  // While `npm start` runs, its postgres is adopted (and left running); otherwise any server on
  // the data dir is a leftover of a dead supervisor and is restarted under our control.
  const releaseLock = holder ? () => {} : acquireLock(dataRoot, 'npm run db:migrate');
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
    } finally {
      if (!server.isReused) await step('stop postgres', () => server.stop());
    }
  } finally {
    reaper.close();
    releaseLock();
  }
}
