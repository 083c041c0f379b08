// The cluster's server processes (etcd, kube-apiserver): each the leader of its own process group,
// logging to a file, watched by the harness reaper so a SIGKILLed Vitest does not leave them running.
import { spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  isRunning,
  processStartTime,
  stopProcess,
  type ProcessExit,
  type Reaper,
} from '../../../packages/embedded/src/index.js';

export interface ClusterProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  /** Resolves when the process has exited, for whatever reason. */
  readonly exited: Promise<ProcessExit>;
  isRunning(): boolean;
  logTail(lines?: number): string;
  /** SIGTERM to its group, SIGKILL after the grace period; resolves once nothing of it runs. */
  stop(): Promise<void>;
}

/** freeLoopbackPort asks the kernel for a port that is free on 127.0.0.1 right now (not reserved). */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function tail(file: string, lines: number): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

/** spawnClusterProcess starts `command` detached (its own process group) with output in `logFile`. */
export function spawnClusterProcess(
  name: string,
  command: string,
  args: string[],
  options: { logFile: string; cwd: string; reaper: Reaper },
): ClusterProcess {
  const out = openSync(options.logFile, 'a');
  let pid: number;
  let exited: Promise<ProcessExit>;
  try {
    const child = spawn(command, args, {
      cwd: options.cwd,
      // Nothing inherited: a stray KUBECONFIG or ETCD_* variable must not steer our servers.
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: options.cwd },
      stdio: ['ignore', out, out],
      detached: true,
    });
    exited = new Promise<ProcessExit>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      child.once('error', () => resolve({ code: null, signal: null }));
    });
    if (child.pid === undefined) throw new Error(`could not start ${command}`);
    child.unref();
    pid = child.pid;
  } finally {
    closeSync(out);
  }
  const startTime = processStartTime(pid);
  options.reaper.watch({ pid, startTime, stopSignal: 'SIGTERM', isGroupLeader: true });
  let stopping: Promise<void> | undefined;
  return {
    name,
    pid,
    logFile: options.logFile,
    exited,
    isRunning: () => isRunning(pid, startTime),
    logTail: (lines = 30) => tail(options.logFile, lines),
    stop: () =>
      (stopping ??= (async () => {
        await stopProcess({ pid, startTime, signal: 'SIGTERM', isGroup: true, timeoutMs: 15_000 });
        options.reaper.unwatch(pid);
      })()),
  };
}

/**
 * waitUntil polls `check` until it returns true; it fails early (with the log's tail) when the
 * process exits, and after `timeoutMs` otherwise.
 */
export async function waitUntil(
  proc: ClusterProcess,
  what: string,
  check: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (!proc.isRunning()) {
      const exit = await proc.exited;
      throw new Error(
        `${proc.name} exited (code ${exit.code}, signal ${exit.signal}) before ${what}; ` +
          `last lines of ${proc.logFile}:\n${proc.logTail()}`,
      );
    }
    if (Date.now() > deadline) {
      throw new Error(
        `${proc.name}: timed out waiting for ${what}; log ${proc.logFile}:\n${proc.logTail()}`,
      );
    }
    await sleep(100);
  }
}
