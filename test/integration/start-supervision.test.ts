import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as embedded from '@cubicle/embedded';
import { afterAll, describe, expect, it } from 'vitest';
import { PortInUseError, spawnApp, waitHealthy } from '../../scripts/lib/api-process.mjs';
import { APP_ENV, appEnv } from '../../scripts/lib/app-env.mjs';
import { ApiEnv } from '../../apps/api/src/env.js';
import { WorkerEnv } from '../../apps/worker/src/env.js';
import { WebEnv } from '../../apps/web/lib/env.js';
import { portInUseMessage, portOwner } from '../../scripts/lib/port-owner.mjs';
import {
  restartDelayMs,
  superviseProcess,
  type ProcessHandle,
} from '../../scripts/lib/supervise.mjs';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'cubicle-supervise-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A real Node child run the way `npm start` runs the worker and the API (spawnApp). */
function startChild(name: string, code: string): ProcessHandle {
  return spawnApp({
    root,
    name,
    entry: '-e',
    args: [code],
    env: { PATH: process.env.PATH },
    logDir: join(dir, 'logs'),
    embedded,
  });
}

const policy = { initialDelayMs: 50, maxDelayMs: 400, maxRestarts: 3, windowMs: 60_000 };

describe('npm start supervision (scripts/lib/supervise.mjs)', () => {
  it('backs off exponentially up to the cap', () => {
    expect([1, 2, 3, 4, 5].map((n) => restartDelayMs(policy, n))).toEqual([50, 100, 200, 400, 400]);
  });

  it('restarts a crashed child with a new pid and logs why', async () => {
    const lines: string[] = [];
    // Crashes once (its first run finds no marker), then runs until stopped.
    const marker = join(dir, 'crashed-once');
    const code = `const fs = require('fs'); if (!fs.existsSync(${JSON.stringify(marker)})) { fs.writeFileSync(${JSON.stringify(marker)}, ''); console.log('boom'); process.exit(3); } console.log('up'); setInterval(() => {}, 1000);`;
    const first = startChild('crashy', code);
    const restarted: number[] = [];
    let gaveUp: string | undefined;
    const supervised = superviseProcess({
      name: 'crashy',
      first,
      start: async () => startChild('crashy', code),
      policy,
      log: (line) => lines.push(line),
      onRestart: (next) => restarted.push(next.pid),
      onGiveUp: (reason) => (gaveUp = reason),
    });
    await first.exited;
    const deadline = Date.now() + 10_000;
    while (restarted.length === 0 && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 25));
    expect(restarted).toHaveLength(1);
    expect(supervised.pid).toBe(restarted[0]);
    expect(supervised.pid).not.toBe(first.pid);
    expect(gaveUp).toBeUndefined();
    expect(lines.join('\n')).toMatch(/crashy \(pid \d+\) exited \(code 3\); restarting in 0\.05 s/);
    expect(lines.join('\n')).toContain('  boom');
    // The restarted child runs until stop(), which ends it for good.
    const current = supervised.pid;
    expect(() => process.kill(current, 0)).not.toThrow();
    await supervised.stop();
    expect(() => process.kill(current, 0)).toThrow();
    await new Promise((r) => setTimeout(r, 200));
    expect(restarted).toHaveLength(1);
  });

  it('gives up on a crash loop and says so', async () => {
    const lines: string[] = [];
    const code = `console.log('dying'); process.exit(1);`;
    let starts = 1;
    let resolve!: (reason: string) => void;
    const gaveUp = new Promise<string>((r) => (resolve = r));
    const supervised = superviseProcess({
      name: 'looper',
      first: startChild('looper', code),
      start: async () => {
        starts++;
        return startChild('looper', code);
      },
      policy,
      log: (line) => lines.push(line),
      onGiveUp: resolve,
    });
    expect(await gaveUp).toBe('looper crash-looped');
    // maxRestarts restarts, then the next crash is one too many.
    expect(starts).toBe(policy.maxRestarts + 1);
    expect(supervised.restarts).toBe(policy.maxRestarts);
    expect(lines.filter((l) => l.includes('restarting in'))).toHaveLength(policy.maxRestarts);
    expect(lines.join('\n')).toContain('4 crashes within 60 s, not restarting it');
    await supervised.stop();
  });

  it('a stop during the backoff cancels the restart', async () => {
    let starts = 0;
    const first = startChild('stopper', `process.exit(2);`);
    const supervised = superviseProcess({
      name: 'stopper',
      first,
      start: async () => {
        starts++;
        return startChild('stopper', `setInterval(() => {}, 1000);`);
      },
      policy: { ...policy, initialDelayMs: 2_000 },
      log: () => undefined,
      onGiveUp: () => undefined,
    });
    await first.exited;
    await new Promise((r) => setTimeout(r, 100));
    await supervised.stop();
    await new Promise((r) => setTimeout(r, 2_500));
    expect(starts).toBe(0);
  });
});

describe('npm start when a port is taken (scripts/lib/port-owner.mjs)', () => {
  it('names the process that holds the port, and waitHealthy refuses its answers', async () => {
    // Another process (not ours) answering 200 on a loopback port, as a leftover server would.
    const other = spawn(
      process.execPath,
      [
        '-e',
        `const s = require('http').createServer((q, r) => r.end('ok')); s.listen(0, '127.0.0.1', () => console.log(s.address().port));`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      const [chunk] = (await once(other.stdout!, 'data')) as [Buffer];
      const port = Number(chunk.toString().trim());
      const owner = portOwner(port);
      expect(owner?.pid).toBe(other.pid);
      expect(owner?.command).toContain('createServer');
      const message = portInUseMessage(port, owner!, 'API_PORT');
      expect(message).toMatch(new RegExp(`^port ${port} is in use by pid ${other.pid} \\(`));
      expect(message).toContain('API_PORT=');

      // The app "just started" is this test process's group, not the one answering.
      const never = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>(() => {});
      const waited = waitHealthy(`http://127.0.0.1:${port}/`, never, 5_000, {
        port,
        pid: process.pid,
        variable: 'API_PORT',
      });
      await expect(waited).rejects.toBeInstanceOf(PortInUseError);
      await expect(waited).rejects.toThrow(`port ${port} is in use by pid ${other.pid}`);
      // Answered by the process it started: healthy.
      await waitHealthy(`http://127.0.0.1:${port}/`, never, 5_000, {
        port,
        pid: processGroupOf(other.pid!),
        variable: 'API_PORT',
      });
    } finally {
      other.kill('SIGKILL');
      await once(other, 'exit').catch(() => undefined);
    }
  });

  it('answers undefined for a free port', async () => {
    const server = (await import('node:net')).createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    expect(portOwner(port)?.pid).toBe(process.pid);
    await new Promise((r) => server.close(r));
    expect(portOwner(port)).toBeUndefined();
  });
});

describe('each process of npm start gets only its own environment (scripts/lib/app-env.mjs)', () => {
  const system = ['PATH', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'];
  const sorted = (names: string[]) => [...new Set(names)].sort();

  it("allows each app what its env.ts reads, plus the system's basics", () => {
    // A variable added to an env.ts and not here would never reach the app under npm start.
    expect(sorted(APP_ENV.worker)).toEqual(
      sorted([...Object.keys(WorkerEnv.shape), ...system, 'HOME']),
    );
    expect(sorted(APP_ENV.api)).toEqual(
      sorted([...Object.keys(ApiEnv.shape), ...system, 'CUBICLE_VIEWER_KEY_PEM']),
    );
    expect(sorted(APP_ENV.web)).toEqual(
      sorted([...Object.keys(WebEnv.shape), ...system, 'NEXT_TELEMETRY_DISABLED']),
    );
  });

  it('gives the dashboard no database, keyring or viewer key, and nothing of the shell', () => {
    const everything = {
      PATH: '/usr/bin:/bin',
      DATABASE_URL: 'postgresql://postgres:pw@localhost/cubicle',
      CUBICLE_KEYRING: 'k1:AAAA',
      CUBICLE_VIEWER_KEYS: '{"keys":[]}',
      CUBICLE_VIEWER_KEY_PEM: '-----BEGIN PRIVATE KEY-----',
      REDIS_URL: 'unix://web:pw@localhost/tmp/r.sock',
      CUBICLE_WEB_SESSION_SECRET: 'c2VjcmV0',
      HOME: '/root',
      SSH_AUTH_SOCK: '/tmp/agent',
      AWS_SECRET_ACCESS_KEY: 'x',
    };
    expect(appEnv('web', everything, { home: '/nonexistent' })).toEqual({
      PATH: '/usr/bin:/bin',
      REDIS_URL: 'unix://web:pw@localhost/tmp/r.sock',
      CUBICLE_WEB_SESSION_SECRET: 'c2VjcmV0',
      HOME: '/nonexistent',
    });
    const api = appEnv('api', everything);
    expect(Object.keys(api).sort()).toEqual(
      [
        'CUBICLE_KEYRING',
        'CUBICLE_VIEWER_KEYS',
        'CUBICLE_VIEWER_KEY_PEM',
        'DATABASE_URL',
        'PATH',
        'REDIS_URL',
      ].sort(),
    );
  });

  it.skipIf(process.getuid?.() !== 0)(
    'runs an app as another account without supplementary groups',
    async () => {
      const child = spawnApp({
        root,
        name: 'unprivileged',
        entry: '-e',
        args: [
          'console.log(JSON.stringify([process.getuid(), process.getgid(), process.getgroups()]))',
        ],
        env: { PATH: process.env.PATH },
        logDir: join(dir, 'logs'),
        embedded,
        user: { uid: 65534, gid: 65534 },
      });
      expect(await child.exited).toEqual({ code: 0, signal: null });
      await child.stop();
      expect(JSON.parse(child.logTail(1)[0]!)).toEqual([65534, 65534, [65534]]);
    },
  );
});

function processGroupOf(pid: number): number {
  const raw = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(raw.slice(raw.lastIndexOf(')') + 2).split(' ')[2]);
}
