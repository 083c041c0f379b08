import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, readFileSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { chmod, chown, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { ARCHIVE_HOST_STAGE_NAME } from '@cubicle/contract/guest';
import { bindUnixSocket } from '@cubicle/unix-peer';
import { inheritedEnv } from '../env.js';
import { daemonNodeArgs } from './daemon-node-flags.js';
import { OutputTail } from './output-tail.js';
import {
  applyCpuLimit,
  createSandboxCgroup,
  joinSandboxCgroup,
  type SandboxCgroup,
} from './sandbox-cgroup.js';
import {
  liveCgroups,
  releaseSandboxResources,
  sandboxOutputs,
  sandboxResourceEvents,
} from './sandbox-resources.js';
import { sweepAbandonedSandboxCgroups } from './sandbox-cgroup-sweep.js';
import { bwrapOptions, groupText, passwdText, SANDBOX_PATHS, sandboxEnv } from './sandbox-spec.js';
import { seccompArch, seccompProgram } from './seccomp-filter.js';
import { stageGuestCode } from './stage-guest-code.js';
import { thawBeforeStop } from './pause-sandbox.js';
import { claimSandboxUid, releaseSandboxUid, releaseSandboxUidSync } from './sandbox-uid.js';
import {
  exitHooks,
  hostStageDir,
  liveSessions,
  SESSION_FILE,
  sessionDir,
  type SessionFile,
} from './session-registry.js';
import { MARKER_VAR, isAlive, killSession, processStartTime } from './session-processes.js';
import { readFirstLine } from './spawn-detached.js';
import type { DesktopOptions, DesktopPids, DesktopSession } from './desktop-session.js';

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
/** A pool's defaults, for a sandboxed desktop started without limits (tests, benches). */
const DEFAULT_LIMITS = { cpuMillis: 1000, memoryMb: 2048 };
/** Data bubblewrap reads from the launcher: /etc/passwd, /etc/group, the seccomp program. */
const DATA_FD = {
  passwd: 10,
  group: 11,
  seccomp: 12,
  resolvConf: 13,
  caBundle: 14,
  egressCa: 15,
};
/**
 * The launcher's descriptors (see sandbox-entry.ts): args, token, config, info, ready, and the
 * guest's and VNC's sockets (bound here, listened on inside).
 */
const FD = { args: 3, token: 4, config: 5, info: 6, ready: 7, guestSocket: 8, vncSocket: 9 };

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
  if (options.network && !isRoot)
    throw new Error('a sandbox network (egress) needs the launcher to run as root');
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
  const sockets = await bindSandboxSockets(socketDir, uid, options.socketGid);
  const hostStage = await makeHostStage(id, uid, options.socketGid);
  const staged = await stageGuestCode();
  const limits = { ...DEFAULT_LIMITS, ...options.limits, pids: SANDBOX_MAX_TASKS };
  const arch = seccompArch();
  const args = bwrapOptions({
    passwdFd: DATA_FD.passwd,
    groupFd: DATA_FD.group,
    seccompFd: arch === null ? null : DATA_FD.seccomp,
    memoryMb: limits.memoryMb,
    code: [{ host: staged.dir, sandbox: SANDBOX_PATHS.code }],
    hostStage,
    env: sandboxEnv(inheritedEnv()),
    infoFd: FD.info,
    ...(options.network ? { resolvConfFd: DATA_FD.resolvConf } : {}),
    ...(options.network?.caBundle ? { caBundleFd: DATA_FD.caBundle } : {}),
    ...(options.network?.egressCa ? { egressCaFd: DATA_FD.egressCa } : {}),
  });
  const cgroup = await createSandboxCgroup(id, limits);
  if (cgroup) await sweepAbandonedSandboxCgroups(); // those of sandboxes whose stop never ran
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
    const inside = [
      process.execPath,
      ...daemonNodeArgs(join(SANDBOX_PATHS.code, staged.relPath(script))),
    ];
    // Joined first, while still root: setns needs CAP_SYS_ADMIN, which setpriv then drops.
    const joinNet = options.network ? ['nsenter', `--net=${options.network.netnsPath}`] : [];
    const [command, ...rest] = [
      ...joinNet,
      ...asUser,
      'bwrap',
      '--args',
      String(FD.args),
      '--',
      ...inside,
    ];
    child = spawn(command!, rest, {
      // The marker lets stopDesktopById find a sandbox whose session directory is gone; it is in
      // the environment of bubblewrap's own processes only, never of the sandbox's.
      env: { PATH: SYSTEM_PATH, [MARKER_VAR]: id },
      detached: true,
      // Descriptors 3-7 are pipes, 8 and 9 the sockets (FD above).
      stdio: [
        'ignore',
        // stdout and stderr: pipes this process reads into a capped tail (OutputTail).
        'pipe',
        'pipe',
        'pipe',
        'pipe',
        'pipe',
        'pipe',
        'pipe',
        sockets.guestFd,
        sockets.vncFd,
        'pipe', // DATA_FD.passwd
        'pipe', // DATA_FD.group
        'pipe', // DATA_FD.seccomp
        'pipe', // DATA_FD.resolvConf
        'pipe', // DATA_FD.caBundle
        'pipe', // DATA_FD.egressCa
      ],
    });
  } finally {
    // The sandbox holds them now (or never will); this process must not keep listening ends.
    closeSync(sockets.guestFd);
    closeSync(sockets.vncFd);
  }
  child.once('error', () => undefined);
  const stdio = child.stdio as unknown as Array<Readable & Writable>;
  const output = new OutputTail();
  sandboxOutputs.set(id, output);
  for (const stream of [stdio[1]!, stdio[2]!])
    stream.on('data', (chunk: Buffer) => output.push(chunk));
  if (cgroup) liveCgroups.set(id, cgroup);
  const token = options.guestToken ?? randomBytes(32).toString('hex');
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
  for (const fd of [FD.args, FD.token, FD.config, ...Object.values(DATA_FD)])
    stdio[fd]!.on('error', () => undefined);
  /** failure explains a start that went wrong: bubblewrap's own words, and an OOM kill. */
  const failure = async (what: string) => {
    await outputEnded(child, 1000);
    const events = await sandboxResourceEvents(id).catch(() => null);
    const oom = events?.oomKills
      ? ` (out of memory: ${events.oomKills} process(es) killed at the ${limits.memoryMb} MiB limit)`
      : '';
    return new Error(`${what}${oom}: ${output.lastLines()}`);
  };

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
    rmSync(hostStage, { recursive: true, force: true });
    if (uid !== null) releaseSandboxUidSync(id, uid);
  };
  exitHooks.add(killOnExit);
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      exitHooks.delete(killOnExit);
      liveSessions.delete(id);
      await thawBeforeStop(id); // a paused desktop's processes die only once thawed
      killSandbox();
      await killSession(id, new Set());
      await releaseSandboxResources(id, cgroup);
      await rm(dir, { recursive: true, force: true });
      await rm(hostStage, { recursive: true, force: true });
      if (uid !== null) await releaseSandboxUid(id, uid);
    })());
  liveSessions.set(id, stop);

  try {
    // bubblewrap waits for its options on FD.args: its first process joins the cgroup before
    // it can fork, so everything of the sandbox is counted from its start.
    if (cgroup) await joinCgroup(cgroup, child);
    stdio[DATA_FD.passwd]!.end(passwdText());
    stdio[DATA_FD.group]!.end(groupText());
    stdio[DATA_FD.seccomp]!.end(arch === null ? Buffer.alloc(0) : seccompProgram(arch));
    stdio[DATA_FD.resolvConf]!.end(options.network?.resolvConf ?? '');
    stdio[DATA_FD.caBundle]!.end(options.network?.caBundle ?? '');
    stdio[DATA_FD.egressCa]!.end(options.network?.egressCa ?? '');
    stdio[FD.args]!.end(Buffer.from(args.map((a) => `${a}\0`).join('')));
    const info = (await readJsonObject(stdio[FD.info]!, child, 10_000).catch(async (err) => {
      throw await failure(`the sandbox did not start (${(err as Error).message})`);
    })) as { 'child-pid'?: number };
    initPid = info['child-pid'] ?? null;
    const startTime = initPid === null ? null : await processStartTime(initPid);
    const ns = initPid === null ? null : pidNamespaceOf(initPid);
    if (initPid === null || startTime === null || ns === null || ns === pidNamespaceOf('self'))
      throw await failure('the sandbox exited during start-up');
    const record: SessionFile = {
      id,
      sandbox: { pid: initPid, startTime, uid },
      ...(cgroup ? { cgroup } : {}),
      code: staged.key,
    };
    await writeFile(join(dir, SESSION_FILE), JSON.stringify(record), { mode: 0o600 });
    const line = await readFirstLine(stdio[FD.ready]!, child, 'the desktop', 30_000).catch(
      async (err) => {
        throw await failure((err as Error).message);
      },
    );
    for (const fd of [FD.info, FD.ready]) stdio[fd]!.destroy();
    // Booted on Cubicle's own code; from here on the pool's CPU share holds.
    if (cgroup) await applyCpuLimit(cgroup, limits);
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
    return {
      id,
      display: ready.display,
      dbusAddress: ready.dbusAddress,
      a11yBusAddress: ready.a11yBusAddress,
      vncPort: ready.vncPort,
      vncHost: '127.0.0.1',
      vncSocket: sockets.vncPath,
      guestUrl: `http+unix://${encodeURIComponent(sockets.guestPath)}`,
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

/**
 * bindSandboxSockets binds the guest's and VNC's unix sockets in `socketDir`, a directory only
 * this process's user can write and that is never mounted in the sandbox: the sandbox gets the
 * bound descriptors and listens on them, so it can answer on its sockets but never replace,
 * rename or redirect the paths the control plane connects to. Each socket file belongs to the
 * sandbox's host uid (our own when not root), which connectSandboxSocket compares with the
 * listening peer; `socketGid` lets an unprivileged API process of that group connect.
 */
async function bindSandboxSockets(socketDir: string, uid: number | null, socketGid?: number) {
  await mkdir(socketDir, { mode: 0o700 });
  const ownUid = process.getuid?.() ?? 0;
  const ownGid = process.getgid?.() ?? 0;
  if (socketGid !== undefined) {
    await chown(socketDir, ownUid, socketGid);
    await chmod(socketDir, 0o710);
  }
  const guestPath = join(socketDir, 'guest.sock');
  const vncPath = join(socketDir, 'vnc.sock');
  const guestFd = bindUnixSocket(guestPath);
  let vncFd: number;
  try {
    vncFd = bindUnixSocket(vncPath);
  } catch (err) {
    closeSync(guestFd);
    throw err;
  }
  try {
    for (const path of [guestPath, vncPath]) {
      await chown(path, uid ?? ownUid, socketGid ?? ownGid);
      await chmod(path, socketGid === undefined ? 0o600 : 0o660);
    }
  } catch (err) {
    closeSync(guestFd);
    closeSync(vncFd);
    throw err;
  }
  return { guestPath, vncPath, guestFd, vncFd };
}

/**
 * makeHostStage makes the sandbox's host stage (ARCHIVE_HOST_STAGE_NAME, bound read-only into
 * it): the control plane on this machine writes a restore's chunks there. It belongs to the
 * sandbox's host uid, which bubblewrap runs as to bind it and the guest reads it as (the files
 * are written 0644; the directory keeps every other user of this machine out); its group is the
 * API's (`socketGid`, group-writable) or ours, and we write as its owner or root. It lives at
 * hostStageDir, not in the session directory: a bind's source path shows in the sandbox's
 * /proc/self/mountinfo, and the session's names the desktop (sandbox-limits e2e).
 */
async function makeHostStage(id: string, uid: number | null, socketGid?: number) {
  const path = hostStageDir(id);
  await rm(path, { recursive: true, force: true });
  await mkdir(path, { mode: 0o700 });
  await chown(path, uid ?? process.getuid?.() ?? 0, socketGid ?? process.getgid?.() ?? 0);
  await chmod(path, socketGid === undefined ? 0o750 : 0o770);
  // The control plane finds the stage beside the guest's socket (hostStageOf).
  await symlink(path, join(sessionDir(id), ARCHIVE_HOST_STAGE_NAME));
  return path;
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

/**
 * outputEnded waits (at most `ms`) until the child's stdout and stderr are drained: bubblewrap's
 * message about why it failed arrives just before it exits, and belongs in the error.
 */
async function outputEnded(child: ChildProcess, ms: number): Promise<void> {
  const streams = [child.stdout, child.stderr].filter((s): s is Readable => s !== null);
  await Promise.race([
    Promise.all(
      streams.map((s) =>
        s.readableEnded || s.destroyed ? null : new Promise((resolve) => s.once('close', resolve)),
      ),
    ),
    new Promise((resolve) => setTimeout(resolve, ms).unref()),
  ]);
}

/** joinCgroup moves the waiting bubblewrap into `cgroup` (the caller stops it on failure). */
async function joinCgroup(cgroup: SandboxCgroup, child: ChildProcess) {
  try {
    if (!child.pid) throw new Error('bubblewrap did not start');
    await joinSandboxCgroup(cgroup, child.pid);
  } catch (err) {
    throw new Error(`the sandbox could not join its cgroup: ${(err as Error).message}`);
  }
}
