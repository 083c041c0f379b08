// A private Redis: Debian's redis-server on a unix socket, no TCP port.
import { existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findRedisServer } from './binaries.js';
import { ensurePasswordFile } from './credentials.js';
import {
  pingWithPassword,
  redisConfig,
  requirePasswordLive,
  type RedisUser,
} from './redis-auth.js';
import { socketDirFor, tailFile } from './fs-setup.js';
import { isRunning, processArgv, processCwd, processStartTime, stopProcess } from './proc.js';
import type { ProcessExit } from './proc.js';
import {
  spawnServer,
  watchExit,
  type IfRunning,
  type LogFn,
  type ServiceProcess,
} from './service.js';

export interface StartRedisOptions {
  /** Working directory: pid file, log, socket (when the path is short enough) and AOF files. */
  dir: string;
  log?: LogFn;
  /** 'aof' keeps an append-only file in `dir` so queued jobs survive a restart. Default 'none'. */
  persistence?: 'none' | 'aof';
  /** When a live redis already serves `dir`: fail (default), adopt it, or stop and restart it. */
  ifRunning?: IfRunning;
  /** Default 30 s. */
  startTimeoutMs?: number;
  /** Grace period after SIGTERM before SIGKILL. Default 10 s. */
  stopTimeoutMs?: number;
  /** The default user's password (made on first use, mode 0600). Default: `<dir>.password`. */
  passwordFile?: string;
  /** Restricted ACL users; each one's password is kept in `<dir>.<name>.password`. */
  users?: RedisUser[];
  /** Where the socket goes. Default: `dir` (mode 0700); with `socketGid`, `<dir>-socket`. */
  socketDir?: string;
  /** A group whose members may reach the socket: its directory becomes mode 0710, that group's. */
  socketGid?: number;
}

export interface RedisServer extends ServiceProcess {
  /**
   * `unix://:<password>@localhost/abs/path/redis.sock` (the default user); turn it into ioredis
   * options with redisOptionsFromUrl.
   */
  readonly url: string;
  /** The URL of one of the `users`, with its name and password. */
  urlFor(user: string): string;
  readonly socketPath: string;
  readonly dir: string;
}

interface PidRecord {
  pid: number;
  startTime: string | undefined;
  socketPath: string;
}

// Our pid file holds the pid and the socket path (so a later run can adopt the server).
const PID_FILE = 'redis.pid';

function readPidRecord(dir: string): PidRecord | undefined {
  try {
    const [pid, socketPath] = readFileSync(join(dir, PID_FILE), 'utf8').split('\n');
    if (!Number.isInteger(Number(pid)) || !socketPath) return undefined;
    return { pid: Number(pid), startTime: processStartTime(Number(pid)), socketPath };
  } catch {
    return undefined;
  }
}

function findLiveRedis(dir: string, log: LogFn): PidRecord | undefined {
  const recorded = readPidRecord(dir);
  if (!recorded) return undefined;
  const isOurs =
    isRunning(recorded.pid) &&
    processCwd(recorded.pid) === realpathSync(dir) &&
    processArgv(recorded.pid).some((arg) => arg.includes('redis-server'));
  if (isOurs) return recorded;
  log(`redis: removing stale ${PID_FILE} (pid ${recorded.pid} is not a running redis-server)`);
  rmSync(join(dir, PID_FILE), { force: true });
  removeTemporarySocketDir(recorded.socketPath);
  return undefined;
}

function removeTemporarySocketDir(socketPath: string): void {
  if (socketPath.startsWith('/tmp/cubicle-redis-')) {
    rmSync(dirname(socketPath), { recursive: true, force: true });
  }
}

/**
 * startRedis starts (or, with ifRunning, adopts) a private redis-server in `dir` listening only
 * on a unix socket, and resolves once it answers PING.
 */
export async function startRedis(options: StartRedisOptions): Promise<RedisServer> {
  const log = options.log ?? (() => {});
  const dir = resolve(options.dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const logFile = join(dir, 'redis.log');
  const logTail = (lines?: number) => tailFile(logFile, lines);
  const password = ensurePasswordFile(resolve(options.passwordFile ?? `${dir}.password`)).value;
  const users = (options.users ?? []).map((user) => ({
    user,
    password: ensurePasswordFile(`${dir}.${user.name}.password`).value,
  }));
  const urls = (socketPath: string) => ({
    url: `unix://:${password}@localhost${socketPath}`,
    urlFor: (name: string) => {
      const found = users.find(({ user }) => user.name === name);
      if (!found) throw new Error(`no Redis user ${name}`);
      return `unix://${name}:${found.password}@localhost${socketPath}`;
    },
  });

  const live = findLiveRedis(dir, log);
  if (live) {
    const mode = options.ifRunning ?? 'error';
    if (mode === 'error') throw new Error(`redis (pid ${live.pid}) is already running in ${dir}`);
    if (mode === 'reuse') {
      log(`redis: reusing the running server (pid ${live.pid}) in ${dir}`);
      if (await requirePasswordLive(live.socketPath, password, users))
        log('redis: the running server had no password; it requires one now');
      return {
        ...urls(live.socketPath),
        socketPath: live.socketPath,
        dir,
        pid: live.pid,
        startTime: live.startTime,
        exited: watchExit(live.pid, live.startTime),
        logFile,
        isReused: true,
        stopSignal: 'SIGTERM',
        isGroupLeader: true,
        logTail,
        stop: async () => {},
      };
    }
    log(`redis: stopping the leftover server (pid ${live.pid}) in ${dir}`);
    await stopRedisAt(dir);
  }

  const socket = socketDirFor(
    options.socketGid === undefined ? dir : resolve(options.socketDir ?? `${dir}-socket`),
    'redis.sock',
    'redis',
    undefined,
    options.socketGid,
  );
  if (socket.isTemporary) log(`redis: socket path too long in ${dir}, using ${socket.dir}`);
  const socketPath = join(socket.dir, 'redis.sock');
  const isAof = options.persistence === 'aof';
  // `-`: the passwords come as config on stdin (see redis-auth.ts).
  const args = [
    '-',
    '--port',
    '0',
    '--unixsocket',
    socketPath,
    '--unixsocketperm',
    // With a group, its directory (0710) is the gate: the socket's own group is ours, not theirs.
    options.socketGid === undefined ? '700' : '777',
    '--dir',
    dir,
    '--daemonize',
    'no',
    '--logfile',
    '',
    '--save',
    '',
    '--appendonly',
    isAof ? 'yes' : 'no',
  ];

  const started = Date.now();
  const server = spawnServer(findRedisServer(), args, {
    cwd: dir,
    logFile,
    user: undefined,
    input: redisConfig(password, users),
  });
  writeFileSync(join(dir, PID_FILE), `${server.pid}\n${socketPath}\n`);
  const stop = async (signal: NodeJS.Signals, timeoutMs: number) => {
    await stopProcess({
      pid: server.pid,
      startTime: server.startTime,
      signal,
      isGroup: true,
      timeoutMs,
    });
    rmSync(join(dir, PID_FILE), { force: true });
    if (socket.isTemporary) rmSync(socket.dir, { recursive: true, force: true });
  };
  try {
    await waitForPong(socketPath, password, server.exited, options.startTimeoutMs ?? 30_000);
  } catch (error) {
    await stop('SIGKILL', 1_000);
    const tail = logTail(20).join('\n');
    throw new Error(`redis did not start: ${(error as Error).message}\n${tail}`, { cause: error });
  }
  log(`redis ready in ${Date.now() - started} ms (pid ${server.pid}, socket ${socketPath})`);

  let stopping: Promise<void> | undefined;
  return {
    ...urls(socketPath),
    socketPath,
    dir,
    pid: server.pid,
    startTime: server.startTime,
    exited: server.exited,
    logFile,
    isReused: false,
    stopSignal: 'SIGTERM',
    isGroupLeader: true,
    logTail,
    stop: () => (stopping ??= stop('SIGTERM', options.stopTimeoutMs ?? 10_000)),
  };
}

async function waitForPong(
  socketPath: string,
  password: string,
  exited: Promise<ProcessExit>,
  timeoutMs: number,
): Promise<void> {
  let exit: ProcessExit | undefined;
  void exited.then((value) => (exit = value));
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  for (;;) {
    if (exit) throw new Error(`it exited (code ${exit.code}, signal ${exit.signal})`);
    try {
      last = await pingWithPassword(socketPath, password);
      if (last === '+PONG') return;
    } catch (error) {
      last = (error as Error).message;
    }
    if (Date.now() > deadline) throw new Error(`no PONG after ${timeoutMs} ms (${last})`);
    await sleep(25);
  }
}

/**
 * stopRedisAt stops the redis-server our pid file in `dir` names, if it runs (a leftover of a run
 * that was killed); it resolves true when it stopped one.
 */
export async function stopRedisAt(dir: string, log?: LogFn): Promise<boolean> {
  if (!existsSync(join(dir, PID_FILE))) return false;
  const live = findLiveRedis(dir, log ?? (() => {}));
  if (!live) return false;
  await stopProcess({ pid: live.pid, startTime: live.startTime, signal: 'SIGTERM', isGroup: true });
  rmSync(join(dir, PID_FILE), { force: true });
  removeTemporarySocketDir(live.socketPath);
  return true;
}
