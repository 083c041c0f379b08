import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localBackendScope } from '@cubicle/backends';
import { listDesktopIds } from '@cubicle/driver-guest';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
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

/** The pid of the worker the stack in `root` runs now (by its command line and directory). */
function workerPid(root: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (cmd.includes('apps/worker/dist/main.js') && environ.includes(`${root}/.cubicle/`))
        return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
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
