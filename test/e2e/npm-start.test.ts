import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localBackendScope } from '@cubicle/backends';
import { listDesktopIds } from '@cubicle/driver-guest';
import { Redis } from 'ioredis';
import pg from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { RawRfbClient } from './support/rfb-client.js';
import { waitFor } from './support/stack.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const startScript = join(repo, 'scripts/lib/start.mjs');

/** A checkout of its own for `npm start` (its .cubicle/ apart from the real one): links to the build. */
function makeRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'cubicle-npm-start-'));
  // The postgres user must be able to pass through to .cubicle/postgres.
  chmodSync(root, 0o711);
  for (const entry of ['apps', 'packages', 'node_modules', 'package.json'])
    symlinkSync(join(repo, entry), join(root, entry));
  return root;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

interface Started {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/** startCubicle runs START_PLAN as `npm start` does after its bootstrap, in a process of its own. */
function startCubicle(root: string, env: Record<string, string>): Started {
  const { DATABASE_URL: _d, REDIS_URL: _r, ...inherited } = process.env;
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `const { startCubicle } = await import(${JSON.stringify(startScript)}); process.exitCode = await startCubicle(${JSON.stringify(root)});`,
    ],
    { cwd: root, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return { child, output: () => out, exited };
}

/** The pid of the app the stack in `root` runs now whose command line holds `marker`. */
function appPid(root: string, marker: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      // Each app reaches the embedded servers through sockets under <root>/.cubicle/.
      if (cmd.includes(marker) && environ.includes(`${root}/.cubicle/`)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

const workerPid = (root: string) => appPid(root, 'apps/worker/dist/main.js');

/** The real, effective, saved and filesystem uids of `pid` (/proc/<pid>/status). */
function uidsOf(pid: number): number[] {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Uid:\s+(.*)$/m)![1]!;
  return line.trim().split(/\s+/).map(Number);
}

/** Every process in `pid`'s process group (an app and what it started, e.g. Next's server). */
function groupOf(pid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const raw = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(raw.slice(raw.lastIndexOf(')') + 2).split(' ')[2]) === pid)
        members.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return members;
}

function environOf(pid: number): Map<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return new Map(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
}

/**
 * `npm start` as a user meets it (issue 11 §7, §8): a taken port is named, a crashed worker is
 * restarted, and stopping the stack leaves no desktop of the installation running, even those
 * a SIGKILLed worker left behind. The stack runs from a temporary root on free loopback ports.
 */
describe('npm start', () => {
  const roots: string[] = [];
  let running: Started | undefined;
  let blocker: Server | undefined;

  afterEach(async () => {
    if (running && running.child.exitCode === null) {
      running.child.kill('SIGTERM');
      await running.exited;
    }
    running = undefined;
    await new Promise((r) => (blocker ? blocker.close(r) : r(undefined)));
    blocker = undefined;
  });
  afterAll(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });

  it('names the process holding the API port and stops', async () => {
    const root = makeRoot();
    roots.push(root);
    const port = await freePort();
    blocker = createServer();
    await new Promise<void>((r) => blocker!.listen(port, '127.0.0.1', r));
    running = startCubicle(root, { API_PORT: String(port), WEB_PORT: String(await freePort()) });
    expect(await running.exited).toBe(1);
    expect(running.output()).toContain(`port ${port} is in use by pid ${process.pid} (`);
    expect(running.output()).not.toContain('Cubicle is up');
  });

  // Issue 30 §1, defence in depth: what a process the sandboxes talk to could lose is bounded.
  it.skipIf(process.getuid?.() !== 0)(
    'as root: the API and dashboard run unprivileged, each process gets only its own environment, and the servers ask for passwords',
    async () => {
      const root = makeRoot();
      roots.push(root);
      running = startCubicle(root, {
        API_PORT: String(await freePort()),
        WEB_PORT: String(await freePort()),
      });
      const started = running;
      await waitFor(async () => started.output().includes('Cubicle is up'), 150_000, 500);
      const worker = workerPid(root)!;
      const api = appPid(root, 'apps/api/dist/main.js')!;
      // Next names its process `next-server (vX)`.
      const web = appPid(root, 'next-server')!;
      expect([worker, api, web].every((pid) => pid > 0)).toBe(true);

      // Only the worker, which makes sandboxes, keeps root; no uid of the others is 0 — unless
      // this checkout is closed to other users (a clone under a 0700 directory): then start says
      // so and they stay root, which must be the only reason.
      expect(uidsOf(worker)[0]).toBe(0);
      const isUnprivileged = !started.output().includes('the API and the dashboard run as root');
      const appAccount = spawnSync('getent', ['passwd', 'cubicle'], { encoding: 'utf8' })
        .stdout.split(':')
        .map(Number);
      const checkoutReadable =
        spawnSync('test', ['-r', join(repo, 'apps/api/dist/main.js')], {
          uid: appAccount[2],
          gid: appAccount[3],
          cwd: '/',
        }).status === 0;
      expect(isUnprivileged).toBe(checkoutReadable);
      for (const pid of [...groupOf(api), ...groupOf(web)]) {
        expect(uidsOf(pid).every((uid) => uid !== 0)).toBe(isUnprivileged);
      }
      const apiUid = uidsOf(api)[0]!;
      const apiGid = Number(
        readFileSync(`/proc/${api}/status`, 'utf8').match(/^Gid:\s+(\d+)/m)![1],
      );
      if (isUnprivileged)
        expect(readFileSync(`/proc/${api}/status`, 'utf8')).toMatch(/^Groups:\s*$/m);

      // The dashboard: its API, Redis and session secret, nothing that opens the database,
      // the sealed secrets or viewer tickets.
      const webEnv = environOf(web);
      for (const name of ['DATABASE_URL', 'CUBICLE_KEYRING', 'CUBICLE_VIEWER_KEYS'])
        expect(webEnv.has(name), name).toBe(false);
      const keys = readFileSync(join(root, '.cubicle/viewer-keys.json'), 'utf8').trim();
      const privatePart = (JSON.parse(keys) as { keys: Array<{ d: string }> }).keys[0]!.d;
      expect(readFileSync(`/proc/${web}/environ`, 'utf8')).not.toContain(privatePart);
      expect(webEnv.get('CUBICLE_WEB_SESSION_SECRET')).toBeTruthy();
      // Its Redis user reaches its own keys only.
      expect(webEnv.get('REDIS_URL')).toMatch(/^unix:\/\/web:[0-9a-f]{64}@localhost\//);
      // The API: no dashboard secret, no HOME of root's; the worker: the API's group for sockets.
      const apiEnv = environOf(api);
      expect(apiEnv.has('CUBICLE_WEB_SESSION_SECRET')).toBe(false);
      const workerEnv = environOf(worker);
      if (isUnprivileged) {
        expect(apiEnv.get('HOME')).not.toBe(process.env.HOME);
        expect(workerEnv.get('CUBICLE_SANDBOX_SOCKET_GID')).toBe(String(apiGid));
        expect(apiUid).toBeGreaterThan(0);
      }
      // Nothing of the test runner's environment leaks through the supervisor.
      for (const env of [webEnv, apiEnv, workerEnv]) expect(env.has('VITEST')).toBe(false);

      // The servers of this installation ask for their passwords, on their sockets too.
      const databaseUrl = new URL(workerEnv.get('DATABASE_URL')!);
      expect(databaseUrl.password).toMatch(/^[0-9a-f]{64}$/);
      databaseUrl.password = '';
      const client = new pg.Client({ connectionString: databaseUrl.toString() });
      await expect(client.connect()).rejects.toThrow(/SASL|password/);
      await client.end().catch(() => undefined);
      const redisPath = new URL(workerEnv.get('REDIS_URL')!).pathname;
      const bare = new Redis({ path: redisPath, maxRetriesPerRequest: 0 });
      bare.on('error', () => undefined);
      await expect(bare.ping()).rejects.toThrow(/NOAUTH/);
      bare.disconnect();
      for (const file of ['postgres.password', 'redis.password', 'redis.web.password'])
        expect(statSync(join(root, '.cubicle', file)).mode & 0o777, file).toBe(0o600);

      // The unprivileged API still reaches a sandbox: its guest and VNC sockets belong to the
      // API's group (0660 in a 0710 directory), and the viewer stream shows the desktop.
      const key = readFileSync(join(root, '.cubicle/admin-key'), 'utf8').trim();
      const apiUrl = `http://127.0.0.1:${apiEnv.get('API_PORT')}`;
      const rest = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${apiUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, json: (await res.json()) as Record<string, unknown> };
      };
      await waitFor(
        async () =>
          ((await rest('GET', '/v1/pools/default')).json.counts as { warm: number }).warm > 0,
        120_000,
        500,
      );
      const claim = await rest('POST', '/v1/pools/default/claims', { ttl_seconds: 300 });
      expect(claim.status, JSON.stringify(claim.json)).toBe(201);
      const claimId = claim.json.id as string;
      const shell = await rest('POST', `/v1/claims/${claimId}/shell`, {
        command: 'echo driven',
        timeout_ms: 20_000,
      });
      expect(shell.json.stdout).toBe('driven\n');
      const ticket = await rest('POST', `/v1/claims/${claimId}/viewer-tickets`, { mode: 'view' });
      expect(ticket.status).toBe(201);
      const viewer = await RawRfbClient.connect(
        `${apiUrl.replace(/^http/, 'ws')}/v1/viewer/stream?ticket=${ticket.json.ticket as string}`,
      );
      expect((await viewer.read(12)).toString('latin1')).toMatch(/^RFB 003\.00\d\n$/);
      viewer.ws.terminate();

      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
    },
  );

  it('restarts a killed worker, and its stop leaves no desktop of the installation', async () => {
    const root = makeRoot();
    roots.push(root);
    const apiPort = await freePort();
    running = startCubicle(root, {
      API_PORT: String(apiPort),
      WEB_PORT: String(await freePort()),
    });
    const started = running;
    await waitFor(async () => started.output().includes('Cubicle is up'), 150_000, 500);
    const key = readFileSync(join(root, '.cubicle/admin-key'), 'utf8').trim();
    const warm = async () => {
      const res = await fetch(`http://127.0.0.1:${apiPort}/v1/pools/default`, {
        headers: { authorization: `Bearer ${key}` },
      });
      return ((await res.json()) as { counts: { warm: number } }).counts.warm;
    };
    await waitFor(async () => (await warm()) === 2, 120_000, 500);
    // A crash: the supervisor says so and starts another worker, which serves the same pool.
    const first = workerPid(root)!;
    expect(first).toBeGreaterThan(0);
    // This installation's desktops: the local backend's scope comes from the worker's database.
    const databaseUrl = readFileSync(`/proc/${first}/environ`, 'utf8')
      .split('\0')
      .find((entry) => entry.startsWith('DATABASE_URL='))!
      .slice('DATABASE_URL='.length);
    const prefix = `${localBackendScope(databaseUrl)}-`;
    const ours = async () => (await listDesktopIds()).filter((id) => id.startsWith(prefix));
    expect(await ours()).toHaveLength(2);
    process.kill(first, 'SIGKILL');
    await waitFor(async () => started.output().includes('↻ worker restarted'), 30_000, 200);
    expect(started.output()).toMatch(
      new RegExp(`worker \\(pid ${first}\\) exited \\(signal SIGKILL\\); restarting in 1 s`),
    );
    const second = workerPid(root);
    expect(second).toBeDefined();
    expect(second).not.toBe(first);

    // Crash it again and stop the stack at once: the desktops it left are stopped too.
    process.kill(second!, 'SIGKILL');
    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
    expect(started.output()).toMatch(/stopped [1-9]\d* desktop\(s\)/);
    expect(await ours()).toEqual([]);
  });
});
