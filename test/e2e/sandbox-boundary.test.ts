import { spawn, type ChildProcess } from 'node:child_process';
import {
  chownSync,
  closeSync,
  linkSync,
  lstatSync,
  mkdtempSync,
  renameSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { guestSocketPath, parseVncEndpoint } from '@cubicle/control-plane';
import { bindUnixSocket } from '@cubicle/unix-peer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RawRfbClient } from './support/rfb-client.js';
import { startStack, waitFor, type Stack } from './support/stack.js';

/** A listener that counts what reaches it: nothing may, while a sandbox's socket is replaced. */
interface Trap {
  path: string;
  connections: number;
  bytes: number;
  server: Server;
}

function listenTrap(path: string): Promise<Trap> {
  const trap = { path, connections: 0, bytes: 0 } as Trap;
  trap.server = createServer((socket) => {
    trap.connections += 1;
    socket.on('data', (chunk: Buffer) => (trap.bytes += chunk.length));
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) => trap.server.listen(path, () => resolve(trap)));
}

// Accepts on the listening socket handed in as descriptor 3 and prints how many bytes each
// connection sent within a second: a host process running as the sandbox's own uid.
const SAME_UID_LISTENER = String.raw`
import socket, sys
s = socket.socket(fileno=3)
s.listen(8)
print('listening', flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(1)
    n = 0
    try:
        while True:
            d = c.recv(65536)
            if not d: break
            n += len(d)
    except Exception:
        pass
    print('bytes', n, flush=True)
    c.close()
`;

/**
 * Issue 30 §1: a claim holder made the API (root) connect to the embedded Postgres by replacing
 * its sandbox's vnc.sock with a symlink. Now the sockets are out of the sandbox's reach, and the
 * control plane checks every sandbox socket before a byte moves: replaced here from the host
 * side (what a sandbox could once do) with symlinks to Postgres, Redis and a trap, a hard link,
 * and a socket served by a host process of the sandbox's own uid, each door refuses — guest
 * calls, control and view streams, runs and secret delivery — and the claim works again once the
 * real sockets are back.
 */
describe('a sandbox cannot point the control plane at the host', () => {
  let s: Stack;
  let baseUrl = '';
  let claimId = '';
  let guestSock = '';
  let vncSock = '';
  let sandboxUid = 0;
  const scratch = mkdtempSync(join(tmpdir(), 'cubicle-boundary-'));
  const traps: Trap[] = [];
  const children: ChildProcess[] = [];
  const call = (method: string, url: string, payload?: unknown) =>
    s.api.inject({
      method: method as 'GET',
      url,
      headers: s.auth,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
  const drive = (path: string, payload?: unknown) =>
    call(payload === undefined ? 'GET' : 'POST', `/v1/claims/${claimId}/${path}`, payload);
  const streamUrl = async (mode: 'view' | 'control') => {
    const minted = await call('POST', `/v1/claims/${claimId}/viewer-tickets`, {
      mode,
      ttl_seconds: 300,
    });
    expect(minted.statusCode, minted.body).toBe(201);
    const res = await s.api.inject({
      method: 'POST',
      url: '/v1/viewer/introspect',
      payload: { ticket: minted.json().ticket },
      headers: { host: new URL(baseUrl).host },
    });
    expect(res.statusCode).toBe(200);
    return res.json().stream_url as string;
  };
  /** What a viewer gets: the RFB banner, or the close code the stream ended with. */
  const viewerOutcome = async (mode: 'view' | 'control') => {
    const client = await RawRfbClient.connect(await streamUrl(mode));
    try {
      return { banner: (await client.read(12, 8_000)).toString('latin1') };
    } catch {
      return { closed: (await client.closed).code };
    } finally {
      client.ws.terminate();
    }
  };

  beforeAll(async () => {
    s = await startStack();
    baseUrl = await s.api.listen({ host: '127.0.0.1', port: 0 });
    const put = await call('PUT', '/v1/pools/door', {
      image: 'local',
      autoscaling: { min: 0, initial: 1, max: 1 },
    });
    expect(put.statusCode).toBe(201);
    await waitFor(
      async () => (await call('GET', '/v1/pools/door')).json().counts.warm === 1,
      120_000,
      250,
    );
    const claim = await call('POST', '/v1/pools/door/claims', { ttl_seconds: 900 });
    expect(claim.statusCode, claim.body).toBe(201);
    claimId = claim.json().id;
    const row = await s.db.sandbox.findUniqueOrThrow({ where: { id: claim.json().sandbox.id } });
    guestSock = guestSocketPath(new URL('/', row.guestEndpoint!))!;
    vncSock = (parseVncEndpoint(row.vncEndpoint!) as { path: string }).path;
    sandboxUid = lstatSync(guestSock).uid;
  });

  afterAll(async () => {
    for (const child of children) child.kill('SIGKILL');
    for (const trap of traps) trap.server.close();
    await s?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it('the sockets the control plane connects to are out of the sandbox', async () => {
    const probe = await drive('shell', {
      command: [
        'ls -la /run/cubicle/sock 2>&1 || true',
        `test -e '${guestSock}' && echo HOST_PATH_VISIBLE`,
        'grep -c "/sock " /proc/self/mountinfo || true',
        'mkdir -p /run/cubicle/sock 2>/dev/null; ln -sfn /tmp /run/cubicle/sock/vnc.sock 2>&1; true',
      ].join('; '),
      timeout_ms: 20_000,
    });
    expect(probe.statusCode, probe.body).toBe(200);
    const { stdout } = probe.json() as { stdout: string };
    // Before: a read-write bind of the host's socket directory, listing guest.sock and vnc.sock.
    expect(stdout).not.toMatch(/guest\.sock/);
    expect(stdout).not.toContain('HOST_PATH_VISIBLE');
    expect(stdout.split('\n')).toContain('0');
    // Whatever the sandbox made of its own /run, the host's sockets are the launcher's.
    expect(lstatSync(guestSock).isSocket()).toBe(true);
    expect(lstatSync(vncSock).isSocket()).toBe(true);
    expect((await drive('shell', { command: 'true', timeout_ms: 10_000 })).statusCode).toBe(200);
  });

  it('a replaced socket is refused before one byte, by every door', async () => {
    const trap = await listenTrap(join(scratch, 'trap.sock'));
    traps.push(trap);
    const pgDir = new URL(s.workerEnv.DATABASE_URL).searchParams.get('host');
    const redisPath = new URL(s.workerEnv.REDIS_URL!).pathname;
    expect(pgDir, 'the harness Postgres listens on a unix socket').toBeTruthy();

    // A host process running as the sandbox's own uid, serving a socket bound at the path: the
    // uid matches, the pid namespace does not.
    let sameUidOutput = '';
    const serveAsSandboxUid = async (path: string) => {
      const fd = bindUnixSocket(path);
      const child = spawn(
        'setpriv',
        [
          `--reuid=${sandboxUid}`,
          `--regid=${sandboxUid}`,
          '--clear-groups',
          // Debian's, not one on root's PATH (e.g. pyenv under /root, unreadable to that uid).
          '/usr/bin/python3',
          '-c',
          SAME_UID_LISTENER,
        ],
        { stdio: ['ignore', 'pipe', 'inherit', fd] },
      );
      children.push(child);
      closeSync(fd);
      chownSync(path, sandboxUid, sandboxUid);
      let said = '';
      child.stdout!.on('data', (d: Buffer) => {
        said += d.toString();
        sameUidOutput += d.toString();
      });
      await waitFor(async () => said.includes('listening'), 10_000, 50);
    };

    const substitutes: [string, (path: string) => void | Promise<void>][] = [
      ['symlink to the trap', (p) => symlinkSync(trap.path, p)],
      ['symlink to Postgres', (p) => symlinkSync(join(pgDir!, '.s.PGSQL.5432'), p)],
      ['symlink to Redis', (p) => symlinkSync(redisPath, p)],
      ['hard link to the trap', (p) => linkSync(trap.path, p)],
      ['a socket served by the sandbox uid on the host', serveAsSandboxUid],
    ];
    for (const [index, [name, substitute]] of substitutes.entries()) {
      const moved = (p: string) => `${p}.real`;
      for (const p of [guestSock, vncSock]) {
        renameSync(p, moved(p));
        await substitute(p);
      }
      const secretName = `BOUNDARY_${index}`;
      // A fresh worker holds no kept-alive guest connection: its calls must open the path anew.
      // (Killed, not stopped: a worker that exits cleanly takes the desktops it started along.)
      await s.restartWorker({ crash: true });
      try {
        const shell = await drive('shell', { command: 'echo reached', timeout_ms: 10_000 });
        expect(shell.statusCode, `${name}: guest call`).toBe(502);
        expect(shell.json().error.code, name).toBe('backend_unavailable');
        for (const mode of ['control', 'view'] as const)
          expect(await viewerOutcome(mode), `${name}: ${mode} stream`).toEqual({ closed: 4502 });
        const run = await call('POST', `/v1/claims/${claimId}/runs`, { argv: ['/bin/true'] });
        expect(run.statusCode, run.body).toBe(202);
        let status = '';
        await waitFor(
          async () => {
            status = (await call('GET', `/v1/runs/${run.json().id}`)).json().status as string;
            return !['queued', 'starting', 'running'].includes(status);
          },
          60_000,
          250,
        );
        expect(status, `${name}: the run cannot reach its sandbox`).not.toBe('succeeded');
        // Delivery is a job on the sandbox's queue: it fails now and is retried.
        const secret = await call('POST', `/v1/claims/${claimId}/secrets`, {
          name: secretName,
          value: 'boundary-secret-value',
        });
        expect(secret.statusCode, secret.body).toBe(201);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
      } finally {
        for (const p of [guestSock, vncSock]) {
          rmSync(p, { force: true });
          renameSync(moved(p), p);
        }
      }
      expect(trap.connections, `${name}: the trap`).toBe(0);
      expect(sameUidOutput, `${name}: the same-uid listener`).not.toMatch(/bytes [1-9]/);
      // Restored: the retried delivery and a guest call reach the real sandbox.
      await waitFor(
        async () => {
          const file = await drive('shell', {
            command: `test -s /run/cubicle/secrets/${secretName} && echo present`,
            timeout_ms: 10_000,
          });
          return file.statusCode === 200 && file.json().stdout === 'present\n';
        },
        60_000,
        500,
      );
    }
    // The same-uid listener was connected to (the check needs a peer) and got nothing.
    expect(sameUidOutput).toMatch(/bytes 0/);
    expect(trap.bytes).toBe(0);

    // The real sockets are back: the claim works through every door again.
    const shell = await drive('shell', { command: 'echo back', timeout_ms: 10_000 });
    expect(shell.statusCode, shell.body).toBe(200);
    expect(shell.json().stdout).toBe('back\n');
    const viewer = await viewerOutcome('view');
    expect(viewer.banner).toMatch(/^RFB 003\.00\d\n$/);
  });
});
