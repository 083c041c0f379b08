import { GuestErrorResponse, GuestRoutes } from '@cubicle/contract/guest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHollowBackend } from './hollow-backend.js';
import { startHollowGuests, type HollowGuests } from './hollow-guests.js';

const sandboxA = 'sbx_01h00000000000000000000000';
const sandboxB = 'sbx_01h00000000000000000000001';

describe('hollow guests (load-test sandboxes)', () => {
  let hollow: HollowGuests;
  beforeAll(async () => {
    hollow = await startHollowGuests({ delayMs: 5 });
  });
  afterAll(() => hollow.close());

  const guest = (token: string, method: string, path: string, body?: unknown) =>
    fetch(`${hollow.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it('serves many sandboxes from one process with contract-valid answers and their own tokens', async () => {
    const backend = createHollowBackend({ url: hollow.url, adminToken: hollow.adminToken });
    const signal = new AbortController().signal;
    const input = {
      tenantId: 'ten_x',
      poolId: 'pool_x',
      image: 'i',
      cpuMillis: 1,
      memoryMb: 1,
      env: {},
      signal,
    };
    const a = await backend.provision({ ...input, sandboxId: sandboxA });
    const b = await backend.provision({ ...input, sandboxId: sandboxB });
    expect(a.guestUrl).toBe(hollow.url);
    expect(a.guestToken).not.toBe(b.guestToken);
    expect((await backend.list()).sort()).toEqual([sandboxA, sandboxB]);

    const health = await guest('', 'GET', GuestRoutes.healthz.path);
    expect(GuestRoutes.healthz.response.parse(await health.json()).versions.driver).toBe('hollow');
    const list = await guest(a.guestToken, 'GET', GuestRoutes['windows.list'].path);
    expect(GuestRoutes['windows.list'].response.parse(await list.json())).toEqual({ windows: [] });
    const started = Date.now();
    const run = await guest(b.guestToken, 'POST', GuestRoutes['shell.run'].path, {
      argv: ['true'],
      run_id: 'r1',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(4); // the configured delay
    expect(GuestRoutes['shell.run'].response.parse(await run.json())).toMatchObject({
      run_id: 'r1',
      exit_code: 0,
    });
    // A claim's secrets are accepted (the worker delivers them before a claim's first call) and
    // only their names answered.
    const secrets = await guest(a.guestToken, 'POST', GuestRoutes['secrets.write'].path, {
      secrets: [{ name: 'API_TOKEN', value: 'not-kept' }],
      exclusive: true,
    });
    const written = GuestRoutes['secrets.write'].response.parse(await secrets.json());
    expect(written.names).toEqual(['API_TOKEN']);
    expect(JSON.stringify(written)).not.toContain('not-kept');
    const other = await guest(a.guestToken, 'POST', GuestRoutes.observe.path, { window_id: 1 });
    expect(other.status).toBe(400);
    expect(GuestErrorResponse.parse(await other.json()).error.code).toBe('validation_failed');

    await backend.destroy(sandboxA);
    expect(await backend.list()).toEqual([sandboxB]);
    expect((await guest(a.guestToken, 'GET', GuestRoutes['windows.list'].path)).status).toBe(401);
    expect((await guest('nope', 'GET', GuestRoutes['windows.list'].path)).status).toBe(401);
    expect((await guest('nope', 'GET', '/hollow/sandboxes')).status).toBe(401);
  });
});
