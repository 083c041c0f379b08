// The shape shared by every private server process, and how one is spawned and watched.
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import type { ServiceUser } from './fs-setup.js';
import { isRunning, processStartTime, type ProcessExit } from './proc.js';

/** A line of progress from the embedded servers (what was started, reused or moved). */
export type LogFn = (line: string) => void;

/** A running server process we can stop precisely. */
export interface ServiceProcess {
  /** The server's own pid (the postmaster, redis-server), not a wrapper's. */
  readonly pid: number;
  /** Kernel start time of `pid`; together they identify the process even if the pid is reused later. */
  readonly startTime: string | undefined;
  /** Resolves when the process has exited, for whatever reason. */
  readonly exited: Promise<ProcessExit>;
  /** The file its stdout and stderr go to. */
  readonly logFile: string;
  /** True when an already running server was adopted; stop() then leaves it running. */
  readonly isReused: boolean;
  /** Its graceful stop signal, and whether the signal goes to its whole process group (for reapers). */
  readonly stopSignal: NodeJS.Signals;
  readonly isGroupLeader: boolean;
  /** The last lines of its log. */
  logTail(lines?: number): string[];
  /** Stops it (graceful signal, SIGKILL after a timeout) and resolves once nothing of it runs. */
  stop(): Promise<void>;
}

/** What to do when the data directory already belongs to a live server. */
export type IfRunning = 'error' | 'reuse' | 'restart';

/** The environment servers get: nothing inherited, so a stray PGPORT or PGDATA cannot steer them. */
// (Asserted rather than annotated: Next.js, whose typecheck also reads the test harness, declares
// NODE_ENV required in ProcessEnv, and servers must not get one.)
export const SERVER_ENV = {
  PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  LANG: 'C',
  LC_ALL: 'C',
} as unknown as NodeJS.ProcessEnv;

export interface SpawnedServer {
  pid: number;
  startTime: string | undefined;
  exited: Promise<ProcessExit>;
}

/**
 * spawnServer starts `command` as a process-group leader (so a terminal's Ctrl-C reaches only our
 * supervisor, which stops servers in order) with output appended to `logFile`.
 */
export function spawnServer(
  command: string,
  args: string[],
  options: { cwd: string; logFile: string; user: ServiceUser | undefined; input?: string },
): SpawnedServer {
  const out = openSync(options.logFile, 'a');
  try {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: SERVER_ENV,
      // `input` (a config holding secrets) goes through a pipe that closes after it.
      stdio: [options.input === undefined ? 'ignore' : 'pipe', out, out],
      detached: true,
      ...(options.user ? { uid: options.user.uid, gid: options.user.gid } : {}),
    });
    const exited = new Promise<ProcessExit>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', () => resolve({ code: null, signal: null }));
    });
    if (child.pid === undefined) throw new Error(`could not start ${command}`);
    if (options.input !== undefined) {
      child.stdin?.on('error', () => {
        // It exited before reading: `exited` and its log say why.
      });
      child.stdin?.end(options.input);
    }
    // The supervisor tracks the server through `exited`; it must not keep Node alive by itself.
    child.unref();
    return { pid: child.pid, startTime: processStartTime(child.pid), exited };
  } finally {
    closeSync(out);
  }
}

/** watchExit resolves when a process we did not start (an adopted server) is gone. */
export function watchExit(pid: number, startTime: string | undefined): Promise<ProcessExit> {
  return new Promise((resolve) => {
    const timer = setInterval(() => {
      if (isRunning(pid, startTime)) return;
      clearInterval(timer);
      resolve({ code: null, signal: null });
    }, 500);
    timer.unref();
  });
}
