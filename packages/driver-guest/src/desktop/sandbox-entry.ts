// The first process inside a desktop sandbox (started by start-sandbox.ts through bubblewrap):
// it starts the whole desktop with the guest driver in this process, listening on the unix
// sockets the control plane reaches from outside, and reports to the launcher once up.
//
// Descriptors from the launcher: 4 = the guest token (bytes, then EOF), 5 = the configuration
// (JSON), 7 = where to write one JSON line once the desktop is up, 8 and 9 = the guest's and
// VNC's unix sockets, bound by the launcher in a directory the sandbox cannot see; this process
// listens on them, which makes it the peer the control plane checks (SO_PEERCRED). The token is hashed and its
// bytes zeroed: this process keeps only the SHA-256, so reading its memory or environment from
// another process of the sandbox (same user) gives nothing a caller could present.
import { closeSync, readFileSync, readSync, writeSync } from 'node:fs';
import { inheritedEnv } from '../env.js';
import { tokenDigestOf } from '../server/auth.js';
import { startDesktop } from './start-desktop.js';
import { trustEgressCaIn, userNssDb } from './egress-trust.js';

interface EntryConfig {
  width: number;
  height: number;
  depth: 16 | 24;
  withGlx: boolean;
  vncPort: number;
  appEnv: Record<string, string>;
}

const TOKEN_FD = 4;
const CONFIG_FD = 5;
const READY_FD = 7;
const GUEST_SOCKET_FD = 8;
const VNC_SOCKET_FD = 9;

function readAll(fd: number): Buffer {
  const bytes = readFileSync(fd);
  closeSync(fd);
  return bytes;
}

/**
 * readToken reads the token straight into one unpooled buffer (readFileSync would leave chunk
 * copies on the heap), which tokenDigestOf zeroes once hashed.
 */
function readToken(fd: number): Buffer {
  const buffer = Buffer.alloc(1024);
  let length = 0;
  for (let n = 1; n > 0 && length < buffer.length; length += n)
    n = readSync(fd, buffer, length, buffer.length - length, null);
  closeSync(fd);
  return buffer.subarray(0, length);
}

const tokenDigest = tokenDigestOf(readToken(TOKEN_FD));
const config = JSON.parse(readAll(CONFIG_FD).toString('utf8')) as EntryConfig;

// Credentials injected at egress: Chromium (and any NSS program) trusts the egress CA from the
// start, however it is launched (the launch API, a shell, an agent's script).
const home = inheritedEnv().HOME;
if (home) await trustEgressCaIn(userNssDb(home));

const session = await startDesktop({
  id: 'sandbox',
  daemon: 'in-process',
  width: config.width,
  height: config.height,
  depth: config.depth,
  withGlx: config.withGlx,
  vncPort: config.vncPort,
  // Viewers inside the sandbox's network namespace are unreachable from outside: the control
  // plane connects to this socket instead.
  vncSocket: { fd: VNC_SOCKET_FD },
  guestSocket: { fd: GUEST_SOCKET_FD },
  guestTokenDigest: tokenDigest,
  // The sandbox's environment is already the allow-list; the pool's env goes to the apps.
  baseEnv: inheritedEnv(),
  appEnv: config.appEnv,
  markProcesses: false,
});

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await session.stop();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
// Requests that fail must not take the desktop's driver down.
process.on('unhandledRejection', () => undefined);
// stdout and stderr are pipes the launcher reads; a desktop outlives a launcher's restart, and
// a write after that fails with EPIPE, which must cost the output, not the desktop.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

writeSync(
  READY_FD,
  `${JSON.stringify({
    display: session.display,
    dbusAddress: session.dbusAddress,
    a11yBusAddress: session.a11yBusAddress,
    vncPort: session.vncPort,
    pids: session.pids,
    env: session.env,
  })}\n`,
);
closeSync(READY_FD);
