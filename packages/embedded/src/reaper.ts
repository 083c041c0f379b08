// A guard process that stops our servers if the process that started them dies without doing so.
import { spawn } from 'node:child_process';
import type { Socket } from 'node:net';
import { fileURLToPath } from 'node:url';

/** What the reaper needs to stop a process precisely. */
export interface ReapTarget {
  pid: number;
  startTime: string | undefined;
  stopSignal: NodeJS.Signals;
  isGroupLeader: boolean;
}

export interface Reaper {
  /** watch makes the reaper stop `target` if we exit while it still runs. */
  watch(target: ReapTarget): void;
  /** unwatch forgets a process we stopped ourselves. */
  unwatch(pid: number): void;
  /** removeOnExit makes the reaper delete `path` (recursively) after stopping the processes. */
  removeOnExit(path: string): void;
  /** close ends the reaper: it stops whatever is still watched, removes the paths and exits. */
  close(): void;
}

const REAPER_SCRIPT = fileURLToPath(new URL('../bin/reaper.mjs', import.meta.url));

/**
 * startReaper spawns a detached Node process that learns of our servers over a pipe and acts
 * when the pipe closes, i.e. when this process exits for any reason, even SIGKILL. It does not
 * keep this process alive.
 */
export function startReaper(): Reaper {
  const child = spawn(process.execPath, [REAPER_SCRIPT], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  child.unref();
  const pipe = child.stdin as Socket;
  pipe.unref();
  pipe.on('error', () => {
    // The reaper died early; there is nothing better to do than carry on without it.
  });
  const send = (message: object) => {
    if (!pipe.destroyed) pipe.write(`${JSON.stringify(message)}\n`);
  };
  return {
    watch: (target) =>
      send({
        op: 'watch',
        pid: target.pid,
        startTime: target.startTime,
        signal: target.stopSignal,
        isGroup: target.isGroupLeader,
      }),
    unwatch: (pid) => send({ op: 'unwatch', pid }),
    removeOnExit: (path) => send({ op: 'remove', path }),
    close: () => pipe.end(),
  };
}
