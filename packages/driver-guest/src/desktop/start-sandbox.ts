import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { chown, mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { inheritedEnv } from '../env.js';
import { daemonNodeArgs } from './daemon-node-flags.js';
import {
  bwrapOptions,
  groupText,
  guestCodeMounts,
  passwdText,
  sandboxEnv,
  sandboxPath,
} from './sandbox-spec.js';
import { claimSandboxUid, releaseSandboxUid, releaseSandboxUidSync } from './sandbox-uid.js';
import {
  exitHooks,
  liveSessions,
  SESSION_FILE,
  sessionDir,
  type SessionFile,
} from './session-registry.js';
import { MARKER_VAR, isAlive, killSession, processStartTime } from './session-processes.js';
import { readFirstLine } from './spawn-detached.js';
import type { DesktopOptions, DesktopPids, DesktopSession } from './start-desktop.js';

const entryScript = () =>
  fileURLToPath(new URL('../../dist/desktop/sandbox-entry.js', import.meta.url));
const SYSTEM_PATH = '/usr/sbin:/usr/bin:/sbin:/bin';
/** What the launcher needs (setpriv and prlimit only as root), with their Debian packages. */
const TOOLS: [string, string][] = [
  ['bwrap', 'bubblewrap'],
  ['setpriv', 'util-linux'],
  ['prlimit', 'util-linux'],
];
/** Processes and threads one sandbox may have (a browser alone runs a few hundred threads). */
const SANDBOX_MAX_TASKS = 4096;
/** The launcher's descriptors (see sandbox-entry.ts): args, token, config, info, ready. */
const FD = { args: 3, token: 4, config: 5, info: 6, ready: 7 };

/** The pid namespace of a process, as `pid:[inode]`, or null when it is gone. */
function pidNamespaceOf(pid: number | 'self'): string | null {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return null;
  }
}

/** Host pids of every process in pid namespace `ns`, by their pid inside it. */
function processesIn(ns: string): Map<number, number> {
  const found = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || pidNamespaceOf(Number(name)) !== ns) continue;
    try {
      const status = readFileSync(`/proc/${name}/status`, 'utf8');
      const nspid = /^NSpid:\s+(.*)$/m.exec(status)?.[1]?.trim().split(/\s+/);
      if (!/^State:\s+[ZX]/m.test(status)) found.set(Number(nspid?.at(-1)), Number(name));
    } catch {
      /* exited meanwhile */
    }
  }
  return found;
}

/**
 * startSandboxedDesktop runs a whole desktop (Xvfb, session bus, fluxbox, a11y bus, x11vnc and
 * the guest driver, and everything the driver launches) in one bubblewrap sandbox: its own
 * user (a host uid of its own when we are root, through setpriv; our own uid mapped by a user
 * namespace otherwise), mount, PID, IPC, UTS, cgroup and network namespaces, the allow-listed
 * environment of sandbox-spec.ts, and nothing of this machine's files but the read-only system,
 * the guest driver's code and a socket directory. The guest driver and x11vnc listen on unix
 * sockets in that directory, which this process owns (`guestUrl` http+unix://…, `vncSocket`).
 * The token reaches the daemon through a descriptor, never an environment or a file.
 */
export async function startSandboxedDesktop(options: DesktopOptions): Promise<DesktopSession> {
  const started = performance.now();
  const id = options.id ?? `desk_${randomBytes(8).toString('hex')}`;
  const script = entryScript();
  if (!existsSync(script))
    throw new Error(`${script} is missing: build @cubicle/driver-guest first`);
  const isRoot = process.getuid?.() === 0;
  for (const [tool, pkg] of isRoot ? TOOLS : TOOLS.slice(0, 1))
    if (!SYSTEM_PATH.split(':').some((bin) => existsSync(join(bin, tool))))
      throw new Error(`${tool} is missing: local desktops run in a sandbox (install ${pkg})`);
  const dir = sessionDir(id);
  await rm(dir, { recursive: true, force: true });
  // Traversable (not listable) by the sandbox's host uid: bubblewrap, running as it, opens the
  // socket directory and the passwd/group files below.
  await mkdir(dir, { mode: 0o711 });
  const uid = isRoot ? await claimSandboxUid(id) : null;
  const socketDir = join(dir, 'sock');
  await mkdir(socketDir, { mode: 0o700 });
  if (uid !== null) await chown(socketDir, uid, uid);
  const passwdFile = join(dir, 'passwd');
  const groupFile = join(dir, 'group');
  await writeFile(passwdFile, passwdText(), { mode: 0o644 });
  await writeFile(groupFile, groupText(), { mode: 0o644 });
  const log = await open(join(dir, 'sandbox.log'), 'a', 0o600);
  const code = guestCodeMounts();
  const args = bwrapOptions({
    socketDir,
    passwdFile,
    groupFile,
    code,
    env: sandboxEnv(inheritedEnv()),
    infoFd: FD.info,
  });
  // As root, the sandbox gets its own uid, and with it a task limit of its own (RLIMIT_NPROC
  // counts per uid): a fork bomb inside stops there instead of starving the machine.
  const asUser =
    uid === null
      ? []
      : [
          'prlimit',
          `--nproc=${SANDBOX_MAX_TASKS}`,
          'setpriv',
          `--reuid=${uid}`,
          `--regid=${uid}`,
          '--clear-groups',
          '--inh-caps=-all',
        ];
  let child: ChildProcess;
  try {
    const inside = [process.execPath, ...daemonNodeArgs(sandboxPath(code, script))];
    const [command, ...rest] = [...asUser, 'bwrap', '--args', String(FD.args), '--', ...inside];
    child = spawn(command!, rest, {
      // The marker lets stopDesktopById find a sandbox whose session directory is gone; it is in
      // the environment of bubblewrap's own processes only, never of the sandbox's.
      env: { PATH: SYSTEM_PATH, [MARKER_VAR]: id },
      detached: true,
      stdio: ['ignore', log.fd, log.fd, 'pipe', 'pipe', 'pipe', 'pipe', 'pipe'],
    });
  } finally {
    await log.close();
  }
  child.once('error', () => undefined);
  const stdio = child.stdio as unknown as Array<Readable & Writable>;
  const token = options.guestToken ?? randomBytes(32).toString('hex');
  stdio[FD.args]!.end(Buffer.from(args.map((a) => `${a}\0`).join('')));
  stdio[FD.token]!.end(Buffer.from(token));
  stdio[FD.config]!.end(
    JSON.stringify({
      width: options.width ?? 1280,
      height: options.height ?? 800,
      depth: options.depth ?? 24,
      withGlx: options.withGlx ?? false,
      // x11vnc's port inside the sandbox's own network namespace: always free, so fixed (as in
      // a Pod); reached from outside only through the socket.
      vncPort: options.vncPort ?? 5900,
      appEnv: options.appEnv ?? {},
    }),
  );
  for (const fd of [FD.args, FD.token, FD.config]) stdio[fd]!.on('error', () => undefined);

  let initPid: number | null = null;
  const killSandbox = () => {
    // SIGKILL of the namespace's PID 1 ends every process in it; bubblewrap outside then exits.
    for (const pid of [initPid, child.pid]) {
      try {
        if (pid) process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  };
  const killOnExit = () => {
    killSandbox();
    rmSync(dir, { recursive: true, force: true });
    if (uid !== null) releaseSandboxUidSync(id, uid);
  };
  exitHooks.add(killOnExit);
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      exitHooks.delete(killOnExit);
      liveSessions.delete(id);
      killSandbox();
      await killSession(id, new Set());
      await rm(dir, { recursive: true, force: true });
      if (uid !== null) await releaseSandboxUid(id, uid);
    })());
  liveSessions.set(id, stop);

  try {
    const info = (await readJsonObject(stdio[FD.info]!, child, 10_000).catch(async (err) => {
      throw new Error(
        `the sandbox did not start (${(err as Error).message}): ${await logTail(dir)}`,
      );
    })) as { 'child-pid'?: number };
    initPid = info['child-pid'] ?? null;
    const startTime = initPid === null ? null : await processStartTime(initPid);
    const ns = initPid === null ? null : pidNamespaceOf(initPid);
    if (initPid === null || startTime === null || ns === null || ns === pidNamespaceOf('self'))
      throw new Error(`the sandbox exited during start-up: ${await logTail(dir)}`);
    const record: SessionFile = { id, sandbox: { pid: initPid, startTime, uid } };
    await writeFile(join(dir, SESSION_FILE), JSON.stringify(record), { mode: 0o600 });
    const line = await readFirstLine(stdio[FD.ready]!, child, 'the desktop', 30_000).catch(
      async (err) => {
        throw new Error(`${(err as Error).message}: ${await logTail(dir)}`);
      },
    );
    for (const fd of [FD.info, FD.ready]) stdio[fd]!.destroy();
    const ready = JSON.parse(line) as {
      display: string;
      dbusAddress: string;
      a11yBusAddress: string;
      vncPort: number;
      pids: DesktopPids;
      env: Record<string, string>;
    };
    // The desktop's processes as this machine numbers them (they report their own numbers).
    const host = processesIn(ns);
    const hostPid = (inner: number | null) => (inner === null ? null : (host.get(inner) ?? null));
    const pids: DesktopPids = {
      xvfb: hostPid(ready.pids.xvfb) ?? initPid,
      sessionBus: hostPid(ready.pids.sessionBus) ?? initPid,
      windowManager: hostPid(ready.pids.windowManager) ?? initPid,
      x11vnc: hostPid(ready.pids.x11vnc),
      daemon: hostPid(ready.pids.daemon),
    };
    const guestSocket = join(socketDir, 'guest.sock');
    return {
      id,
      display: ready.display,
      dbusAddress: ready.dbusAddress,
      a11yBusAddress: ready.a11yBusAddress,
      vncPort: ready.vncPort,
      vncHost: '127.0.0.1',
      vncSocket: join(socketDir, 'vnc.sock'),
      guestUrl: `http+unix://${encodeURIComponent(guestSocket)}`,
      guestToken: token,
      sandbox: { initPid, hostUid: uid },
      pids,
      env: ready.env,
      startMs: performance.now() - started,
      listProcesses: async () => {
        const live = [...processesIn(ns).values()];
        if (child.pid && (await isAlive(child.pid))) live.push(child.pid);
        return live.sort((x, y) => x - y);
      },
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** readJsonObject reads a stream until what arrived parses as one JSON value. */
function readJsonObject(stream: Readable, child: ChildProcess, timeoutMs: number) {
  return new Promise<unknown>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => finish(new Error('timed out')), timeoutMs);
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      try {
        finish(null, JSON.parse(text));
      } catch {
        /* not whole yet */
      }
    };
    const onExit = () => finish(new Error('bubblewrap exited'));
    const finish = (err: Error | null, value?: unknown) => {
      clearTimeout(timer);
      stream.off('data', onData);
      child.off('exit', onExit);
      if (err) reject(err);
      else resolve(value);
    };
    stream.on('data', onData);
    child.once('exit', onExit);
  });
}

async function logTail(dir: string): Promise<string> {
  const text = await readFile(join(dir, 'sandbox.log'), 'utf8').catch(() => '');
  return text.trim().split('\n').slice(-5).join(' | ') || '(no output)';
}
