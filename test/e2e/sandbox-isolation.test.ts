import { readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import { guestSocketPath, open, parseKeyring, parseVncEndpoint } from '@cubicle/control-plane';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, waitFor, type Stack } from './support/stack.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

// Tries each target from inside a sandbox and prints what happened: `connected` or the error.
const PROBE = String.raw`
import json, socket, sys
out = {}
for name, t in json.loads(sys.argv[1]).items():
    try:
        if 'path' in t:
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(2)
            s.connect(t['path'])
        else:
            s = socket.create_connection((t['host'], t['port']), 2)
        s.close()
        out[name] = 'connected'
    except Exception as e:
        out[name] = type(e).__name__
print(json.dumps(out))
`;

/**
 * Issue 11 §1: every local desktop is a sandbox. Two real desktops through the real local
 * backend (worker process, API, guest calls over the sandbox's unix socket); each check below
 * passed on the old, unisolated desktops (root, the worker's environment, the host's files,
 * processes and network) and must fail now.
 */
describe('local sandboxes are isolated', () => {
  let s: Stack;
  const claims: { id: string; sandboxId: string }[] = [];
  let hostListener: Server;
  let hostPort = 0;
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined ? {} : { payload: payload as object }),
      headers: s.auth,
    });
  const drive = (claim: number, path: string, payload?: unknown) =>
    call(
      payload === undefined ? 'GET' : 'POST',
      `/v1/claims/${claims[claim]!.id}/${path}`,
      payload,
    );
  const sh = async (claim: number, command: string) => {
    const answer = await drive(claim, 'shell', { command, timeout_ms: 30_000 });
    expect(answer.statusCode).toBe(200);
    return answer.json() as { stdout: string; stderr: string; exit_code: number | null };
  };
  const sandboxRow = async (claim: number) =>
    s.db.sandbox.findUniqueOrThrow({ where: { id: claims[claim]!.sandboxId } });

  beforeAll(async () => {
    hostListener = createServer((socket) => socket.end('host service\n'));
    await new Promise<void>((resolve) => hostListener.listen(0, '127.0.0.1', resolve));
    hostPort = (hostListener.address() as { port: number }).port;
    s = await startStack();
    const put = await call('PUT', '/v1/pools/iso', {
      image: 'local',
      autoscaling: { min: 0, initial: 2, max: 2 },
      env: { POOL_GREETING: 'hello' },
    });
    expect(put.statusCode).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/iso')).json().counts.warm === 2,
      120_000,
      250,
    );
    for (let i = 0; i < 2; i += 1) {
      const claim = await call('POST', '/v1/pools/iso/claims', { ttl_seconds: 900 });
      expect(claim.statusCode).toBe(201);
      claims.push({ id: claim.json().id, sandboxId: claim.json().sandbox.id });
    }
  });
  afterAll(async () => {
    await s?.close();
    hostListener?.close();
  });

  it('runs as an unprivileged user with an allow-listed environment', async () => {
    expect((await sh(0, 'id -u')).stdout.trim()).not.toBe('0');
    const env = (await sh(0, 'env')).stdout;
    expect(env).toMatch(/^POOL_GREETING=hello$/m); // the pool's env reaches the apps
    // No variable of the worker's; of Cubicle's only the secrets directory's path, which the
    // guest sets for per-claim secret files.
    const names = env.split('\n').map((line) => line.split('=')[0]!);
    for (const name of ['CUBICLE', 'DATABASE', 'REDIS', 'KEYRING', 'VIEWER', 'QUEUE', 'KUBE'])
      expect(
        names.filter((n) => n.includes(name) && n !== 'CUBICLE_SECRETS_DIR'),
        name,
      ).toEqual([]);
    for (const value of [
      s.workerEnv.DATABASE_URL,
      s.workerEnv.REDIS_URL,
      s.workerEnv.CUBICLE_KEYRING,
    ])
      expect(env).not.toContain(value!);
  });

  it('sees none of the host: files, checkout, data, other sandboxes', async () => {
    const b = await sandboxRow(1);
    const bSocket = guestSocketPath(new URL('/', b.guestEndpoint!))!;
    expect(
      (await drive(1, 'files/write', { path: '/home/sandbox/b-only.txt', content: 'B' }))
        .statusCode,
    ).toBe(200);
    const pgDir = new URL(s.workerEnv.DATABASE_URL).searchParams.get('host')!;
    const targets = [
      '/etc/shadow',
      `${REPO_ROOT}package.json`,
      `${REPO_ROOT}.cubicle`,
      pgDir,
      '/root',
      '/var/lib/cubicle',
      bSocket,
      '/home/sandbox/b-only.txt',
    ];
    for (const path of targets) {
      const read = await sh(0, `if [ -d '${path}' ]; then ls -A '${path}'; else cat '${path}'; fi`);
      expect(read.exit_code, path).not.toBe(0);
    }
    // Through the files API too (the guest driver runs inside the same sandbox).
    expect((await drive(0, 'files/read', { path: '/etc/shadow' })).statusCode).not.toBe(200);
    expect((await drive(0, 'files/read', { path: `${REPO_ROOT}package.json` })).statusCode).toBe(
      404,
    );
    // The other sandbox still reads its own file.
    expect(
      (await drive(1, 'files/read', { path: '/home/sandbox/b-only.txt' })).json().content,
    ).toBe('B');
  });

  it('reaches no host service and no other sandbox over the network or sockets', async () => {
    const b = await sandboxRow(1);
    const pgDir = new URL(s.workerEnv.DATABASE_URL).searchParams.get('host')!;
    const pgSocket = readdirSync(pgDir).find((name) => name.startsWith('.s.PGSQL.'))!;
    const redisSocket = new URL(s.workerEnv.REDIS_URL!).pathname;
    const targets = {
      postgres: { path: `${pgDir}/${pgSocket}` },
      redis: { path: redisSocket },
      hostTcp: { host: '127.0.0.1', port: hostPort },
      otherGuest: { path: guestSocketPath(new URL('/', b.guestEndpoint!))! },
      otherVnc: parseVncEndpoint(b.vncEndpoint!)!,
    };
    const probe = await drive(0, 'shell', {
      argv: ['/usr/bin/python3', '-c', PROBE, JSON.stringify(targets)],
      timeout_ms: 30_000,
    });
    const results = JSON.parse(probe.json().stdout) as Record<string, string>;
    for (const name of Object.keys(targets)) expect(results[name], name).not.toBe('connected');
    // The same probe from the host connects, so the targets are real.
    expect(
      await import('node:net').then(
        (net) =>
          new Promise((resolve) => {
            const socket = net.connect(parseVncEndpoint(b.vncEndpoint!) as never);
            socket.once('connect', () => {
              socket.destroy();
              resolve('connected');
            });
            socket.once('error', (e) => resolve(e.message));
          }),
      ),
    ).toBe('connected');
  });

  it('lists only its own processes; the daemon holds no token in its environment', async () => {
    const ps = (await sh(0, 'ps -eo pid=,comm=')).stdout;
    const names = ps
      .trim()
      .split('\n')
      .map((line) => line.trim().split(/\s+/)[1]);
    expect(names[0]).toBe('bwrap'); // PID 1 is the sandbox's reaper
    for (const host of ['postgres', 'redis-server', 'vitest', 'kube-apiserver'])
      expect(names, host).not.toContain(host);
    expect(names.length).toBeLessThan(20);
    const keyring = parseKeyring(s.workerEnv.CUBICLE_KEYRING!);
    const a = await sandboxRow(0);
    const token = open(keyring, a.guestTokenCiphertext!, a.id);
    // Every process of the sandbox, the daemon included: environment and command line.
    const dump = await sh(
      0,
      `for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ; tr '\\0' ' ' < $p/cmdline; echo; done 2>/dev/null`,
    );
    expect(dump.stdout).toContain('DISPLAY='); // the dump did read the processes
    expect(dump.stdout).not.toContain(token);
    expect(dump.stdout).not.toContain(token.slice(0, 16));
  });

  it('still does what an agent needs: write home, run an app and see its window', async () => {
    const home = await sh(0, 'echo saved > ~/notes.txt && cat ~/notes.txt && echo $HOME');
    expect(home.stdout).toBe('saved\n/home/sandbox\n');
    const launched = await drive(0, 'windows/launch', {
      argv: ['galculator'],
      wait_for_window_ms: 20_000,
    });
    expect(launched.statusCode).toBe(200);
    expect(launched.json().window_wait).toBe('found');
    const windowId = launched.json().window.window_id as number;
    const ready = await drive(0, 'verify', {
      window_id: windowId,
      predicates: [
        { kind: 'element_exists', selector: { role: 'toggle_button', name: '=' }, unique: true },
      ],
      timeout_ms: 10_000,
    });
    expect(ready.json().status).toBe('satisfied');
    const shot = await drive(0, 'screenshot', {});
    expect(shot.statusCode).toBe(200);
  });
});
