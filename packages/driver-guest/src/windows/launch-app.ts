import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WindowLaunchRequest, WindowLaunchResponse } from '@cubicle/contract/guest';
import { AppError } from '@cubicle/contract/errors';
import { appCommand } from './desktop-apps.js';
import { findWindow, stackingOrder, toWindowInfo } from './list-windows.js';
import type { X11Display } from './x11/x11-display.js';

const POLL_MS = 40;

/** parentPid reads a process's parent from /proc; null once it is gone. */
async function parentPid(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'latin1');
    // The command name (field 2) may contain spaces and parentheses: parse after the last ')'.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return null;
  }
}

/** isSelfOrDescendant walks up from `pid` looking for `ancestor`. */
export async function isSelfOrDescendant(pid: number, ancestor: number): Promise<boolean> {
  let current: number | null = pid;
  for (let hops = 0; current !== null && current > 1 && hops < 64; hops += 1) {
    if (current === ancestor) return true;
    current = await parentPid(current);
  }
  return false;
}

/**
 * launchApp starts an app in its own session and process group (so closing with `force` and
 * stopping the desktop can end it as a group) and waits for a new top-level window whose
 * `_NET_WM_PID` is the app or a descendant of it.
 */
export async function launchApp(
  x11: X11Display,
  env: Record<string, string | undefined>,
  req: WindowLaunchRequest,
): Promise<WindowLaunchResponse> {
  const started = performance.now();
  const before = new Set(await stackingOrder(x11));
  const home = req.env?.HOME ?? env.HOME ?? env.XDG_RUNTIME_DIR ?? '/tmp';
  const named = 'app' in req ? await appCommand(req.app, home, req.url) : null;
  const argv = 'argv' in req ? req.argv : (named?.argv ?? []);
  const child = spawn(argv[0]!, argv.slice(1), {
    cwd: req.cwd ?? (named ? home : undefined),
    env: { ...env, ...named?.env, ...req.env },
    detached: true,
    stdio: 'ignore',
  });
  let exit: { code: number | null; signal: string | null } | null = null;
  child.on('exit', (code, signal) => (exit = { code, signal }));
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', resolve);
    child.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT' || err.code === 'EACCES'
          ? new AppError('not_found', `cannot start ${argv[0]}: ${err.code}`)
          : err,
      ),
    );
  });
  child.unref();
  const pid = child.pid!;
  const duration = () => performance.now() - started;
  if (req.wait_for_window_ms === 0) return { pid, window_wait: 'skipped', duration_ms: duration() };
  const deadline = started + req.wait_for_window_ms;
  for (;;) {
    for (const id of await stackingOrder(x11)) {
      if (before.has(id)) continue;
      const win = await findWindow(x11, id);
      if (win?.pid && (await isSelfOrDescendant(win.pid, pid)))
        return { pid, window_wait: 'found', window: toWindowInfo(win), duration_ms: duration() };
    }
    const ended = exit as { code: number | null; signal: string | null } | null;
    if (ended)
      return {
        pid,
        window_wait: 'exited',
        exit_code: ended.code,
        signal: ended.signal,
        duration_ms: duration(),
      };
    if (performance.now() >= deadline)
      return { pid, window_wait: 'timed_out', duration_ms: duration() };
    await sleep(POLL_MS);
  }
}
