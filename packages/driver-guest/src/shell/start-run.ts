import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { stat } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { AppError } from '@cubicle/contract/errors';
import type { ShellExit, ShellRunRequest, ShellSignal } from '@cubicle/contract/guest';

/** Between the polite SIGTERM to a timed-out group and the SIGKILL that follows. */
export const KILL_GRACE_MS = 2000;
/**
 * After the leader exits, output may still be in flight; a background child that inherited the
 * pipes could hold them open forever, so we wait this long for them to close and then let go.
 */
const PIPE_DRAIN_MS = 500;

export interface RunHandle {
  runId: string;
  pid: number;
  stdout: Readable;
  stderr: Readable;
  /** Signals the whole process group; false when it had already ended. */
  kill(signal: ShellSignal, reason?: 'kill' | 'timeout', graceMs?: number): boolean;
  writeStdin(chunk: Buffer): void;
  endStdin(): void;
  done: Promise<ShellExit>;
}

interface StartOptions {
  baseEnv: Record<string, string | undefined>;
  /** Keep stdin open for streamed input instead of writing `request.stdin` and closing it. */
  interactiveStdin?: boolean;
}

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): boolean {
  if (!child.pid) return false;
  try {
    process.kill(-child.pid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * startRun spawns a command as the leader of a new process group, so a timeout or kill reaches
 * everything it started (pipes, subshells, backgrounded children). It refuses a missing cwd or
 * program with 404 before anything runs.
 */
export async function startRun(
  request: ShellRunRequest,
  options: StartOptions,
): Promise<RunHandle> {
  if (request.cwd) {
    const info = await stat(request.cwd).catch(() => null);
    if (!info?.isDirectory())
      throw new AppError('not_found', `cwd ${request.cwd} is not a directory`);
  }
  const [file, ...args] = 'argv' in request ? request.argv : ['/bin/sh', '-c', request.command];
  const runId = request.run_id ?? `run_${randomUUID()}`;
  let child: ChildProcess;
  try {
    child = spawn(file as string, args, {
      cwd: request.cwd ?? '/',
      env: { ...options.baseEnv, ...request.env },
      detached: true,
      stdio: [
        options.interactiveStdin || request.stdin !== undefined ? 'pipe' : 'ignore',
        'pipe',
        'pipe',
      ],
    });
  } catch (err) {
    // spawn throws synchronously on arguments no exec can take (empty program, NUL bytes).
    throw new AppError('validation_failed', `cannot run this command: ${(err as Error).message}`);
  }
  const spawned = await new Promise<Error | null>((resolve) => {
    child.once('spawn', () => resolve(null));
    child.once('error', (err) => resolve(err));
  });
  if (spawned || !child.pid) {
    const code = (spawned as NodeJS.ErrnoException | null)?.code;
    if (code === 'ENOENT') throw new AppError('not_found', `program not found: ${file}`);
    if (code === 'EACCES') throw new AppError('forbidden', `program is not executable: ${file}`);
    throw new AppError(
      'validation_failed',
      `could not start ${file}: ${spawned?.message ?? 'no pid'}`,
    );
  }
  const pid = child.pid;
  child.stdin?.on('error', () => undefined); // EPIPE when the program ignores its input
  if (!options.interactiveStdin && request.stdin !== undefined) child.stdin?.end(request.stdin);

  const startedAt = performance.now();
  let exited = false;
  let endedBy: 'kill' | 'timeout' | null = null;
  let killTimer: NodeJS.Timeout | undefined;

  const kill = (
    signal: ShellSignal,
    reason: 'kill' | 'timeout' = 'kill',
    graceMs: number = KILL_GRACE_MS,
  ) => {
    if (exited) return false;
    const ok = signalGroup(child, signal);
    if (ok && !endedBy) endedBy = reason;
    if (ok && signal !== 'SIGKILL' && !killTimer) {
      killTimer = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
      killTimer.unref();
    }
    return ok;
  };
  const timeout = setTimeout(() => kill('SIGTERM', 'timeout'), request.timeout_ms);

  const done = new Promise<ShellExit>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = true;
      clearTimeout(timeout);
      const finish = () => {
        clearTimeout(killTimer);
        // A timed-out or killed run takes its stragglers with it; a normal exit leaves them be.
        if (endedBy) signalGroup(child, 'SIGKILL');
        resolve({
          run_id: runId,
          pid,
          exit_code: code,
          signal,
          timed_out: endedBy === 'timeout',
          killed: endedBy === 'kill',
          duration_ms: performance.now() - startedAt,
        });
      };
      const drain = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
      }, PIPE_DRAIN_MS);
      let open = 2;
      const closed = () => {
        open -= 1;
        if (open === 0) {
          clearTimeout(drain);
          finish();
        }
      };
      for (const stream of [child.stdout, child.stderr]) {
        if (!stream || stream.destroyed || stream.readableEnded) closed();
        else stream.once('close', closed);
      }
    });
  });

  return {
    runId,
    pid,
    stdout: child.stdout as Readable,
    stderr: child.stderr as Readable,
    kill,
    writeStdin: (chunk) => child.stdin?.write(chunk),
    endStdin: () => child.stdin?.end(),
    done,
  };
}
