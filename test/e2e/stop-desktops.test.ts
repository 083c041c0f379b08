import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stopInstallationDesktops } from '../../scripts/lib/stop-desktops.mjs';
import { startE2eBackend } from './support/sandbox-backend.js';
import { startStack, waitFor, type Stack } from './support/stack.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

/**
 * `npm start`'s stop path (issue 11 §8): desktops a crashed worker left running belong to no
 * live process, yet stopping the stack must leave none of this installation's. The stop path
 * calls stopInstallationDesktops after the worker stopped; here the worker is killed with
 * SIGKILL first, as a crash would.
 */
describe('stopping the stack after a worker crash', () => {
  let s: Stack;

  beforeAll(async () => {
    s = await startStack();
  });
  afterAll(async () => s?.close());

  it('stops every desktop of the installation, however it was started', async () => {
    const put = await s.api.inject({
      method: 'PUT',
      url: '/v1/pools/leftover',
      headers: s.auth,
      payload: { image: 'local', autoscaling: { min: 0, initial: 2, max: 2 } },
    });
    expect(put.statusCode).toBe(201);
    await waitFor(
      async () =>
        (await s.api.inject({ method: 'GET', url: '/v1/pools/leftover', headers: s.auth })).json()
          .counts.warm === 2,
      120_000,
      250,
    );
    await s.worker.kill9();
    // A desktop no worker ever knew of (a worker that died mid-provisioning) is ours too. Planted
    // after the crash: a live worker's sweep destroys such a desktop, even half-started.
    const planted = await s.backend.plantOrphan();
    // Another installation's desktop (another database, so another scope) on the same machine.
    const other = await startE2eBackend('local', `${s.workerEnv.DATABASE_URL}-other`);
    const foreign = await other.plantOrphan();
    const before = await s.backend.liveSandboxIds();
    expect(before.size).toBe(3);
    expect(before.has(planted)).toBe(true);

    expect(await stopInstallationDesktops(root, s.workerEnv.DATABASE_URL)).toBe(3);
    expect([...(await s.backend.liveSandboxIds())]).toEqual([]);
    // Idempotent: a second stop finds nothing.
    expect(await stopInstallationDesktops(root, s.workerEnv.DATABASE_URL)).toBe(0);

    // The other installation's desktop is not ours to stop.
    expect(await other.holds(foreign)).toBe(true);
    await other.loseSandbox(foreign);
    await s.restartWorker();
  });
});
