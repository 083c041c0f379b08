import { readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { thawBeforeStop } from './pause-sandbox.js';
import { releaseSandboxResources } from './sandbox-resources.js';
import { releaseSandboxUid } from './sandbox-uid.js';
import {
  environOf,
  forEachProcess,
  MARKER_VAR,
  killSession,
  processStartTime,
  readStatSync,
} from './session-processes.js';
import {
  hostStageDir,
  lifeOf,
  liveSessions,
  SESSION_DIR_PREFIX,
  SESSION_FILE,
  sessionDir,
  type SessionFile,
} from './session-registry.js';

/**
 * listLiveDesktopIds returns the ids (starting with `idPrefix`) of sessions whose X server is
 * still the process recorded at start: a directory listing and one /proc read per session, cheap
 * enough for a periodic sweep. A session whose X server died is not listed (it is unusable);
 * processes of a session whose directory is gone are found only by listDesktopIds.
 */
export async function listLiveDesktopIds(idPrefix = ''): Promise<string[]> {
  const wanted = SESSION_DIR_PREFIX + idPrefix;
  const names = (await readdir(tmpdir()).catch(() => [] as string[])).filter((n) =>
    n.startsWith(wanted),
  );
  const live = await Promise.all(
    names.map(async (name) => {
      const id = name.slice(SESSION_DIR_PREFIX.length);
      try {
        const file = await readFile(join(tmpdir(), name, SESSION_FILE), 'utf8');
        const record = JSON.parse(file) as SessionFile;
        const life = lifeOf(record);
        if (record.id !== id || !life) return null;
        return (await processStartTime(life.pid)) === life.startTime ? id : null;
      } catch {
        return null; // starting (no file yet), stopping, or not ours
      }
    }),
  );
  return live.filter((id): id is string => id !== null).sort();
}

/**
 * listDesktopIds returns the ids of the desktop sessions running on this machine, read from the
 * marker every process of a session carries in its environment. Used by the local backend to
 * find desktops its database does not know (or no longer runs) after a restart.
 */
export async function listDesktopIds(): Promise<string[]> {
  const prefix = `${MARKER_VAR}=`;
  const ids = new Set<string>();
  await forEachProcess((pid) => {
    const info = readStatSync(pid);
    if (!info || info.state === 'Z' || info.state === 'X') return;
    const environ = environOf(pid);
    if (!environ) return;
    for (const entry of environ.toString('utf8').split('\0')) {
      if (entry.startsWith(prefix)) ids.add(entry.slice(prefix.length));
    }
  });
  return [...ids].sort();
}

/**
 * stopDesktopById stops a session started (possibly by another, now dead, process) with
 * `startDesktop({ id })`: every process carrying its marker, then its directory. Idempotent.
 * Only the marker is trusted, not remembered process ids, which the system may have reused.
 */
export async function stopDesktopById(id: string): Promise<void> {
  // A session of this process stops through its own stop() (supervisor first); the marker scan
  // below then catches anything left, and sessions of other processes.
  await liveSessions.get(id)?.();
  const record = await readFile(join(sessionDir(id), SESSION_FILE), 'utf8')
    .then((text) => JSON.parse(text) as SessionFile)
    .catch(() => null);
  // A sandbox ends with its PID 1 (the marker scan below finds it too, without the directory).
  const sandbox = record?.id === id ? record.sandbox : undefined;
  // A paused desktop's processes die only once thawed.
  await thawBeforeStop(id);
  if (sandbox && (await processStartTime(sandbox.pid)) === sandbox.startTime) {
    try {
      process.kill(sandbox.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
  await killSession(id, new Set());
  // Its cgroup: recorded in the session file, or found where this process would have made it
  // (an orphan whose directory is gone).
  await releaseSandboxResources(id, record?.id === id ? record.cgroup : undefined);
  await rm(sessionDir(id), { recursive: true, force: true });
  await rm(hostStageDir(id), { recursive: true, force: true });
  if (sandbox?.uid != null) await releaseSandboxUid(id, sandbox.uid);
}
