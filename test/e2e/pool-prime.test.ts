/* eslint-disable @typescript-eslint/no-explicit-any -- response bodies are read loosely here; the API validates them against the contract. */
import { readdirSync, readFileSync } from 'node:fs';
import { PoolPrime } from '@cubicle/contract/api';
import { open, parseKeyring, primeDesktop, sandboxGuestClient } from '@cubicle/control-plane';
import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';

// A page every Debian system has (base-passwd is Essential) and a local sandbox can read: its
// /usr is the host's, read-only. A page served by the test on the host's loopback cannot be
// used: a local sandbox has its own network namespace with only its own loopback.
const PAGE = 'file:///usr/share/doc/base-passwd/users-and-groups.html';
const PAGE_TITLE = 'Users and Groups in the Debian System';
const PRIME = {
  apps: [{ app: 'browser', url: PAGE, wait_for: { kind: 'window_title', contains: PAGE_TITLE } }],
  timeout_seconds: 90,
};

/**
 * hostPidOf finds, on this machine, the process a sandbox's guest knows as `pid` (its PID
 * namespace's number): the process in the sandbox's cgroup (`…/cubicle/<scope>-<sandbox id>`)
 * whose NSpid ends in that number.
 */
function hostPidOf(sandboxId: string, pid: number): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const nspid = /^NSpid:\s+(.*)$/m.exec(readFileSync(`/proc/${entry}/status`, 'utf8'))?.[1];
      if (!nspid || Number(nspid.trim().split(/\s+/).at(-1)) !== pid) continue;
      if (readFileSync(`/proc/${entry}/cgroup`, 'utf8').includes(sandboxId)) return Number(entry);
    } catch {
      /* gone meanwhile, or not readable */
    }
  }
  return null;
}

/**
 * memoryMbOf reads a local sandbox's memory use from its cgroup (`…/cubicle/<scope>-<sandbox id>`,
 * found through any of its processes): cgroup v1 `memory.usage_in_bytes` (page cache and its
 * tmpfs included) or v2 `memory.current`.
 */
function memoryMbOf(sandboxId: string): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const lines = readFileSync(`/proc/${entry}/cgroup`, 'utf8').split('\n');
      const v1 = lines.find((l) => /:memory:/.test(l) && l.includes(sandboxId));
      const v2 = lines.find((l) => l.startsWith('0::') && l.includes(sandboxId));
      const file = v1
        ? `/sys/fs/cgroup/memory${v1.split(':')[2]}/memory.usage_in_bytes`
        : v2
          ? `/sys/fs/cgroup${v2.slice(3)}/memory.current`
          : null;
      if (file) return Math.round(Number(readFileSync(file, 'utf8')) / 2 ** 20);
    } catch {
      /* gone meanwhile */
    }
  }
  return null;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * Primed pools end to end on real desktops: a pool whose warm desktops have Chromium open on a
 * page before any claim; the claim lists that window; a primed app that dies while the desktop
 * waits gets the desktop replaced before a claim can take it; a prime that cannot hold fails
 * the desktop with its reason; a bad prime is a 400 naming the field.
 */
describe('primed pools', () => {
  let s: Stack;
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: s.auth,
    });
  const warmOf = async (pool: string) =>
    (await call('GET', `/v1/pools/${pool}`)).json().counts.warm;
  const figures: Record<string, unknown> = {};

  beforeAll(async () => {
    s = await startStack();
  });
  afterAll(async () => {
    console.log(JSON.stringify({ bench: 'pool-prime', ...figures }));
    await s?.close();
  });

  it('refuses a prime that could never hold, naming the field, and rolls desktops when it changes', async () => {
    const bad = async (prime: unknown) => {
      const res = await call('PUT', '/v1/pools/badspec', { image: 'local', prime });
      expect(res.statusCode).toBe(400);
      expect(res.json().error.code).toBe('validation_failed');
      return res.json().error.details.issues.map((i: any) => i.path);
    };
    expect(await bad({ apps: [{ app: 'terminal', url: 'https://example.com/' }] })).toContain(
      'prime.apps.0.url',
    );
    expect(await bad({ apps: [{ app: 'notepad' }] })).toContain('prime.apps.0.app');
    expect(await bad({ apps: [] })).toContain('prime.apps');
    expect(await bad({ apps: [{ app: 'browser' }, { app: 'browser' }] })).toContain('prime.apps');
    expect(
      await bad({ apps: [{ app: 'browser', wait_for: { kind: 'window_title', contains: '' } }] }),
    ).toContain('prime.apps.0.wait_for.contains');
    expect(await bad({ apps: [{ app: 'browser' }], restore: { profile: 'mine' } })).toContain(
      'prime.restore',
    );

    // No desktops (max 1, none warm): only the spec and its generation are looked at.
    const spec = { image: 'local', autoscaling: { min: 0, initial: 0, max: 1 } };
    const created = await call('PUT', '/v1/pools/spec', spec);
    expect(created.statusCode).toBe(201);
    expect(created.json().prime).toBeNull();
    const primed = await call('PUT', '/v1/pools/spec', { ...spec, prime: PRIME });
    expect(primed.json().prime).toEqual({ ...PRIME, restore: null });
    expect(primed.json().generation).toBe(created.json().generation + 1);
    const again = await call('PUT', '/v1/pools/spec', { ...spec, prime: PRIME });
    expect(again.json().generation).toBe(primed.json().generation);
    const reordered = await call('PUT', '/v1/pools/spec', { ...spec, prime: null });
    expect(reordered.json().generation).toBe(primed.json().generation + 1);
    expect((await call('GET', '/v1/pools/spec')).json().prime).toBeNull();
  });

  it('hands out a desktop with the page open: the claim lists its window, the only one on screen', async () => {
    expect(
      (
        await call('PUT', '/v1/pools/primed', {
          image: 'local',
          autoscaling: { min: 1, initial: 1, max: 2 },
          prime: PRIME,
        })
      ).statusCode,
    ).toBe(201);
    await waitFor(async () => (await warmOf('primed')) === 1, 150_000, 250);
    const started = Date.now();
    const claim = await call('POST', '/v1/pools/primed/claims', { ttl_seconds: 600 });
    figures.primed_claim_ms = Date.now() - started;
    expect(claim.statusCode).toBe(201);
    const windows = claim.json().primed_windows as any[];
    expect(windows).toHaveLength(1);
    expect(windows[0]).toMatchObject({ app: 'browser' });
    expect(windows[0].title).toContain(PAGE_TITLE);
    expect(windows[0].window_id).toBeGreaterThan(0);
    expect(windows[0].pid).toBeGreaterThan(0);
    // Read back the same (GET), as an agent reconnecting would.
    const id = claim.json().id as string;
    expect((await call('GET', `/v1/claims/${id}`)).json().primed_windows).toEqual(windows);

    // The desktop's window list is exactly the primed app's window.
    const listed = (await call('GET', `/v1/claims/${id}/windows`)).json().windows as any[];
    expect(listed.map((w) => w.window_id)).toEqual([windows[0].window_id]);
    // The agent's first call needs no lookup: the window observes by the id the claim gave.
    const observed = await call('POST', `/v1/claims/${id}/observe`, {
      window_id: windows[0].window_id,
      include_screenshot: false,
    });
    expect(observed.statusCode).toBe(200);
    expect(JSON.stringify(observed.json().elements)).toContain(PAGE_TITLE);

    // The screenshot shows no other window: outside the browser's frame, one background colour.
    const shot = await call('GET', `/v1/claims/${id}/screenshot`);
    expect(shot.statusCode).toBe(200);
    const png = PNG.sync.read(shot.rawPayload);
    const g = listed[0].geometry as { x: number; y: number; w: number; h: number };
    const colours = new Set<number>();
    let outside = 0;
    for (let y = 0; y < png.height; y++)
      for (let x = 0; x < png.width; x++) {
        if (x >= g.x && x < g.x + g.w && y >= g.y && y < g.y + g.h) continue;
        const i = (y * png.width + x) * 4;
        colours.add((png.data[i]! << 16) | (png.data[i + 1]! << 8) | png.data[i + 2]!);
        outside++;
      }
    figures.pixels_outside_primed_window = outside;
    expect(colours.size).toBeLessThanOrEqual(1);

    // How long priming took: a primed desktop's start against an unprimed one's, same machine.
    const primedRow = await s.db.sandbox.findUniqueOrThrow({
      where: { id: claim.json().sandbox.id },
    });
    figures.primed_start_ms = primedRow.readyAt!.getTime() - primedRow.createdAt.getTime();
  });

  it('replaces a warm desktop whose primed app died, before a claim can take it', async () => {
    // The pool refilled after the claim above (min 1): that desktop is warm and primed.
    await waitFor(async () => (await warmOf('primed')) === 1, 150_000, 250);
    const pool = await s.db.pool.findFirstOrThrow({ where: { name: 'primed', deletedAt: null } });
    const warm = await s.db.sandbox.findFirstOrThrow({ where: { poolId: pool.id, state: 'warm' } });
    const [window] = warm.primedWindows as { window_id: number; pid: number }[];
    expect(window).toBeDefined();

    // What a check at hand-out would cost: the guest's window list, measured from here.
    const guest = sandboxGuestClient(
      warm.guestEndpoint!,
      open(parseKeyring(s.workerEnv.CUBICLE_KEYRING!), warm.guestTokenCiphertext!, warm.id),
    );
    const listMs: number[] = [];
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      await guest.call('windows.list', undefined, { timeoutMs: 5_000 });
      listMs.push(performance.now() - t);
    }
    figures.guest_windows_list_p50_ms = Number(median(listMs).toFixed(2));
    figures.guest_windows_list_max_ms = Number(Math.max(...listMs).toFixed(2));

    const hostPid = hostPidOf(warm.id, window!.pid);
    expect(hostPid, 'the primed browser process on this machine').not.toBeNull();
    process.kill(hostPid!, 'SIGKILL');
    const killedAt = Date.now();

    await waitFor(
      async () =>
        (await s.db.sandbox.findUniqueOrThrow({ where: { id: warm.id } })).state !== 'warm',
      30_000,
      100,
    );
    figures.replaced_after_kill_ms = Date.now() - killedAt;
    const failed = await s.db.sandbox.findUniqueOrThrow({ where: { id: warm.id } });
    expect(failed.claimedAt).toBeNull();
    // The destroy job may already have moved it on (state_reason `destroyed`); the failure
    // reason, written by the sweep alone and never cleared, says why it left warm.
    expect(['primed_app_exited', 'destroyed']).toContain(failed.stateReason);
    expect(failed.failureReason).toBe('a primed app exited before the claim');

    // Its replacement is primed afresh; the claim gets it, with a live window.
    await waitFor(async () => (await warmOf('primed')) === 1, 150_000, 250);
    const claim = await call('POST', '/v1/pools/primed/claims', { ttl_seconds: 600 });
    expect(claim.statusCode).toBe(201);
    expect(claim.json().sandbox.id).not.toBe(warm.id);
    const id = claim.json().id as string;
    const listed = (await call('GET', `/v1/claims/${id}/windows`)).json().windows as any[];
    expect(listed.map((w) => w.window_id)).toEqual(
      claim.json().primed_windows.map((w: any) => w.window_id),
    );
  });

  it('fails a desktop whose prime cannot hold, with the reason, and never makes it warm', async () => {
    expect(
      (
        await call('PUT', '/v1/pools/badprime', {
          image: 'local',
          autoscaling: { min: 0, initial: 1, max: 1 },
          prime: {
            apps: [
              {
                app: 'browser',
                url: PAGE,
                wait_for: { kind: 'window_title', contains: 'a title this page never has' },
              },
            ],
            timeout_seconds: 8,
          },
        })
      ).statusCode,
    ).toBe(201);
    const pool = await s.db.pool.findFirstOrThrow({ where: { name: 'badprime', deletedAt: null } });
    await waitFor(
      async () =>
        (await s.db.sandbox.count({
          where: { poolId: pool.id, state: { in: ['failed', 'deleted'] } },
        })) > 0,
      120_000,
      250,
    );
    const failed = await s.db.sandbox.findFirstOrThrow({
      where: { poolId: pool.id, state: { in: ['failed', 'deleted'] } },
    });
    expect(failed.stateReason === 'prime_failed' || failed.state === 'deleted').toBe(true);
    expect(failed.readyAt).toBeNull();
    expect(failed.failureReason).toMatch(
      /^prime failed: browser: the window title did not contain "a title this page never has" within 8 s/,
    );
    expect(await warmOf('badprime')).toBe(0);
  });

  it('primes Chromium on a page in seconds, and claims a primed pool as fast as an unprimed one', async () => {
    // Free what the cases above hold: only this case's desktops run while it measures.
    for (const pool of ['primed', 'badprime']) await call('DELETE', `/v1/pools/${pool}`);
    const live = await s.db.claim.findMany({ where: { status: 'active' }, select: { id: true } });
    for (const c of live) await call('DELETE', `/v1/claims/${c.id}`);
    const autoscaling = { min: 0, initial: 3, max: 3 };
    expect((await call('PUT', '/v1/pools/plain', { image: 'local', autoscaling })).statusCode).toBe(
      201,
    );
    expect(
      (
        await call('PUT', '/v1/pools/primed3', {
          image: 'local',
          autoscaling,
          prime: { ...PRIME, timeout_seconds: 150 },
        })
      ).statusCode,
    ).toBe(201);
    await waitFor(
      async () => (await warmOf('plain')) === 3 && (await warmOf('primed3')) === 3,
      300_000,
      500,
    );

    // Priming alone, as the worker does it, timed on a warm unprimed desktop through its guest.
    const plainPool = await s.db.pool.findFirstOrThrow({
      where: { name: 'plain', deletedAt: null },
    });
    const plainWarm = await s.db.sandbox.findMany({
      where: { poolId: plainPool.id, state: 'warm' },
    });
    const keyring = parseKeyring(s.workerEnv.CUBICLE_KEYRING!);
    const target = plainWarm[0]!;
    const guest = sandboxGuestClient(
      target.guestEndpoint!,
      open(keyring, target.guestTokenCiphertext!, target.id),
    );
    const t = performance.now();
    const primedHere = await primeDesktop(
      guest,
      PoolPrime.parse(PRIME),
      AbortSignal.timeout(120_000),
    );
    figures.prime_chromium_on_page_ms = Math.round(performance.now() - t);
    expect(primedHere[0]!.title).toContain(PAGE_TITLE);

    const primedPool = await s.db.pool.findFirstOrThrow({
      where: { name: 'primed3', deletedAt: null },
    });
    const primedWarm = await s.db.sandbox.findFirstOrThrow({
      where: { poolId: primedPool.id, state: 'warm' },
    });
    figures.memory_mb_warm_primed = memoryMbOf(primedWarm.id);
    figures.memory_mb_warm_unprimed = memoryMbOf(plainWarm[1]!.id);

    // Claims alternate between the pools; each answer is one SQL statement either way.
    const ms = { plain: [] as number[], primed3: [] as number[] };
    for (let i = 0; i < 3; i++)
      for (const pool of ['primed3', 'plain'] as const) {
        const started = performance.now();
        const claim = await call('POST', `/v1/pools/${pool}/claims`, { ttl_seconds: 600 });
        ms[pool].push(performance.now() - started);
        expect(claim.statusCode).toBe(201);
        expect(claim.json().primed_windows).toHaveLength(pool === 'plain' ? 0 : 1);
      }
    figures.claim_ms_primed = ms.primed3.map((x) => Number(x.toFixed(1)));
    figures.claim_ms_unprimed = ms.plain.map((x) => Number(x.toFixed(1)));
  });
});
