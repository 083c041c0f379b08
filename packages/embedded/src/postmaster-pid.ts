// Reading postgres' own lock file, postmaster.pid: who runs a data directory, where its socket
// is, and whether it is ready. Lines: pid, data dir, start time, port, socket dir, listen
// address, shared memory key, status ("ready", "starting", "stopping").
import { readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
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

/** The processes a postgres of `dataDir` left (they chdir into it), its postmaster included. */
function serverProcesses(dataDir: string): number[] {
  let dir: string;
  try {
    dir = realpathSync(dataDir);
  } catch {
    return []; // no directory: nothing ran there
  }
  return readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number)
    .filter(
      (pid) =>
        pid !== process.pid &&
        isRunning(pid) &&
        processCwd(pid) === dir &&
        /^(\S*\/)?postgres\b/.test(processArgv(pid)[0] ?? ''),
    );
}

const ORPHAN_WAIT_MS = 10_000;

/**
 * awaitLeftoverBackends waits for what a killed postmaster left on `dataDir`: its children
 * (checkpointer, walwriter, a backend mid-query) see their parent gone only when they next look,
 * and while one still holds the old shared memory a new postmaster refuses to start ("pre-existing
 * shared memory block is still in use"; seen right after a kill -9). Called once no live
 * postmaster serves the directory; after 10 s the rest are killed, since they serve no one.
 */
export async function awaitLeftoverBackends(dataDir: string, log: LogFn): Promise<void> {
  let left = serverProcesses(dataDir);
  if (left.length === 0) return;
  log(`postgres: waiting for ${left.length} process(es) of the previous server to exit`);
  const deadline = Date.now() + ORPHAN_WAIT_MS;
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = serverProcesses(dataDir);
  }
  for (const pid of left) {
    log(`postgres: killing pid ${pid}, left by the previous server`);
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
  while (serverProcesses(dataDir).length > 0 && Date.now() < deadline + 2_000)
    await new Promise((r) => setTimeout(r, 50));
}
