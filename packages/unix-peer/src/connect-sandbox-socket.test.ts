import {
  chmodSync,
  closeSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  symlinkSync,
} from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bindUnixSocket, connectSandboxSocket, SandboxSocketRefused } from './index.js';

// The positive case (a peer inside a sandbox's pid namespace) needs a real sandbox: it is in
// test/e2e/sandbox-boundary.test.ts. Here: everything that must be refused before a byte moves.
describe('connectSandboxSocket refuses what is not a sandbox', () => {
  const dirs: string[] = [];
  const servers: Server[] = [];
  afterEach(() => {
    for (const s of servers.splice(0)) s.close();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const layout = () => {
    const root = mkdtempSync(join(tmpdir(), 'unix-peer-'));
    dirs.push(root);
    const sock = join(root, 'sock');
    mkdirSync(sock, { mode: 0o700 });
    return { root, sock };
  };
  const listen = (path: string, onConnection = () => undefined) =>
    new Promise<Server>((resolve) => {
      const server = createServer(onConnection);
      servers.push(server);
      server.listen(path, () => resolve(server));
    });

  it('refuses a host process of the same user: its pid namespace is ours', async () => {
    const { sock } = layout();
    let received = 0;
    await listen(join(sock, 'guest.sock'), () => void (received += 1));
    await expect(connectSandboxSocket(join(sock, 'guest.sock'))).rejects.toThrow(
      /not served from inside a sandbox/,
    );
    expect(received).toBeLessThanOrEqual(1);
  });

  it('refuses a symlink, a hard link and a missing path before connecting', async () => {
    const { root, sock } = layout();
    const target = join(root, 'target.sock');
    let connections = 0;
    await listen(target, () => void (connections += 1));
    symlinkSync(target, join(sock, 'vnc.sock'));
    await expect(connectSandboxSocket(join(sock, 'vnc.sock'))).rejects.toThrow(/symlink/);
    linkSync(target, join(sock, 'guest.sock'));
    await expect(connectSandboxSocket(join(sock, 'guest.sock'))).rejects.toThrow(/other names/);
    await expect(connectSandboxSocket(join(sock, 'none.sock'))).rejects.toBeInstanceOf(
      SandboxSocketRefused,
    );
    expect(connections).toBe(0);
  });

  it('refuses a socket in a directory others can write', async () => {
    const { sock } = layout();
    await listen(join(sock, 'guest.sock'));
    chmodSync(sock, 0o777);
    await expect(connectSandboxSocket(join(sock, 'guest.sock'))).rejects.toThrow(/writable/);
  });

  it('binds without listening: a connect is refused until someone listens', async () => {
    const { sock } = layout();
    const path = join(sock, 'bound.sock');
    const fd = bindUnixSocket(path);
    try {
      await expect(connectSandboxSocket(path, { timeoutMs: 1000 })).rejects.toThrow(/ECONNREFUSED/);
      expect(() => bindUnixSocket(path)).toThrow(/EADDRINUSE/);
    } finally {
      closeSync(fd);
    }
  });
});
