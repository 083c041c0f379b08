/**
 * How the control plane addresses a sandbox's guest driver and VNC server. Pods and VMs are
 * reached over TCP (`http://10.0.0.7:8080`, `10.0.0.7:5900`); a local sandbox has a private
 * network namespace and is reached through unix sockets in a directory the control plane owns:
 * the guest as `http+unix://<percent-encoded socket path>` and VNC as `unix:<socket path>`.
 * Every consumer parses them here.
 */
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { connectSandboxSocket, SandboxSocketRefused } from '@cubicle/unix-peer';

/** A sandbox socket that does not connect in this long is unreachable (the guest is local). */
const CONNECT_TIMEOUT_MS = 5_000;

export type SocketTarget = { path: string } | { host: string; port: number };

const UNIX_PREFIX = 'unix:';
const GUEST_UNIX_PROTOCOL = 'http+unix:';

/** guestUnixUrl is the guest URL of a driver listening on a unix socket (an absolute path). */
export function guestUnixUrl(socketPath: string): string {
  if (!socketPath.startsWith('/')) throw new Error('a guest socket path must be absolute');
  return `http+unix://${encodeURIComponent(socketPath)}`;
}

/** vncUnixEndpoint is the VNC endpoint of an RFB server listening on a unix socket. */
export function vncUnixEndpoint(socketPath: string): string {
  if (!socketPath.startsWith('/')) throw new Error('a VNC socket path must be absolute');
  return `${UNIX_PREFIX}${socketPath}`;
}

/**
 * guestSocketPath is the socket of an `http+unix://` guest URL, null for an http(s) one. The
 * request then goes over that socket with the URL's path and query, as plain HTTP.
 */
export function guestSocketPath(url: URL): string | null {
  if (url.protocol !== GUEST_UNIX_PROTOCOL) return null;
  const path = decodeURIComponent(url.hostname);
  if (!path.startsWith('/'))
    throw new Error('an http+unix guest URL names an absolute socket path');
  return path;
}

/** parseVncEndpoint reads `unix:/path`, `host:port` or `[v6]:port`; null when it is none. */
export function parseVncEndpoint(endpoint: string): SocketTarget | null {
  if (endpoint.startsWith(UNIX_PREFIX)) {
    const path = endpoint.slice(UNIX_PREFIX.length);
    return path.startsWith('/') && !path.includes('\0') ? { path } : null;
  }
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]]+)):([0-9]{1,5})$/.exec(endpoint);
  const port = Number(m?.[3]);
  if (!m || port < 1 || port > 65_535) return null;
  return { host: m[1] ?? m[2]!, port };
}

/**
 * SandboxSocketAgent is the http.Agent for `http+unix://` guests: every new connection goes
 * through connectSandboxSocket, so a request is written only to a socket whose peer was checked
 * to be the sandbox (never to a host service the sandbox pointed a path at). Kept-alive sockets
 * are reused as by any agent; a refusal fails the request with the check's message.
 */
export class SandboxSocketAgent extends http.Agent {
  override createConnection(
    options: http.ClientRequestArgs,
    callback?: (err: Error | null, socket: Duplex) => void,
  ): Duplex | undefined {
    return openSandboxConnection(options, (err, socket) => callback?.(err, socket!));
  }
}

/**
 * openSandboxConnection is a `createConnection` for clients built on node:http (ws among them)
 * that reach a sandbox at `options.socketPath`: the request is written once connectSandboxSocket
 * has checked the peer, and fails with its refusal otherwise.
 */
export function openSandboxConnection(
  options: { socketPath?: string },
  callback: (err: Error | null, socket?: Duplex) => void,
): undefined {
  if (!options.socketPath) {
    queueMicrotask(() => callback(new SandboxSocketRefused('no sandbox socket path')));
    return undefined;
  }
  connectSandboxSocket(options.socketPath, { timeoutMs: CONNECT_TIMEOUT_MS }).then(
    (socket) => callback(null, socket),
    (err: Error) => callback(err),
  );
  return undefined;
}
