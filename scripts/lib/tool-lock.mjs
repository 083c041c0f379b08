// One build lock for the Go tools cached in ~/.cache/cubicle-tools (kube tools, helm, OpenTofu):
// two bootstraps (two terminals, two engineers) never build the same tool at once, and the one
// that waits says whom it waits for. Each tool has its own lock file, so different tools may
// build side by side.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { dim, formatMs } from './ui.mjs';

const SAY_EVERY_MS = 15_000;

/** lockOwner is the pid recorded in a lock file while that process lives, else undefined (a stale lock). */
function lockOwner(lockFile) {
  try {
    const { pid } = JSON.parse(readFileSync(lockFile, 'utf8'));
    process.kill(pid, 0);
    return pid;
  } catch {
    return undefined;
  }
}

/**
 * withToolLock runs fn while holding `<dir>/<lockName>`, taken with O_EXCL; a lock whose owner
 * died is removed and taken. `what` names the build in the waiting message.
 */
export async function withToolLock({ dir, lockName, what, log }, fn) {
  const lockFile = join(dir, lockName);
  const waitAMoment = waiter(what, log);
  for (;;) {
    try {
      writeFileSync(lockFile, JSON.stringify({ pid: process.pid }), { flag: 'wx' });
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      const owner = lockOwner(lockFile);
      if (owner === undefined) {
        rmSync(lockFile, { force: true });
        continue;
      }
      await waitAMoment(owner);
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lockFile, { force: true });
  }
}

/**
 * waitForToolLock waits while a live process holds `<dir>/<lockName>` and never takes it: a
 * suite that only runs a tool (it does not build it) waits here for the build `npm test` started
 * beside Vitest. Returns at once when nobody holds the lock; says every 15 s whom it waits for.
 */
export async function waitForToolLock({ dir, lockName, what, log }) {
  const lockFile = join(dir, lockName);
  const waitAMoment = waiter(what, log);
  for (let owner = lockOwner(lockFile); owner !== undefined; owner = lockOwner(lockFile))
    await waitAMoment(owner);
}

/** waiter sleeps a second per call and says every 15 s whom it waits for, and for how long. */
function waiter(what, log) {
  const started = performance.now();
  let lastSaid = 0;
  return async (owner) => {
    if (performance.now() - lastSaid > SAY_EVERY_MS) {
      lastSaid = performance.now();
      log(
        dim(
          `  … waiting for process ${owner}, which is building ${what} (${formatMs(performance.now() - started)})`,
        ),
      );
    }
    await sleep(1000);
  };
}
