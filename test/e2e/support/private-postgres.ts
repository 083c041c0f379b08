// A Postgres of a test's own, for tests that stop and restart the database: the harness's shared
// server serves every other test file and must stay up.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgres, startReaper, type PostgresServer } from '@cubicle/embedded';
import { copyDatabase, createTemplate, withDatabase } from '../../harness/postgres-admin.js';

export interface PrivatePostgres {
  /** The migrated database `cubicle`; the same URL across stop() and start(). */
  url: string;
  /** Fast shutdown: clients see their connections cut and new ones refused. */
  stop(): Promise<void>;
  /** Starts it again on the same data directory and socket. */
  start(): Promise<void>;
  /** Stops it for good and removes its files. */
  close(): Promise<void>;
}

/** startPrivatePostgres starts a throwaway Postgres with a migrated `cubicle` database. */
export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const dir = mkdtempSync(join(tmpdir(), 'cubicle-private-pg-'));
  // The postgres user must be able to pass through to its data dir (mkdtemp makes 0700).
  chmodSync(dir, 0o711);
  const dataDir = join(dir, 'data');
  // If the test process dies, the reaper stops the server and removes its files.
  const reaper = startReaper();
  reaper.removeOnExit(dir);
  const boot = async () => {
    const started = await startPostgres({ dataDir, isDurable: false });
    reaper.watch(started);
    return started;
  };
  let server: PostgresServer | undefined = await boot();
  try {
    await createTemplate(server.adminUrl, 'cubicle_template', () => undefined);
    await copyDatabase(server.adminUrl, 'cubicle_template', 'cubicle');
  } catch (err) {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    reaper.close();
    throw err;
  }
  const url = withDatabase(server.adminUrl, 'cubicle');
  return {
    url,
    async stop() {
      if (server) reaper.unwatch(server.pid);
      await server?.stop();
      server = undefined;
    },
    async start() {
      server ??= await boot();
      if (withDatabase(server.adminUrl, 'cubicle') !== url)
        throw new Error('the restarted postgres answers at another address');
    },
    async close() {
      await server?.stop();
      server = undefined;
      rmSync(dir, { recursive: true, force: true });
      reaper.close();
    },
  };
}
