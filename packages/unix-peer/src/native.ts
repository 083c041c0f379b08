import { createRequire } from 'node:module';
import { constants } from 'node:os';
import type { Socket } from 'node:net';

interface Addon {
  bindUnix(path: string): number;
  peerCred(fd: number): [number, number, number] | number;
  originalDst(fd: number): [number, number, number, number, number] | number;
}

// Built by scripts/build-addon.mjs into dist/ (the path also holds for src/ under Vitest).
const addon = createRequire(import.meta.url)('../dist/unix_peer.node') as Addon;

const errnoNames = new Map(Object.entries(constants.errno).map(([name, n]) => [n, name]));

function errnoError(call: string, negative: number): NodeJS.ErrnoException {
  const code = errnoNames.get(-negative) ?? `E${-negative}`;
  const err: NodeJS.ErrnoException = new Error(`${call}: ${code}`);
  err.code = code;
  err.errno = negative;
  return err;
}

/**
 * bindUnixSocket creates a unix stream socket bound to `path` and returns its descriptor without
 * listening on it (Node can only bind and listen together). Whoever calls listen() on it
 * becomes the peer that connectors see in SO_PEERCRED: the launcher binds in a directory only it
 * can write, and the sandbox's daemon listens on the inherited descriptor. The caller closes the
 * descriptor (fs.closeSync) once the sandbox has it.
 */
export function bindUnixSocket(path: string): number {
  const fd = addon.bindUnix(path);
  if (fd < 0) throw errnoError(`bind ${path}`, fd);
  return fd;
}

export interface PeerCredentials {
  /** The peer's pid as this process's pid namespace numbers it (0 when it has none here). */
  pid: number;
  uid: number;
  gid: number;
}

/** peerCredentials reads SO_PEERCRED of a connected unix socket. */
export function peerCredentials(socket: Socket): PeerCredentials {
  // libuv keeps the descriptor on the handle; net.Socket has no public accessor for it.
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('the socket has no descriptor');
  const answer = addon.peerCred(fd);
  if (typeof answer === 'number') throw errnoError('SO_PEERCRED', answer);
  const [pid, uid, gid] = answer;
  return { pid, uid, gid };
}

export interface OriginalDestination {
  address: string;
  port: number;
}

/**
 * originalDestination reads where an accepted IPv4 TCP connection was going before netfilter
 * redirected it to this listener (SO_ORIGINAL_DST, from the connection's conntrack entry); null
 * when it was not redirected (a client that connected to the listener itself).
 */
export function originalDestination(socket: Socket): OriginalDestination | null {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('the socket has no descriptor');
  const answer = addon.originalDst(fd);
  if (typeof answer === 'number') {
    if (answer === -constants.errno.ENOENT) return null;
    throw errnoError('SO_ORIGINAL_DST', answer);
  }
  const [a, b, c, d, port] = answer;
  return { address: `${a}.${b}.${c}.${d}`, port };
}
