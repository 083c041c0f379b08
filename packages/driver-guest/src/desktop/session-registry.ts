import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxCgroup } from './sandbox-cgroup.js';

/** sessionDir is where a session keeps its runtime files; derived from the id so others can remove it. */
export const sessionDir = (id: string) => join(tmpdir(), `cubicle-desktop-${id}`);
export const SESSION_DIR_PREFIX = 'cubicle-desktop-';

/**
 * hostStageDir is where a sandbox's host stage really lives (its session directory links to it):
 * a bind's source path shows in the sandbox's /proc/self/mountinfo, and the session's would name
 * the desktop and where this machine keeps it. Derived from the id so whoever removes the
 * session removes it too.
 */
export const hostStageDir = (id: string) =>
  join(tmpdir(), `cubicle-stage-${createHash('sha256').update(id).digest('hex').slice(0, 24)}`);

/**
 * The session file names the process whose life is the session's (the X server, or a sandbox's
 * PID 1) with its start time: the session is live while that process is, which
 * listLiveDesktopIds checks without scanning every process on the machine.
 */
export const SESSION_FILE = 'session.json';
export interface SessionFile {
  id: string;
  xvfb?: { pid: number; startTime: string };
  /** A sandboxed session: its PID 1 (host pid) and the host uid it runs as (root launchers). */
  sandbox?: { pid: number; startTime: string; uid: number | null };
  /** A sandboxed session's cgroup (sandbox-cgroup.ts), when one could be made. */
  cgroup?: SandboxCgroup;
  /** The key of the staged guest code it runs (stage-guest-code.ts keeps that build). */
  code?: string;
}

/** lifeOf is the process a session file ties the session's life to. */
export const lifeOf = (record: SessionFile) => record.sandbox ?? record.xvfb ?? null;

// One process 'exit' listener for all sessions of this process (not one each: many desktops in
// one worker would pass Node's listener warning threshold).
export const exitHooks = new Set<() => void>();
process.on('exit', () => {
  for (const hook of exitHooks) hook();
});

/**
 * The stop() of every session this process started and has not stopped, by id. stopDesktopById
 * goes through it first: killing a session's processes from outside would leave its x11vnc
 * supervisor relaunching x11vnc for a display that is gone, and its exit hook holding process
 * group ids the system may hand to someone else.
 */
export const liveSessions = new Map<string, () => Promise<void>>();
