// A private PostgreSQL: Debian's binaries, our own data directory, a unix socket only.
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, rmdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { findPostgres, type PostgresBinaries } from './binaries.js';
import { ensurePasswordFile } from './credentials.js';
import {
  canUse,
  fallbackDataDir,
  ownDir,
  postgresServiceUser,
  socketDirFor,
  tailFile,
  type ServiceUser,
} from './fs-setup.js';
import {
  isPasswordOnly,
  requirePasswordRunning,
  requirePasswordStopped,
  run,
} from './postgres-auth.js';
import {
  awaitLeftoverBackends,
  findLivePostmaster,
  readPostmaster,
  type Postmaster,
} from './postmaster-pid.js';
import { stopProcess, type ProcessExit } from './proc.js';
import {
  spawnServer,
  watchExit,
  type IfRunning,
  type LogFn,
  type ServiceProcess,
} from './service.js';

export interface StartPostgresOptions {
  /** Data directory; initialised when empty or missing, reused otherwise. */
  dataDir: string;
  log?: LogFn;
  /**
   * false turns off fsync, synchronous_commit and full_page_writes: faster, and a crash may lose
   * or corrupt data. For throwaway test databases only. Default true.
   */
  isDurable?: boolean;
  /** When a live postgres already serves dataDir: fail (default), adopt it, or stop and restart it. */
  ifRunning?: IfRunning;
  /** Default 200. */
  maxConnections?: number;
  /** How long to wait for "ready". Default 60 s. */
  startTimeoutMs?: number;
  /** Grace period of the fast shutdown before SIGKILL. Default 15 s. */
  stopTimeoutMs?: number;
  /**
   * The superuser's password (made on first use, mode 0600). Default: `<dataDir>.password`,
   * beside the requested data directory (which belongs to the server's user).
   */
  passwordFile?: string;
  /**
   * Where the socket goes. Default: the data directory (mode 0700: the server's user and root
   * only). With `socketGid`, a directory apart (the data directory never opens to a group).
   */
  socketDir?: string;
  /**
   * A group whose members may reach the socket (the unprivileged API of `npm start`): the socket
   * directory becomes mode 0710, owned by that group; the password still gates every connection.
   */
  socketGid?: number;
}

export interface PostgresServer extends ServiceProcess {
  /** Connection URL of `database` as the `postgres` superuser over the unix socket, password included. */
  url(database: string): string;
  /** url('postgres'): for CREATE DATABASE and other admin statements. */
  readonly adminUrl: string;
  /** Where the data actually lives (differs from the request after a fallback). */
  readonly dataDir: string;
  readonly socketDir: string;
  readonly version: number;
}

const PORT = 5432;

/**
 * startPostgres starts (or, with ifRunning, adopts) a private postgres serving `dataDir` and
 * resolves once it accepts connections. Run as root, postgres runs as the `postgres` system user.
 */
export async function startPostgres(options: StartPostgresOptions): Promise<PostgresServer> {
  const log = options.log ?? (() => {});
  const user = postgresServiceUser();
  const requested = resolve(options.dataDir);
  const dataDir = prepareDataDir(requested, user, log);
  const password = ensurePasswordFile(resolve(options.passwordFile ?? `${requested}.password`));

  const live = findLivePostmaster(dataDir, log);
  if (live) {
    const mode = options.ifRunning ?? 'error';
    if (mode === 'error') {
      throw new Error(`postgres (pid ${live.pid}) is already running on ${dataDir}`);
    }
    if (mode === 'reuse') {
      log(`postgres: reusing the running server (pid ${live.pid}) on ${dataDir}`);
      if (!isPasswordOnly(dataDir) || password.isNew) {
        const binaries = findPostgres(pgVersion(dataDir));
        await requirePasswordRunning(binaries, dataDir, live.socketDir, user, password.value, log);
      }
      return adopted(dataDir, live, password.value);
    }
    log(`postgres: stopping the leftover server (pid ${live.pid}) on ${dataDir}`);
    await stopPostgresAt(dataDir);
  }
  await awaitLeftoverBackends(dataDir, log);

  const binaries = await ensureInitialised(dataDir, user, options.isDurable ?? true, log);
  if (!isPasswordOnly(dataDir) || password.isNew) {
    await requirePasswordStopped(binaries, dataDir, user, password.value, log);
  }
  const socket = socketDirFor(
    options.socketGid === undefined ? dataDir : resolve(options.socketDir ?? `${requested}-socket`),
    `.s.PGSQL.${PORT}`,
    'pg',
    user,
    options.socketGid,
  );
  if (socket.isTemporary) log(`postgres: socket path too long in ${dataDir}, using ${socket.dir}`);
  const logFile = join(dataDir, 'postgres.log');
  const settings: Record<string, string | number> = {
    listen_addresses: '',
    port: PORT,
    unix_socket_directories: socket.dir,
    // With a group, the directory (0710, that group) is the gate and the socket is open inside it:
    // the socket's own group is the server's, not the clients'.
    unix_socket_permissions: options.socketGid === undefined ? '0700' : '0777',
    max_connections: options.maxConnections ?? 200,
    ...(options.isDurable === false
      ? { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' }
      : {}),
  };
  const args = ['-D', dataDir];
  for (const [name, value] of Object.entries(settings)) args.push('-c', `${name}=${value}`);

  const started = Date.now();
  const server = spawnServer(binaries.postgres, args, { cwd: dataDir, logFile, user });
  const cleanUp = () => {
    if (socket.isTemporary) rmSync(socket.dir, { recursive: true, force: true });
  };
  try {
    await waitReady(dataDir, server.pid, server.exited, options.startTimeoutMs ?? 60_000);
  } catch (error) {
    await stopProcess({ pid: server.pid, startTime: server.startTime, signal: 'SIGQUIT' });
    cleanUp();
    const tail = tailFile(logFile, 20).join('\n');
    throw new Error(`postgres did not start: ${(error as Error).message}\n${tail}`, {
      cause: error,
    });
  }
  log(
    `postgres ${binaries.version} ready in ${Date.now() - started} ms (pid ${server.pid}, socket ${socket.dir})`,
  );

  let stopping: Promise<void> | undefined;
  return {
    ...connection(dataDir, socket.dir, binaries.version, password.value),
    pid: server.pid,
    startTime: server.startTime,
    exited: server.exited,
    logFile,
    isReused: false,
    stopSignal: 'SIGINT',
    isGroupLeader: false,
    logTail: (lines) => tailFile(logFile, lines),
    stop: () =>
      (stopping ??= (async () => {
        await stopProcess({
          pid: server.pid,
          startTime: server.startTime,
          signal: 'SIGINT',
          timeoutMs: options.stopTimeoutMs ?? 15_000,
        });
        cleanUp();
      })()),
  };
}

function connection(dataDir: string, socketDir: string, version: number, password: string) {
  const url = (database: string) =>
    `postgresql://postgres:${password}@localhost/${encodeURIComponent(database)}?host=${socketDir}`;
  return { url, adminUrl: url('postgres'), dataDir, socketDir, version };
}

function pgVersion(dataDir: string): number {
  return Number(readFileSync(join(dataDir, 'PG_VERSION'), 'utf8').trim());
}

function adopted(dataDir: string, live: Postmaster, password: string): PostgresServer {
  const logFile = join(dataDir, 'postgres.log');
  return {
    ...connection(dataDir, live.socketDir, pgVersion(dataDir), password),
    pid: live.pid,
    startTime: live.startTime,
    exited: watchExit(live.pid, live.startTime),
    logFile,
    isReused: true,
    stopSignal: 'SIGINT',
    isGroupLeader: false,
    logTail: (lines) => tailFile(logFile, lines),
    stop: async () => {},
  };
}

/**
 * prepareDataDir creates the data dir for the server's user. When that user cannot reach it (a
 * repository under /root, mode 700), the data moves to /var/lib/cubicle/<hash of the path>.
 */
function prepareDataDir(requested: string, user: ServiceUser | undefined, log: LogFn): string {
  const existed = existsSync(requested);
  // Parents stay traversable (0755): postgres must walk through them to reach its dir.
  mkdirSync(dirname(requested), { recursive: true, mode: 0o755 });
  ownDir(requested, user);
  if (canUse(requested, user)) return requested;

  if (!existed && readdirSync(requested).length === 0) rmdirSync(requested);
  const fallback = fallbackDataDir(requested);
  log(
    `postgres: user ${user?.name} cannot reach ${requested} (a parent directory is closed to it); ` +
      `keeping the data in ${fallback} instead`,
  );
  mkdirSync(dirname(fallback), { recursive: true, mode: 0o755 });
  ownDir(fallback, user);
  if (!canUse(fallback, user)) throw new Error(`user ${user?.name} cannot use ${fallback} either`);
  return fallback;
}

async function ensureInitialised(
  dataDir: string,
  user: ServiceUser | undefined,
  isDurable: boolean,
  log: LogFn,
): Promise<PostgresBinaries> {
  const versionFile = join(dataDir, 'PG_VERSION');
  if (existsSync(versionFile)) return findPostgres(pgVersion(dataDir));
  if (readdirSync(dataDir).length > 0) {
    throw new Error(`${dataDir} is neither empty nor a PostgreSQL data directory`);
  }
  const binaries = findPostgres();
  const started = Date.now();
  // trust only until requirePasswordStopped replaces pg_hba.conf, before any server listens.
  const args = ['-D', dataDir, '--auth=trust', '-U', 'postgres', '--locale=C', '--encoding=UTF8'];
  if (binaries.version >= 14) args.push('--no-instructions');
  if (!isDurable) args.push('--no-sync');
  const output = await run(binaries.initdb, args, dataDir, user);
  if (output.code !== 0) {
    throw new Error(`initdb failed (exit ${output.code}):\n${output.text}`);
  }
  log(
    `postgres: initdb (PostgreSQL ${binaries.version}) in ${dataDir} took ${Date.now() - started} ms`,
  );
  return binaries;
}

async function waitReady(
  dataDir: string,
  pid: number,
  exited: Promise<ProcessExit>,
  timeoutMs: number,
): Promise<void> {
  let exit: ProcessExit | undefined;
  void exited.then((value) => (exit = value));
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (exit) throw new Error(`it exited (code ${exit.code}, signal ${exit.signal})`);
    const current = readPostmaster(dataDir);
    if (current?.pid === pid && current.status === 'ready') return;
    if (Date.now() > deadline) throw new Error(`not ready after ${timeoutMs} ms`);
    await sleep(25);
  }
}

/**
 * stopPostgresAt stops the postgres serving `dataDir`, if one runs there (a leftover of a run that
 * was killed); it resolves true when it stopped one.
 */
export async function stopPostgresAt(dataDir: string, log?: LogFn): Promise<boolean> {
  if (!existsSync(join(dataDir, 'postmaster.pid'))) return false;
  const live = findLivePostmaster(dataDir, log ?? (() => {}));
  if (!live) return false;
  await stopProcess({ pid: live.pid, startTime: live.startTime, signal: 'SIGINT' });
  if (live.socketDir.startsWith('/tmp/cubicle-pg-')) {
    rmSync(live.socketDir, { recursive: true, force: true });
  }
  return true;
}
