import { execFile, type ChildProcess } from 'node:child_process';
import type { Readable } from 'node:stream';
import { readFirstLine, spawnDetached, waitFor } from './spawn-detached.js';

export interface XvfbOptions {
  width: number;
  height: number;
  depth: 16 | 24;
  /** Keep Xvfb's GLX extension (Mesa): ~60 MB more RSS; Chromium and GTK3 render without it. */
  withGlx: boolean;
}

/**
 * startXvfb starts Xvfb on a free display. `-displayfd` makes the server itself pick the first
 * display whose lock file it can create exclusively, so concurrent launchers never share one,
 * and it writes the number only once it accepts connections.
 */
export async function startXvfb(
  options: XvfbOptions,
  env: Record<string, string | undefined>,
): Promise<{ child: ChildProcess; display: string }> {
  const args = [
    '-displayfd',
    '3',
    '-screen',
    '0',
    `${options.width}x${options.height}x${options.depth}`,
  ];
  args.push('-nolisten', 'tcp', '-noreset');
  if (!options.withGlx) args.push('-extension', 'GLX');
  const child = spawnDetached('Xvfb', args, env, ['ignore', 'ignore', 'ignore', 'pipe']);
  try {
    const line = await readFirstLine(child.stdio[3] as Readable, child, 'Xvfb to pick a display');
    if (!/^\d+$/.test(line)) throw new Error(`Xvfb announced an odd display: ${line}`);
    (child.stdio[3] as Readable).destroy();
    return { child, display: `:${line}` };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

/**
 * startSessionBus starts a private session dbus-daemon listening on a socket in the session's
 * own directory (not an abstract socket another session could guess), in the foreground so it
 * stays in our process group.
 */
export async function startSessionBus(
  socketPath: string,
  env: Record<string, string | undefined>,
): Promise<{ child: ChildProcess; address: string }> {
  const args = [
    '--session',
    '--nofork',
    '--nopidfile',
    `--address=unix:path=${socketPath}`,
    '--print-address=1',
  ];
  const child = spawnDetached('dbus-daemon', args, env, ['ignore', 'pipe', 'ignore']);
  try {
    const address = await readFirstLine(child.stdout as Readable, child, 'the session bus address');
    (child.stdout as Readable).resume(); // never let a full pipe block the bus
    return { child, address };
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

function hasWindowManager(display: string): Promise<boolean> {
  return new Promise((resolve) => {
    execFile(
      'xprop',
      ['-display', display, '-root', '_NET_SUPPORTING_WM_CHECK'],
      { timeout: 2000 },
      (err, stdout) => resolve(!err && /window id #/.test(stdout)),
    );
  });
}

/** startWindowManager starts openbox and waits until it has taken the screen (EWMH check window). */
export async function startWindowManager(
  display: string,
  env: Record<string, string | undefined>,
): Promise<ChildProcess> {
  const child = spawnDetached('openbox', ['--sm-disable'], env);
  await waitFor('openbox to manage the screen', () => hasWindowManager(display), {
    child,
    intervalMs: 25,
  });
  return child;
}
