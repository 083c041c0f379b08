import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import dbus from 'dbus-next';

/** displayNumber extracts N from `:N` or `:N.S`. */
export function displayNumber(display: string): number {
  const match = /^:(\d+)/.exec(display);
  if (!match?.[1]) throw new Error(`not a local X display: ${display}`);
  return Number(match[1]);
}

/**
 * canConnect resolves whether a unix socket or a TCP port (on 127.0.0.1 unless `host` names
 * another local address) accepts a connection in time.
 */
export function canConnect(
  target: { path: string } | { port: number; host?: string },
  timeoutMs = 500,
): Promise<boolean> {
  return new Promise((resolve) => {
    const socket =
      'path' in target
        ? connect(target.path)
        : connect({ host: target.host ?? '127.0.0.1', port: target.port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** isDisplayUp checks that the X server's socket accepts connections (no X round trip). */
export function isDisplayUp(display: string): Promise<boolean> {
  return canConnect({ path: `/tmp/.X11-unix/X${displayNumber(display)}` });
}

export interface DisplayInfo {
  width: number;
  height: number;
  xServer: string | undefined;
}

/** readDisplayInfo asks xdpyinfo for the screen size and server release; null when it fails. */
export function readDisplayInfo(display: string): Promise<DisplayInfo | null> {
  return new Promise((resolve) => {
    execFile('xdpyinfo', ['-display', display], { timeout: 3000 }, (err, stdout) => {
      if (err) return resolve(null);
      const dims = /dimensions:\s+(\d+)x(\d+) pixels/.exec(stdout);
      if (!dims?.[1] || !dims[2]) return resolve(null);
      const vendor = /vendor release number:\s+(\d+)/.exec(stdout)?.[1];
      resolve({
        width: Number(dims[1]),
        height: Number(dims[2]),
        xServer: vendor ? formatRelease(vendor) : undefined,
      });
    });
  });
}

/** X.Org encodes its release as MMmmppss: 12101007 is 1.21.1.7. */
export function formatRelease(raw: string): string {
  const n = Number(raw);
  if (n < 10_000_000) return raw;
  const part = (div: number) => Math.floor(n / div) % 100;
  return `${Math.floor(n / 10_000_000)}.${part(100_000)}.${part(1000)}.${part(1)}`;
}

/** withTimeout rejects when a D-Bus call hangs (an activation that never completes). */
function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export interface A11yStatus {
  available: boolean;
  registryAvailable: boolean;
  address: string | null;
}

/**
 * probeA11y asks the session bus for the AT-SPI bus (`org.a11y.Bus.GetAddress`, served by the
 * desktop's launcher: start-a11y-bus.ts) and then pings the registry on that bus (which
 * activates at-spi2-registryd).
 * Every step has a deadline, and connections are closed before returning.
 */
export async function probeA11y(
  sessionBusAddress: string | undefined,
  timeoutMs = 2000,
): Promise<A11yStatus> {
  const down: A11yStatus = { available: false, registryAvailable: false, address: null };
  if (!sessionBusAddress) return down;
  let session: dbus.MessageBus | undefined;
  let a11y: dbus.MessageBus | undefined;
  try {
    session = dbus.sessionBus({ busAddress: sessionBusAddress });
    session.on('error', () => undefined);
    const reply = await withTimeout(
      session.call(
        new dbus.Message({
          destination: 'org.a11y.Bus',
          path: '/org/a11y/bus',
          interface: 'org.a11y.Bus',
          member: 'GetAddress',
        }),
      ),
      timeoutMs,
    );
    const address = reply?.body[0];
    if (typeof address !== 'string' || address === '') return down;
    a11y = dbus.sessionBus({ busAddress: address });
    a11y.on('error', () => undefined);
    const registry = await withTimeout(
      a11y.call(
        new dbus.Message({
          destination: 'org.a11y.atspi.Registry',
          path: '/org/a11y/atspi/registry',
          interface: 'org.freedesktop.DBus.Peer',
          member: 'Ping',
        }),
      ),
      timeoutMs,
    ).then(
      () => true,
      () => false,
    );
    return { available: true, registryAvailable: registry, address };
  } catch {
    return down;
  } finally {
    session?.disconnect();
    a11y?.disconnect();
  }
}

let driverVersion: string | undefined;
/** readDriverVersion is this package's version (src/ and dist/ both sit two levels below it). */
export function readDriverVersion(): string {
  if (driverVersion) return driverVersion;
  try {
    const pkg = JSON.parse(
      readFileSync(new URL('../../package.json', import.meta.url), 'utf8'),
    ) as {
      version?: string;
    };
    driverVersion = pkg.version ?? '0.0.0';
  } catch {
    driverVersion = '0.0.0';
  }
  return driverVersion;
}
