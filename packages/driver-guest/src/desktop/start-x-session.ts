import { execFile, type ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
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
 * The session bus's configuration: Debian's session bus, which also activates the AT-SPI
 * registry, so the session bus is the accessibility bus too (start-a11y-bus.ts says why).
 */
const SESSION_BUS_CONFIG = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <include>/usr/share/dbus-1/session.conf</include>
  <servicedir>/usr/share/dbus-1/accessibility-services</servicedir>
</busconfig>
`;

/**
 * startSessionBus starts a private session dbus-daemon listening on a socket in the session's
 * own directory (not an abstract socket another session could guess), its configuration next
 * to it.
 */
export async function startSessionBus(
  socketPath: string,
  env: Record<string, string | undefined>,
): Promise<{ child: ChildProcess; address: string }> {
  const config = `${socketPath}.conf`;
  await writeFile(config, SESSION_BUS_CONFIG, { mode: 0o600 });
  return startBusDaemon([`--config-file=${config}`], socketPath, env);
}

/**
 * startBusDaemon starts a dbus-daemon with `configArgs` on `socketPath`, in the foreground so it
 * stays in our process group, and returns once it has printed its address.
 */
export async function startBusDaemon(
  configArgs: string[],
  socketPath: string,
  env: Record<string, string | undefined>,
): Promise<{ child: ChildProcess; address: string }> {
  const args = [
    ...configArgs,
    '--nofork',
    '--nopidfile',
    `--address=unix:path=${socketPath}`,
    '--print-address=1',
  ];
  const child = spawnDetached('dbus-daemon', args, env, ['ignore', 'pipe', 'ignore']);
  try {
    const address = await readFirstLine(child.stdout as Readable, child, 'a bus address');
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

/**
 * The window manager's settings. Fluxbox rather than openbox: the same EWMH the windows
 * capability reads (client lists, active window, close, hidden state, frame extents) and title
 * bars, in 11 MB of RSS against openbox's 24 (openbox links librsvg, 4.5 MB of it resident alone;
 * measured idle under Xvfb). The toolbar stays off, as openbox had none, and one workspace keeps
 * every window on screen. `configVersion` is the current one: an older or missing one makes
 * fluxbox run fluxbox-update_configs, rewrite the keys file and restart itself.
 */
const FLUXBOX_INIT = (dir: string) =>
  [
    'session.configVersion: 13',
    `session.keyFile: ${join(dir, 'fluxbox-keys')}`,
    'session.menuFile: /etc/X11/fluxbox/fluxbox-menu',
    'session.appsFile: /dev/null',
    // A flat style: Debian's default (Squared_for_Debian) loads pixmaps, ~50 ms more start-up.
    'session.styleFile: /usr/share/fluxbox/styles/bora_black',
    `session.styleOverlay: ${join(dir, 'fluxbox-overlay')}`,
    'session.screen0.toolbar.visible: false',
    'session.screen0.slit.autoHide: true',
    'session.screen0.workspaces: 1',
    'session.screen0.focusNewWindows: true',
  ].join('\n');

const FLUXBOX_OVERLAY = [
  // The style's wallpaper runs fbsetbg (ImageMagick's `display`, which pops up an error box).
  'background: none',
  // At the style's 18 px the title's underscores are clipped: "my_file" would read "my file".
  'window.font: DejaVu Sans-8',
  'window.title.height: 22',
].join('\n');

/** The usual bindings (Alt+Tab, Alt+F4, title-bar drag, Alt+drag) and nothing that execs. */
const FLUXBOX_KEYS = [
  'OnDesktop Mouse1 :HideMenus',
  'OnDesktop Mouse3 :RootMenu',
  'OnTitlebar Mouse1 :MacroCmd {Focus} {Raise} {ActivateTab}',
  'OnTitlebar Move1 :StartMoving',
  'OnLeftGrip Move1 :StartResizing bottomleft',
  'OnRightGrip Move1 :StartResizing bottomright',
  'OnWindowBorder Move1 :StartMoving',
  'OnTitlebar Double Mouse1 :Maximize',
  'OnTitlebar Mouse3 :WindowMenu',
  'OnWindow Mod1 Mouse1 :MacroCmd {Raise} {Focus} {StartMoving}',
  'OnWindow Mod1 Mouse3 :MacroCmd {Raise} {Focus} {StartResizing NearestCorner}',
  'Mod1 Tab :NextWindow {groups} (workspace=[current])',
  'Mod1 Shift Tab :PrevWindow {groups} (workspace=[current])',
  'Mod1 F4 :Close',
  'Mod1 F9 :Minimize',
  'Mod1 F10 :Maximize',
  'Mod1 F11 :Fullscreen',
].join('\n');

/**
 * startWindowManager starts fluxbox with its settings in `configDir` (the session's own
 * directory) and waits until it has taken the screen (EWMH check window).
 */
export async function startWindowManager(
  display: string,
  env: Record<string, string | undefined>,
  configDir: string,
): Promise<ChildProcess> {
  const init = join(configDir, 'fluxbox-init');
  // A first run (no ~/.fluxbox, as in every fresh sandbox home) copies Debian's default init
  // over the file given with -rc: its style's wallpaper then runs fbsetbg, whose failure left an
  // xmessage error box on the first screen. An existing ~/.fluxbox keeps our init.
  if (env.HOME) await mkdir(join(env.HOME, '.fluxbox'), { recursive: true, mode: 0o700 });
  await Promise.all([
    writeFile(init, `${FLUXBOX_INIT(configDir)}\n`, { mode: 0o600 }),
    writeFile(join(configDir, 'fluxbox-overlay'), `${FLUXBOX_OVERLAY}\n`, { mode: 0o600 }),
    writeFile(join(configDir, 'fluxbox-keys'), `${FLUXBOX_KEYS}\n`, { mode: 0o600 }),
  ]);
  const child = spawnDetached('fluxbox', ['-rc', init], env);
  await waitFor('the window manager to manage the screen', () => hasWindowManager(display), {
    child,
    intervalMs: 25,
  });
  return child;
}
