import { lstat, readFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { dirname } from 'node:path';
import { peerCredentials } from './native.js';

/**
 * SandboxSocketRefused: a sandbox socket failed a check, so not one byte was sent or relayed.
 * The message says which check, never what the path turned out to point at.
 */
export class SandboxSocketRefused extends Error {
  readonly code = 'sandbox_socket_refused';
  constructor(message: string) {
    super(message);
    this.name = 'SandboxSocketRefused';
  }
}

export interface SandboxSocketOptions {
  timeoutMs?: number;
  signal?: AbortSignal;
}

const DEFAULT_TIMEOUT_MS = 5_000;

/** How many pid namespaces deep a process is, from /proc's point of view (its NSpid fields). */
async function pidNamespaceDepth(pid: number | 'self'): Promise<number | null> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const fields = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/);
    return fields?.length ?? null;
  } catch {
    return null;
  }
}

const ownUid = () => process.getuid?.() ?? -1;

/** This process's own depth: it never changes, so it is read once, not on every connect. */
let ownDepth: Promise<number | null> | undefined;
const ownPidNamespaceDepth = () => (ownDepth ??= pidNamespaceDepth('self'));

/**
 * A directory on the way to a sandbox socket must be one nobody else can change: owned by
 * root or by this process's user, not writable by group or others, and not a symlink.
 */
async function checkDirectory(path: string) {
  const stat = await lstat(path).catch(() => null);
  if (!stat?.isDirectory()) throw new SandboxSocketRefused(`${path} is not a directory`);
  if (stat.uid !== 0 && stat.uid !== ownUid())
    throw new SandboxSocketRefused(`${path} belongs to another user`);
  if ((stat.mode & 0o022) !== 0) throw new SandboxSocketRefused(`${path} is writable by others`);
}

/**
 * connectSandboxSocket connects to a local sandbox's guest or VNC socket and resolves with the
 * connected socket only once it is sure the other end is that sandbox. It is the one way the
 * control plane opens a unix socket a sandbox serves (guest calls, run streams, secret
 * delivery, the viewer bridge):
 * - the path is never one the sandbox can create, replace or rename: the socket and the two
 *   directories above it belong to the launcher and nobody else can write them (a sandbox that
 *   swapped its socket for a symlink to a host service is refused before connect);
 * - after connecting, SO_PEERCRED must name a process that runs as the socket file's owner (the
 *   sandbox's own host uid; the launcher chowns the socket to it) and lives in a pid namespace
 *   below ours (a sandbox's), so even a socket of the same uid on the host side is refused.
 * Only then is the socket handed over, before the caller writes or reads a byte.
 */
export async function connectSandboxSocket(
  path: string,
  options: SandboxSocketOptions = {},
): Promise<Socket> {
  if (!path.startsWith('/') || path.includes('\0'))
    throw new SandboxSocketRefused('a sandbox socket path must be absolute');
  const stat = await lstat(path).catch((err: NodeJS.ErrnoException) => {
    throw new SandboxSocketRefused(`the sandbox socket is missing (${err.code ?? 'error'})`);
  });
  if (stat.isSymbolicLink()) throw new SandboxSocketRefused('the sandbox socket is a symlink');
  if (!stat.isSocket()) throw new SandboxSocketRefused('the sandbox socket is not a socket');
  if (stat.nlink !== 1) throw new SandboxSocketRefused('the sandbox socket has other names');
  await checkDirectory(dirname(path));
  await checkDirectory(dirname(dirname(path)));
  const selfDepth = await ownPidNamespaceDepth();

  // No 'data' listener until the caller adds one: what the peer sends meanwhile stays buffered.
  const socket = connect({ path });
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => finish(new Error(`the sandbox socket did not connect within ${timeoutMs} ms`)),
        timeoutMs,
      );
      const onAbort = () => finish(new Error('aborted'));
      const onError = (err: Error) => finish(err);
      const finish = (err?: Error) => {
        clearTimeout(timer);
        options.signal?.removeEventListener('abort', onAbort);
        socket.off('error', onError);
        socket.off('connect', onConnect);
        if (err) reject(err);
        else resolve();
      };
      const onConnect = () => finish();
      if (options.signal?.aborted) return finish(new Error('aborted'));
      options.signal?.addEventListener('abort', onAbort, { once: true });
      socket.once('error', onError);
      socket.once('connect', onConnect);
    });
    const peer = peerCredentials(socket);
    if (peer.uid !== stat.uid)
      throw new SandboxSocketRefused('the socket is served by another user than its sandbox');
    const depth = peer.pid > 0 ? await pidNamespaceDepth(peer.pid) : null;
    if (depth === null || selfDepth === null || depth <= selfDepth)
      throw new SandboxSocketRefused('the socket is not served from inside a sandbox');
  } catch (err) {
    socket.destroy();
    throw err;
  }
  return socket;
}
