import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** WindowProps is what the a11y core needs to know about an X11 top-level window. */
export interface WindowProps {
  windowId: number;
  title: string;
  pid: number | null;
  /** Screen geometry of the client area, when xwininfo could read it. */
  geometry: { x: number; y: number; w: number; h: number } | null;
}

/**
 * readWindowProps reads title and pid (EWMH) and geometry of one window with xprop/xwininfo.
 * Returns null when the window does not exist. It costs two short processes (~5 ms); the
 * windows module of the driver can replace it once it offers the same facts in-process.
 */
export async function readWindowProps(
  display: string,
  windowId: number,
): Promise<WindowProps | null> {
  const env = { DISPLAY: display, PATH: '/usr/bin:/bin' };
  const id = `0x${windowId.toString(16)}`;
  try {
    const [props, info] = await Promise.all([
      run('xprop', ['-id', id, '_NET_WM_PID', '_NET_WM_NAME', 'WM_NAME'], { env, timeout: 5000 }),
      run('xwininfo', ['-id', id], { env, timeout: 5000 }),
    ]);
    const pidMatch = /_NET_WM_PID\(CARDINAL\) = (\d+)/.exec(props.stdout);
    const title =
      parseXpropString(/_NET_WM_NAME\(UTF8_STRING\) = (".*")$/m.exec(props.stdout)?.[1]) ??
      parseXpropString(/WM_NAME\([A-Z_]+\) = (".*")$/m.exec(props.stdout)?.[1]) ??
      '';
    const num = (label: string) =>
      Number(new RegExp(`${label}:\\s+(-?\\d+)`).exec(info.stdout)?.[1]);
    const [x, y, w, h] = [
      num('Absolute upper-left X'),
      num('Absolute upper-left Y'),
      num('Width'),
      num('Height'),
    ];
    const geometry = [x, y, w, h].every(Number.isFinite) ? { x, y, w, h } : null;
    return { windowId, title, pid: pidMatch ? Number(pidMatch[1]) : null, geometry };
  } catch {
    return null;
  }
}

// xprop prints strings C-escaped inside double quotes; JSON decodes the common escapes.
function parseXpropString(quoted: string | undefined): string | null {
  if (quoted === undefined) return null;
  try {
    return JSON.parse(quoted) as string;
  } catch {
    return quoted.slice(1, -1);
  }
}
