// Reading postgres' own lock file, postmaster.pid: who runs a data directory, where its socket
// is, and whether it is ready. Lines: pid, data dir, start time, port, socket dir, listen
// address, shared memory key, status ("ready", "starting", "stopping").
import { readFileSync, realpathSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { isRunning, processArgv, processCwd, processStartTime } from './proc.js';
import type { LogFn } from './service.js';

export interface Postmaster {
  pid: number;
  startTime: string | undefined;
  socketDir: string;
  status: string;
}

function readLines(dataDir: string): string[] | undefined {
  try {
    return readFileSync(join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
  } catch {
    return undefined;
  }
}

/** readPostmaster parses postmaster.pid without judging whether its pid is alive. */
export function readPostmaster(dataDir: string): Postmaster | undefined {
  const lines = readLines(dataDir);
  const pid = Number(lines?.[0]);
  if (!lines || !Number.isInteger(pid)) return undefined;
  return {
    pid,
    startTime: processStartTime(pid),
    socketDir: lines[4]?.trim() ?? '',
    status: lines[7]?.trim() ?? '',
  };
}

/**
 * findLivePostmaster returns the postgres serving `dataDir`, or undefined. A pid file whose process
 * is gone, or whose pid now belongs to an unrelated process (pid reuse after a crash), is stale:
 * it is removed together with the short socket dir that run had made under /tmp.
 */
export function findLivePostmaster(dataDir: string, log: LogFn): Postmaster | undefined {
  const recorded = readPostmaster(dataDir);
  if (!recorded) return undefined;
  const isOurs =
    isRunning(recorded.pid) &&
    processCwd(recorded.pid) === realpathSync(dataDir) &&
    processArgv(recorded.pid).some((arg) => arg.endsWith('postgres'));
  if (isOurs) return recorded;
  log(`postgres: removing stale postmaster.pid (pid ${recorded.pid} is not a running postgres)`);
  rmSync(join(dataDir, 'postmaster.pid'), { force: true });
  if (recorded.socketDir.startsWith('/tmp/cubicle-pg-')) {
    rmSync(recorded.socketDir, { recursive: true, force: true });
  }
  return undefined;
}
