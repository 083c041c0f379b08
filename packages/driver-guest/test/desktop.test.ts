import { spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import dbus from 'dbus-next';
import { describe, expect, it } from 'vitest';
import { HealthzResponse } from '@cubicle/contract/guest';
import {
  listDesktopIds,
  listLiveDesktopIds,
  stopDesktopById,
} from '../src/desktop/find-desktops.js';
import { rfbBanner } from './helpers/rfb-banner.js';
import { rfbFirstFrame } from './helpers/rfb-first-frame.js';
import {
  SESSION_FILE,
  sessionDir,
  startDesktop,
  type DesktopSession,
} from '../src/desktop/start-desktop.js';
import { isAlive } from './helpers/build-guest.js';
import { viewerPreambleOfToken } from '../src/vnc/viewer-preamble.js';

// A GTK3 window, named so the test can find it on the accessibility bus.
const gtkApp = (name: string) => `
import gi
gi.require_version("Gtk", "3.0")
from gi.repository import GLib, Gtk
GLib.set_prgname("${name}")
w = Gtk.Window(title="Probe")
w.add(Gtk.Button(label="Press"))
w.connect("destroy", Gtk.main_quit)
w.show_all()
print("READY", flush=True)
Gtk.main()
`;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** a11yAppNames lists the application names registered with the AT-SPI registry. */
async function a11yAppNames(address: string): Promise<string[]> {
  const bus = dbus.sessionBus({ busAddress: address });
  const call = async (
    destination: string,
    path: string,
    iface: string,
    member: string,
    signature = '',
    body: unknown[] = [],
  ) =>
    (
      await bus.call(
        new dbus.Message({ destination, path, interface: iface, member, signature, body }),
      )
    )?.body ?? [];
  try {
    const [children] = (await call(
      'org.a11y.atspi.Registry',
      '/org/a11y/atspi/accessible/root',
      'org.a11y.atspi.Accessible',
      'GetChildren',
    )) as [[string, string][]];
    const names: string[] = [];
    for (const [name, path] of children) {
      const [value] = (await call(name, path, 'org.freedesktop.DBus.Properties', 'Get', 'ss', [
        'org.a11y.atspi.Accessible',
        'Name',
      ])) as [dbus.Variant];
      names.push(String(value.value));
    }
    return names;
  } finally {
    bus.disconnect();
  }
}

const cmdline = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
};

/** processesMentioning lists live processes whose environment contains `text`. */
async function processesMentioning(text: string): Promise<number[]> {
  const hits: number[] = [];
  for (const name of await readdir('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const environ = await readFile(`/proc/${name}/environ`).catch(() => null);
    if (environ?.includes(text) && isAlive(Number(name))) hits.push(Number(name));
  }
  return hits;
}

async function healthz(session: DesktopSession) {
  const res = await fetch(`${session.guestUrl}/healthz`);
  return HealthzResponse.parse(await res.json());
}

describe('desktop launcher', () => {
  it('starts a complete session that a GTK app joins, and stop() leaves no process behind', async () => {
    const session = await startDesktop();
    let app: ReturnType<typeof spawn> | undefined;
    const apps: ReturnType<typeof spawn>[] = [];
    try {
      expect(session.display).toMatch(/^:\d+$/);
      expect(existsSync(`/tmp/.X11-unix/X${session.display.slice(1)}`)).toBe(true);
      const preamble = viewerPreambleOfToken(session.guestToken);
      // Without the viewer credential the VNC port says nothing, not even its banner; a wrong
      // one is hung up on.
      await expect(rfbBanner(session.vncPort, '127.0.0.1', undefined, 1000)).rejects.toThrow(
        'no banner',
      );
      await expect(
        rfbBanner(session.vncPort, '127.0.0.1', viewerPreambleOfToken('x'.repeat(64))),
      ).rejects.toThrow('closed after 0 B');
      expect(await rfbBanner(session.vncPort, '127.0.0.1', preamble)).toBe('RFB 003.008\n');
      // A probe that reads the banner and leaves does not start x11vnc; a viewer does.
      expect(session.pids.x11vnc).toBeNull();
      expect(await healthz(session)).toMatchObject({
        status: 'ok',
        display: { name: session.display, available: true, width: 1280, height: 800 },
        a11y_bus: { available: true, registry_available: true },
        vnc_port: session.vncPort,
      });
      const unauthenticated = await fetch(`${session.guestUrl}/v1/files/stat`, { method: 'POST' });
      expect(unauthenticated.status).toBe(401);

      const startApp = async (name: string, env: Record<string, string>) => {
        const child = spawn('/usr/bin/python3', ['-c', gtkApp(name)], {
          env,
          detached: true,
          stdio: ['ignore', 'pipe', 'ignore'],
        });
        apps.push(child);
        await new Promise<void>((resolve, reject) => {
          child.stdout!.on('data', (d: Buffer) => d.toString().includes('READY') && resolve());
          child.once('exit', () => reject(new Error('the GTK app exited')));
        });
        return child;
      };
      app = await startApp('cubicle-desktop-probe', session.env);
      // An app that was not given the a11y bus's address finds the same bus (the root window's
      // AT_SPI_BUS, then org.a11y.Bus): no second bus, no at-spi-bus-launcher.
      const { AT_SPI_BUS_ADDRESS: _unused, ...bareEnv } = session.env;
      await startApp('cubicle-desktop-bare', bareEnv);
      let names: string[] = [];
      for (let i = 0; i < 100 && names.length < 2; i += 1) {
        names = (await a11yAppNames(session.a11yBusAddress)).filter((n) =>
          n.startsWith('cubicle-desktop-'),
        );
        await sleep(50);
      }
      expect(names.sort()).toEqual(['cubicle-desktop-bare', 'cubicle-desktop-probe']);
      await expect(rfbFirstFrame({ port: session.vncPort }, 1500)).rejects.toThrow();
      expect(await rfbFirstFrame({ port: session.vncPort }, 15_000, preamble)).toMatchObject({
        version: 'RFB 003.008\n',
        width: 1280,
        height: 800,
        rect: { x: 0, y: 0, w: 1280, h: 800 },
      });

      const processes = await session.listProcesses();
      const commands = processes.map(cmdline).join('\n');
      for (const part of [
        'Xvfb',
        'dbus-daemon --config-file',
        'fluxbox',
        'x11vnc',
        'at-spi2-registryd',
      ]) {
        expect(commands).toContain(part);
      }
      // One bus for the session and AT-SPI, no launcher: what an idle desktop saves.
      expect(commands).not.toContain('at-spi-bus-launcher');
      expect(commands.match(/dbus-daemon/g)).toHaveLength(1);
      expect(session.a11yBusAddress).toBe(session.dbusAddress);
      expect(processes).toContain(app.pid);
      expect(processes).toContain(session.pids.xvfb);

      await session.stop();
      for (const pid of processes) expect(isAlive(pid), `${pid} ${cmdline(pid)}`).toBe(false);
      expect(await processesMentioning(session.id)).toEqual([]);
      expect(await processesMentioning(session.dbusAddress.split(',')[0]!)).toEqual([]);
      expect(await processesMentioning(session.a11yBusAddress.split(',')[0]!)).toEqual([]);
      expect(existsSync(session.dbusAddress.split('=')[1]!.split(',')[0]!)).toBe(false);
    } finally {
      await session.stop();
      for (const child of apps)
        if (child.pid && isAlive(child.pid)) process.kill(-child.pid, 'SIGKILL');
    }
  });

  it('starts x11vnc once for concurrent first viewers, each of which gets a frame', async () => {
    const session = await startDesktop({ daemon: 'none' });
    try {
      const frames = await Promise.all(
        [0, 1, 2].map(() =>
          rfbFirstFrame(
            { port: session.vncPort },
            15_000,
            viewerPreambleOfToken(session.guestToken),
          ),
        ),
      );
      for (const frame of frames)
        expect(frame.rect).toEqual({ x: 0, y: 0, w: 1280, h: 800, encoding: 0 });
      const vncs = (await session.listProcesses()).filter((pid) =>
        cmdline(pid).startsWith('x11vnc '),
      );
      expect(vncs).toEqual([session.pids.x11vnc]);
    } finally {
      await session.stop();
    }
  });

  it('restarts x11vnc when it dies, on the same port', async () => {
    const session = await startDesktop({ daemon: 'in-process' });
    try {
      await rfbFirstFrame(
        { port: session.vncPort },
        15_000,
        viewerPreambleOfToken(session.guestToken),
      );
      const first = session.pids.x11vnc;
      expect(first).not.toBeNull();
      process.kill(first!, 'SIGKILL');
      let health = await healthz(session);
      for (
        let i = 0;
        i < 200 && (health.vnc_port === null || session.pids.x11vnc === first);
        i += 1
      ) {
        await sleep(25);
        health = await healthz(session);
      }
      expect(session.pids.x11vnc).not.toBe(first);
      expect(health.vnc_port).toBe(session.vncPort);
      expect(
        (
          await rfbFirstFrame(
            { port: session.vncPort },
            15_000,
            viewerPreambleOfToken(session.guestToken),
          )
        ).width,
      ).toBe(1280);
    } finally {
      await session.stop();
    }
  });

  it('stopDesktopById of a session this process started stops it for good (no x11vnc relaunch)', async () => {
    const id = `stopbyid-${process.pid}-${Date.now()}`;
    const session = await startDesktop({ id, daemon: 'none' });
    await rfbFirstFrame(
      { port: session.vncPort },
      15_000,
      viewerPreambleOfToken(session.guestToken),
    );
    const vncPid = session.pids.x11vnc;
    expect(vncPid).not.toBeNull();
    await stopDesktopById(id);
    expect(isAlive(vncPid!)).toBe(false);
    // The supervisor's relaunches come 100, 250, 500 ms after x11vnc exits: watch past them for
    // any new x11vnc (each would fail on the gone display, but keep respawning).
    const seen = new Set<number>();
    for (let i = 0; i < 60; i++) {
      const pid = session.pids.x11vnc;
      if (pid !== null && pid !== vncPid) seen.add(pid);
      await sleep(20);
    }
    expect([...seen]).toEqual([]);
    expect(await listDesktopIds()).not.toContain(id);
  });

  it('listLiveDesktopIds lists a session while its recorded X server lives', async () => {
    const prefix = `live-${process.pid}-${Date.now()}`;
    const session = await startDesktop({ id: `${prefix}-a`, daemon: 'none' });
    try {
      expect(await listLiveDesktopIds(prefix)).toEqual([`${prefix}-a`]);
      expect(await listLiveDesktopIds(`${prefix}-other`)).toEqual([]);
      // A record naming a pid that is now another process (another start time) is not a session.
      const file = `${sessionDir(`${prefix}-a`)}/${SESSION_FILE}`;
      const record = JSON.parse(readFileSync(file, 'utf8'));
      writeFileSync(file, JSON.stringify({ ...record, xvfb: { ...record.xvfb, startTime: '1' } }));
      expect(await listLiveDesktopIds(prefix)).toEqual([]);
      writeFileSync(file, JSON.stringify(record));
      expect(await listLiveDesktopIds(prefix)).toEqual([`${prefix}-a`]);
      // The X server dying makes the desktop unusable: it leaves the list, though its directory
      // and other processes are still there (the marker scan still sees them).
      process.kill(session.pids.xvfb, 'SIGKILL');
      for (let i = 0; i < 100 && (await listLiveDesktopIds(prefix)).length > 0; i++)
        await sleep(20);
      expect(await listLiveDesktopIds(prefix)).toEqual([]);
      expect(await listDesktopIds()).toContain(`${prefix}-a`);
    } finally {
      await session.stop();
    }
    expect(await listDesktopIds()).not.toContain(`${prefix}-a`);
  });

  it('gives concurrent launchers distinct displays', async () => {
    const sessions = await Promise.all([
      startDesktop({ daemon: 'none' }),
      startDesktop({ daemon: 'none' }),
    ]);
    try {
      expect(sessions[0].display).not.toBe(sessions[1].display);
      expect(sessions[0].guestUrl).toBeNull();
    } finally {
      await Promise.all(sessions.map((s) => s.stop()));
    }
    for (const s of sessions) expect(isAlive(s.pids.xvfb)).toBe(false);
  });

  it('runs the driver as a child process when asked (as in a sandbox image)', async () => {
    const session = await startDesktop({ daemon: 'child' });
    try {
      const daemon = session.pids.daemon!;
      expect(daemon).not.toBe(process.pid);
      expect(await healthz(session)).toMatchObject({ status: 'ok', vnc_port: session.vncPort });
      // The child daemon's health probe of the VNC port does not start x11vnc.
      expect(session.pids.x11vnc).toBeNull();
      const res = await fetch(`${session.guestUrl}/v1/shell/run`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${session.guestToken}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ command: 'echo "$DISPLAY"' }),
      });
      expect(await res.json()).toMatchObject({ exit_code: 0, stdout: `${session.display}\n` });
      await session.stop();
      expect(isAlive(daemon)).toBe(false);
    } finally {
      await session.stop();
    }
  });
});
